"""The storage and in-band networks' diagrams: MLAG pairs, their peerlinks, uplinks and the hosts under each pair.

One SVG per network (``storage``, which also carries in-band when converged, or ``inband``). Layout, top to bottom:
the title and a legend (cables by kind and plane with count and speed, oversubscription, each segment's VLAN, MTU and
VRF, and the plane colours); the spine pair, when the network has one, with its peerlink; a bus; then the leaf pairs
in rows of at most ``MAX_PAIRS_PER_ROW`` (the services pair first, then by scalable unit), each pair side by side
with its peerlink, one uplink trunk to the bus labelled with its cable count and speed, and under it the node groups
it serves with their cables per plane. Parallel cables are drawn once per bundle; placed by arithmetic in one pass
over the cables, deterministically.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from fabric.plan.storage.types import StorageNetworkPlan, StorageSwitchPlan
from fabric.plan.types import ClusterPlan
from fabric.render.diagrams import _svg

MAX_PAIRS_PER_ROW = 4  # 4 pairs of ~430 px fit a 1920-px wide screen
PLANE_COLORS = {"storage": "#4e79a7", "inband": "#59a14f"}
_PAD, _BOX_H, _PAIR_GAP, _SIDE_GAP = 20.0, 22.0, 28.0, 34.0
_FILL = {"spine": "#d0e1f9", "leaf": "#e3f2d9"}


def storage_svgs(plan: ClusterPlan) -> dict[str, str]:
    """One SVG per storage / in-band network of the plan, by network name (``{}`` without one).

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> svgs = storage_svgs(plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml")))
        >>> sorted(svgs), ">stor-su1-1-a</text>" in svgs["storage"]
        (['storage'], True)
    """
    networks = [net for net in plan.storage if net.switches]
    groups = {n.hostname: n.group for n in plan.nodes} if networks else {}  # not read for a plan without one
    return {net.name: _draw(plan, net, groups) for net in networks}


def _pairs(switches: tuple[StorageSwitchPlan, ...]) -> list[list[StorageSwitchPlan]]:
    """Switches as their MLAG pairs (side a first), in plan order; a switch without a listed peer stands alone."""
    by_name = {s.name: s for s in switches}
    seen: set[str] = set()
    pairs: list[list[StorageSwitchPlan]] = []
    for s in switches:
        if s.name in seen:
            continue
        pair = sorted([s, by_name[s.peer]] if s.peer in by_name and s.peer != s.name else [s], key=lambda x: x.side)
        seen.update(x.name for x in pair)
        pairs.append(pair)
    return pairs


@dataclass(slots=True)
class _Tally:
    """One pass over a network's cables: counts by kind, plane and speed; per switch its uplinks, peerlinks and hosts."""

    kinds: Counter[tuple[str, str, int]] = field(default_factory=Counter[tuple[str, str, int]])
    uplinks: Counter[str] = field(default_factory=Counter[str])
    peerlinks: Counter[str] = field(default_factory=Counter[str])
    cables: dict[str, Counter[tuple[str, str]]] = field(default_factory=dict[str, Counter[tuple[str, str]]])  # switch -> (group, plane)
    hosts: dict[str, dict[str, set[str]]] = field(default_factory=dict[str, dict[str, set[str]]])  # switch -> group -> hosts


def _tally(net: StorageNetworkPlan, groups: dict[str, str]) -> _Tally:
    switch_names = {s.name for s in net.switches}
    tally = _Tally()
    for link in net.links:
        tally.kinds[link.kind, link.plane, link.speed_gbps] += 1
        if link.kind == "uplink":
            tally.uplinks[link.a_device] += 1
        elif link.kind == "peerlink":
            tally.peerlinks[link.a_device] += 1
        elif link.b_device not in switch_names:
            group = groups.get(link.b_device, "other devices")
            tally.cables.setdefault(link.a_device, Counter())[group, link.plane] += 1
            tally.hosts.setdefault(link.a_device, {}).setdefault(group, set()).add(link.b_device)
    return tally


def _draw(plan: ClusterPlan, net: StorageNetworkPlan, groups: dict[str, str]) -> str:
    tally = _tally(net, groups)
    legend = _legend(plan, net, tally.kinds)
    box_w = max(150.0, *(_svg.text_width(s.name, 12) + _svg.text_width(f"{s.ports_used}/{s.ports_total}", 10) + 20 for s in net.switches))
    pair_w = 2 * box_w + _SIDE_GAP
    pairs = _pairs(net.leaves)
    per_row = max(1, min(MAX_PAIRS_PER_ROW, len(pairs)))
    content_w = per_row * pair_w + (per_row - 1) * _PAIR_GAP
    width = 2 * _PAD + max(content_w, *(_svg.text_width(text, size) for text, size in legend))
    out: list[str] = []
    y = _draw_legend(out, legend, net)
    spines = _pairs(net.spines)
    bus_y: float | None = None
    if spines:
        spine_x = _PAD + (content_w - pair_w) / 2
        out.extend(_pair(spine_x, y, box_w, spines[0], peers=tally.peerlinks, tier="spine"))
        bus_y = y + _BOX_H + 36
        out.append(_svg.line([(spine_x + pair_w / 2, y + _BOX_H), (spine_x + pair_w / 2, bus_y)], "#333", 2))
        y = bus_y
    centre = _PAD + content_w / 2
    for start in range(0, len(pairs), per_row):
        row = pairs[start : start + per_row]
        lefts = [_PAD + i * (pair_w + _PAIR_GAP) for i in range(len(row))]
        if bus_y is not None:
            out.append(_svg.line([(min(lefts[0] + pair_w / 2, centre), y), (max(lefts[-1] + pair_w / 2, centre), y)], "#333", 2))
            if y > bus_y:
                out.append(_svg.line([(centre, bus_y), (centre, y)], "#333", 2))
        top = y + 34
        bottom = top
        for left, pair in zip(lefts, row, strict=True):
            mid = left + pair_w / 2
            if bus_y is not None:
                out.append(_svg.line([(mid, y), (mid, top)], "#333", 2))
                up = f"{sum(tally.uplinks[s.name] for s in pair)} × {_speeds(tally.kinds, 'uplink')} up"
                out.append(_svg.text(mid + 4, y + 20, up, 10, fill="#555"))
            out.extend(_pair(left, top, box_w, pair, peers=tally.peerlinks, tier="leaf"))
            bottom = max(bottom, _served(out, left, top + _BOX_H, pair, tally))
        y = bottom + 26
    return _svg.document(width, y + _PAD - 10, f"{plan.name}: {net.name} network topology", out)


def _draw_legend(out: list[str], legend: list[tuple[str, float]], net: StorageNetworkPlan) -> float:
    """The legend's lines and the plane colour key; returns the y below them."""
    y = _PAD
    for text, size in legend:
        y += size + 6
        out.append(_svg.text(_PAD, y, text, size, weight="bold" if size > 12 else "normal"))
    y += 8
    x = _PAD
    for plane, color in PLANE_COLORS.items():
        if plane in net.planes:
            out.append(_svg.line([(x, y + 6), (x + 22, y + 6)], color, 4))
            out.append(_svg.text(x + 26, y + 10, f"{plane} host cables", 11))
            x += 150
    return y + 30


def _legend(plan: ClusterPlan, net: StorageNetworkPlan, kinds: Counter[tuple[str, str, int]]) -> list[tuple[str, float]]:
    cables = ", ".join(
        f"{n} × {speed}G {kind}{'' if kind in (plane, 'uplink', 'peerlink') else f' ({plane})'}" for (kind, plane, speed), n in sorted(kinds.items())
    )
    segments = "; ".join(
        f"{s.plane} VLAN {s.vlan}, MTU {s.mtu}" + (f", VRF {s.vrf}" if s.vrf else "") + (", RoCE lossless" if s.roce else "") for s in net.segments
    )
    models = Counter(f"{s.model} ({s.nos})" for s in net.switches)
    return [
        (f"{plan.name}: {net.name} network ({' + '.join(net.planes)}), {net.topology}, {len(net.switches)} switches in MLAG pairs", 15.0),
        (f"switches: {', '.join(f'{n} × {m}' for m, n in sorted(models.items()))}; host attach {net.attach}; separation {net.separation}", 11.0),
        (f"cables: {cables}; oversubscription {net.oversubscription}", 11.0),
        (f"segments: {segments}", 11.0),
        ("box: ports used / ports; grey bar: the pair's peerlink (n× cables); under a pair, the hosts it serves", 11.0),
    ]


def _pair(x: float, y: float, box_w: float, pair: list[StorageSwitchPlan], *, peers: Counter[str], tier: str) -> list[str]:
    out: list[str] = []
    if len(pair) == 2:
        out.append(_svg.line([(x + box_w, y + _BOX_H / 2), (x + box_w + _SIDE_GAP, y + _BOX_H / 2)], "#777", 3))
        out.append(_svg.text(x + box_w + _SIDE_GAP / 2, y + _BOX_H / 2 + 12, f"{peers[pair[0].name]}×", 9, anchor="middle", fill="#555"))
    for i, s in enumerate(pair):
        bx = x + i * (box_w + _SIDE_GAP)
        details = f"{s.name}: {s.model} ({s.nos}), {s.location}, side {s.side}, mgmt {s.mgmt_address}"
        out.append(
            "<g>"
            + _svg.tooltip(details)
            + _svg.rect(bx, y, box_w, _BOX_H, _FILL[tier])
            + _svg.text(bx + 6, y + 15, s.name, 12)
            + _svg.text(bx + box_w - 5, y + 15, f"{s.ports_used}/{s.ports_total}", 10, anchor="end", fill="#555")
            + "</g>"
        )
    return out


def _served(out: list[str], x: float, y: float, pair: list[StorageSwitchPlan], tally: _Tally) -> float:
    """Lines under a pair, one per node group: hosts and cables per plane (coloured); returns the y below them."""
    cables: Counter[tuple[str, str]] = Counter()
    members: dict[str, set[str]] = defaultdict(set)
    for s in pair:
        cables.update(tally.cables.get(s.name, Counter()))
        for group, names in tally.hosts.get(s.name, {}).items():
            members[group] |= names
    y += 16
    for group in sorted(members):
        label = f"{group}: {len(members[group])} hosts"
        out.append(_svg.text(x + 4, y, label, 10, fill="#333"))
        px = x + 8 + _svg.text_width(label, 10)
        for plane, color in PLANE_COLORS.items():
            if cables[group, plane]:
                text = f"{cables[group, plane]} × {plane}"
                out.append(_svg.text(px, y, text, 10, fill=color, weight="bold"))
                px += _svg.text_width(text, 10) + 8
        y += 14
    return y


def _speeds(kinds: Counter[tuple[str, str, int]], kind: str) -> str:
    return "/".join(f"{s}G" for s in sorted({speed for (k, _, speed) in kinds if k == kind})) or "-"
