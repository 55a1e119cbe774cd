"""The OOB plane's diagram: the management switches under the OOB core, what each one serves, its port budget.

Layout, top to bottom: the title and a legend (cables by kind with their count and speed, the plane's MTU and
addressing, DHCP lease); the core; then rows of at most ``MAX_PER_ROW`` management switches in plan order (the
management rack first, then by scalable unit and rack), each hanging from its row's bus by one line labelled with its
uplink count and speed. Under each switch, what it connects: BMCs, switch management ports, other devices (PDUs,
console servers). Placed by arithmetic in one pass over the OOB cables, deterministically.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from fabric.plan.oob.types import OobPlan, OobSwitchPlan
from fabric.plan.types import ClusterPlan
from fabric.render.diagrams import _svg

MAX_PER_ROW = 8  # 8 boxes of ~200 px fit a 1920-px wide screen
_PAD, _BOX_H, _GAP, _ROW_GAP = 20.0, 34.0, 16.0, 70.0
_FILL = {"core": "#d0e1f9", "switch": "#e3f2d9"}
_KIND_LABEL = {"bmc": "BMC", "switch-mgmt": "switch mgmt", "device": "device", "uplink": "uplink"}


def oob_svg(plan: ClusterPlan) -> str | None:
    """The OOB plane's SVG, or None when the plan has no OOB network.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> svg = oob_svg(plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml")))
        >>> ">oob-su1</text>" in svg, ">oob-core</text>" in svg
        (True, True)
    """
    oob = plan.oob
    if oob is None or not oob.switches:
        return None
    serves: dict[str, Counter[str]] = defaultdict(Counter)
    speeds: dict[str, set[int]] = defaultdict(set)
    for link in oob.links:
        serves[link.a_device][link.kind] += 1
        speeds[link.kind].add(link.speed_gbps)
    legend = _legend(plan, oob, serves, speeds)
    box_w = max(
        170.0,
        *(_svg.text_width(s.name, 12) + _svg.text_width(_budget(s), 10) + 24 for s in oob.switches),
        *(_svg.text_width(_served(serves[s.name]), 10) + 8 for s in oob.switches),
    )
    per_row = min(MAX_PER_ROW, len(oob.switches))
    content_w = per_row * box_w + (per_row - 1) * _GAP
    width = 2 * _PAD + max(content_w, *(_svg.text_width(text, size) for text, size in legend))
    out: list[str] = []
    y = _PAD
    for text, size in legend:
        y += size + 6
        out.append(_svg.text(_PAD, y, text, size, weight="bold" if size > 12 else "normal"))
    y += 14
    core_w = max(_svg.text_width(oob.core, 12) + 24, 120.0)
    core_x = _PAD + (content_w - core_w) / 2
    hover = _svg.tooltip(f"{oob.core}: the OOB core every management switch uplinks to")
    out.append("<g>" + hover + _svg.rect(core_x, y, core_w, _BOX_H - 10, _FILL["core"]))
    out.append(_svg.text(core_x + core_w / 2, y + 16, oob.core, 12, anchor="middle") + "</g>")
    core_bottom = y + _BOX_H - 10
    core_x = core_x + core_w / 2
    wraps = len(oob.switches) > per_row
    left = _PAD / 2 if wraps else _PAD + box_w / 2  # later rows' buses join the first on the left margin, past no box
    y = core_bottom + 30
    out.append(_svg.line([(core_x, core_bottom), (core_x, y)], "#333", 2))
    first_bus = y
    for start in range(0, len(oob.switches), per_row):
        row = oob.switches[start : start + per_row]
        bus_y = y
        centres = [_PAD + i * (box_w + _GAP) + box_w / 2 for i in range(len(row))]
        right = max(centres[-1], core_x) if bus_y == first_bus else centres[-1]
        out.append(_svg.line([(left, bus_y), (right, bus_y)], "#333", 2))
        if bus_y > first_bus:
            out.append(_svg.line([(left, first_bus), (left, bus_y)], "#333", 2))
        top = bus_y + 30
        for centre, switch in zip(centres, row, strict=True):
            x = centre - box_w / 2
            uplinks = serves[switch.name]["uplink"]
            out.append(_svg.line([(centre, bus_y), (centre, top)], "#333", 1.5 + min(uplinks, 4) * 0.5))
            out.append(_svg.text(centre + 4, bus_y + 18, f"{uplinks} × {_speeds(speeds['uplink'])}", 10, fill="#555"))
            out.append(_switch_box(x, top, box_w, switch, serves[switch.name]))
        y = top + _BOX_H + 22 + _ROW_GAP - 40
    title = f"{plan.name}: oob plane topology"
    return _svg.document(width, y + _PAD - 20, title, out)


def _legend(plan: ClusterPlan, oob: OobPlan, serves: dict[str, Counter[str]], speeds: dict[str, set[int]]) -> list[tuple[str, float]]:
    totals: Counter[str] = Counter()
    for counts in serves.values():
        totals.update(counts)
    cables = ", ".join(f"{totals[k]} × {_speeds(speeds[k])} {_KIND_LABEL[k]}" for k in ("bmc", "switch-mgmt", "device", "uplink") if totals[k])
    plane = next((p for p in plan.planes if p.name == "oob"), None)
    addressing = f"MTU {plane.mtu}, {plane.cidr}" if plane is not None else "no oob plane addresses"
    models = Counter(f"{s.model} ({s.nos})" for s in oob.switches)
    return [
        (f"{plan.name}: oob plane, {len(oob.switches)} management switches, one per {oob.placement}", 15.0),
        (f"switches: {', '.join(f'{n} × {m}' for m, n in sorted(models.items()))}; cables: {cables}", 11.0),
        (f"oob plane: {addressing}; addresses by DHCP (lease {oob.dhcp_lease_seconds} s); uplinks to {oob.core}", 11.0),
        ("box: access ports used / ports, ↑ uplinks; under it, what the switch connects", 11.0),
    ]


def _switch_box(x: float, y: float, w: float, switch: OobSwitchPlan, serves: Counter[str]) -> str:
    details = f"{switch.name}: {switch.model} ({switch.nos}) at {switch.location}, mgmt {switch.mgmt_interface} {switch.mgmt_address}"
    return (
        "<g>"
        + _svg.tooltip(details)
        + _svg.rect(x, y, w, _BOX_H, _FILL["switch"])
        + _svg.text(x + 6, y + 14.5, switch.name, 12)
        + _svg.text(x + w - 5, y + 14, _budget(switch), 10, anchor="end", fill="#555")
        + _svg.text(x + 6, y + 28, switch.location, 10, fill="#555")
        + "</g>"
        + _svg.text(x + 4, y + _BOX_H + 14, _served(serves), 10, fill="#333")
    )


def _budget(switch: OobSwitchPlan) -> str:
    return f"{switch.ports_used}/{switch.ports_total} ↑{switch.uplinks}"


def _served(serves: Counter[str]) -> str:
    parts = [f"{serves[k]} {_KIND_LABEL[k]}" for k in ("bmc", "switch-mgmt", "device") if serves[k]]
    return " · ".join(parts) or "nothing attached"


def _speeds(speeds: set[int]) -> str:
    return "/".join(f"{s}G" for s in sorted(speeds)) or "-"
