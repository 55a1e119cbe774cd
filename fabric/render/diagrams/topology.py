"""The topology diagram: one SVG per plane that has switches, drawn from the plan's structure, not from every cable.

Layout, top to bottom: the title and a legend (speeds, oversubscription and bisection per tier, the RoCE contract, the
MTU of every plane, the rail colours); the spine groups (spines that reach the same leaves with the same number of
cables) in a frame, wrapped to the page width; then bands of at most ``MAX_COLUMNS`` columns. A column is one scalable
unit, its leaves ordered by rail and the node groups it serves underneath, or, without scalable units, up to
``MAX_LEAVES_PER_COLUMN`` leaves in natural order. Each column has one uplink trunk per spine group, joined to that
group's bus at the top of the band; a riser on the right joins every band's bus to its spine group. Parallel cables are
drawn once and labelled with their count and speed; host cables are coloured by rail.

Everything is placed by arithmetic after one pass over the links and a sort of the bundles (O(cables) time and memory
up to a log factor; the output grows with switches and bundles, never with cables), deterministically, with no external
layout program.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter

from fabric.plan.compute.planes import plane_fabric, plane_of
from fabric.plan.types import ClusterPlan, FabricPlan, Link, SwitchPlan
from fabric.render.diagrams import _svg
from fabric.render.diagrams.oob import oob_svg
from fabric.render.diagrams.storage import storage_svgs
from fabric.render.diagrams.topology_structure import Column, NodeBox, Structure, plane_structure

MAX_COLUMNS = 8  # columns per band: 8 columns of ~220 px fit a 1920-px wide screen
RAIL_COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#9c755f", "#17becf", "#bcbd22")  # Tableau 10 hues
NO_RAIL_COLOR = "#888888"
_TIER_FILL = {"spine": "#d0e1f9", "leaf": "#e3f2d9", "nodes": "#f4e1c1"}
_PLANE = attrgetter("plane")
_PAD, _ROW, _BOX_H, _NODE_H, _COL_GAP, _SLOT, _TRUNK_GAP = 20.0, 24.0, 20.0, 46.0, 12.0, 4.0, 6.0


def topology_svgs(plan: ClusterPlan) -> dict[str, str]:
    """One SVG diagram per plane that has switches, by plane name: the fabric's planes, the storage / in-band
    networks (``fabric.render.diagrams.storage``) and the OOB network (``fabric.render.diagrams.oob``).

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> svgs = topology_svgs(plan_cluster(load_cluster("inventories/lab/cluster.yaml")))
        >>> sorted(svgs), ">spine01</text>" in svgs["compute"]
        (['compute', 'oob', 'storage'], True)
    """
    svgs: dict[str, str] = {}
    fabric = plan.fabric
    if fabric is not None:
        planes = sorted({p for s in fabric.leaves if (p := plane_of(s.name)) is not None})
        names = list(map(_PLANE, fabric.links))
        distinct = set(names)
        if planes:  # a multi-plane compute fabric: one picture per plane (topology-compute-p<k>.svg), none of them all at once
            distinct.discard("compute")
        by_plane: dict[str, list[Link]] = {
            plane: list(fabric.links) if len(distinct) == 1 and not planes else list(compress(fabric.links, map(plane.__eq__, names)))
            for plane in distinct
        }
        svgs = {plane: _draw(plan, fabric, plane, plane_structure(plan, fabric, links)) for plane, links in by_plane.items()}
        for k in planes:
            mine = plane_fabric(fabric, k)
            svgs[f"compute-p{k}"] = _draw(plan, mine, "compute", plane_structure(plan, mine, list(mine.links)), shown=f"compute plane p{k}")
    for network, svg in storage_svgs(plan).items():
        svgs.setdefault(network, svg)  # storage / in-band networks of their own (fabric.render.diagrams.storage)
    oob = oob_svg(plan)
    if oob is not None:
        svgs.setdefault("oob", oob)  # the management switches' own picture, unless the fabric carries the oob plane
    return dict(sorted(svgs.items()))


def speeds_label(speeds: set[int]) -> str:
    """``400G`` or ``200G/400G``."""
    return "/".join(f"{s}G" for s in sorted(speeds)) or "-"


def _range_label(units: set[int]) -> str:
    if not units:
        return ""
    low, high = min(units), max(units)
    return f" · SU {low}" if low == high else f" · SU {low}-{high}"


@dataclass(frozen=True, slots=True)
class _Uplinks:
    """The leaf-spine bundles by leaf and by spine group, read once per picture (not once per leaf and group)."""

    per_leaf: dict[str, int]  # leaf -> cables to all the spines it reaches
    reach: dict[str, list[int]]  # leaf -> the spine groups it reaches
    per_group: dict[int, set[int]]  # spine group -> the cable counts from a leaf to each of its spines


def _uplinks(structure: Structure) -> _Uplinks:
    per_leaf: dict[str, int] = defaultdict(int)
    reach: dict[str, list[int]] = defaultdict(list)
    per_group: dict[int, set[int]] = defaultdict(set)
    for (leaf, g), count in structure.uplinks.items():
        per_leaf[leaf] += count * len(structure.spine_groups[g])
        reach[leaf].append(g)
        per_group[g].add(count)
    return _Uplinks(per_leaf, reach, per_group)


@dataclass(frozen=True, slots=True)
class _Geometry:
    leaf_w: float
    comb_w: float
    pitch: float  # between two host-cable lines beside a column
    trunk_w: float
    spine_w: float
    content_w: float
    groups: int

    @property
    def column_w(self) -> float:
        return self.comb_w + self.leaf_w + self.trunk_w + _COL_GAP

    def riser_x(self, group: int) -> float:
        """Risers right of the columns; the group drawn lowest gets the innermost riser, so no connector crosses one."""
        return _PAD + self.content_w + 12 + 8 * (self.groups - 1 - group)


def _geometry(structure: Structure, legend_w: float) -> _Geometry:
    leaf_names = [leaf.name for column in structure.columns for leaf in column.leaves]
    box_lines = [_box_lines(box) for column in structure.columns for box in column.boxes]
    leaf_w = max([_svg.text_width(n, 12) + _svg.text_width("999↓ 99↑", 10) + 18 for n in leaf_names] + [140.0])
    leaf_w = max([leaf_w] + [_svg.text_width(line, 10) + 14 for lines in box_lines for line in lines])
    comb = max((sum(len(b.per_leaf) for b in c.boxes) for c in structure.columns), default=0)
    groups = len(structure.spine_groups)
    trunk_w = _TRUNK_GAP * (groups + 1)
    spines = [s for g in structure.spine_groups for s in g] + structure.supers
    spine_w = max([_svg.text_width(s.name, 12) + _svg.text_width("9999↓ 99↑", 10) + 16 for s in spines] + [90.0])
    slot = _slot(comb)
    columns_w = min(len(structure.columns), MAX_COLUMNS) * (slot * (comb + 1) + leaf_w + trunk_w + _COL_GAP)
    return _Geometry(leaf_w, slot * (comb + 1), slot, trunk_w, spine_w, max(columns_w, legend_w, 3 * spine_w), groups)


def _slot(lines: int) -> float:
    """Spacing of the host-cable lines beside a column: tighter when a column has many (16 leaves without SUs)."""
    return _SLOT if lines <= 8 else _SLOT - 1


def _box_lines(box: NodeBox) -> tuple[str, str, str]:
    cables = sum(box.per_leaf.values())
    return (
        f"{box.group}{_range_label(box.units)}",
        f"{len(box.nodes)} × {', '.join(sorted(box.hardware))}",
        f"{cables} × {speeds_label(box.speeds)} to {len(box.per_leaf)} leaves",
    )


def _draw(plan: ClusterPlan, fabric: FabricPlan, plane: str, structure: Structure, *, shown: str | None = None) -> str:
    legend = _legend(plan, fabric, plane, structure, shown=shown)
    legend_w = max(_svg.text_width(text, size) for text, size in legend) + 2 * _PAD
    geo = _geometry(structure, legend_w)
    bundles = _uplinks(structure)
    out: list[str] = []
    y = _PAD
    for text, size in legend:
        y += size + 6
        out.append(_svg.text(_PAD, y, text, size, weight="bold" if size > 12 else "normal"))
    y += 8
    out.extend(_rail_swatches(_PAD, y, structure))
    y += 22
    connectors: list[float] = []
    super_y = None
    if structure.supers:
        y, super_y = _draw_supers(out, geo, structure, y=y)
    for g, members in enumerate(structure.spine_groups):
        y, connector_y = _draw_spine_group(out, geo, g, members, structure, counts=bundles.per_group.get(g, set()), y=y)
        connectors.append(connector_y)
    if super_y is not None and connectors:  # the super-spines' trunk down the left margin, a stub into each spine group
        out.append(_svg.line([(_PAD, super_y), (_PAD / 2, super_y), (_PAD / 2, connectors[-1])], "#333", 2))
        out.extend(_svg.line([(_PAD / 2, c), (_PAD, c)], "#333", 2) for c in connectors[:-1])
        out.append(_svg.line([(_PAD / 2, connectors[-1]), (_PAD, connectors[-1])], "#333", 2))
    band_buses: list[list[float]] = []
    for start in range(0, len(structure.columns), MAX_COLUMNS):
        buses = [y + 10 + 6 * g for g in range(geo.groups)]
        band_buses.append(buses)
        y = _draw_band(out, geo, structure, bundles, structure.columns[start : start + MAX_COLUMNS], buses=buses)
    for g, connector_y in enumerate(connectors):
        if band_buses:
            out.append(_svg.line([(geo.riser_x(g), connector_y), (geo.riser_x(g), band_buses[-1][g])], "#333", 2))
    width = _PAD + geo.content_w + 12 + 8 * geo.groups + _PAD
    title = f"{plan.name}: {shown or plane + ' plane'} topology"
    return _svg.document(width, y + _PAD, title, out)


def _rail_swatches(x: float, y: float, structure: Structure) -> list[str]:
    rails = sorted({leaf.rail for c in structure.columns for leaf in c.leaves if leaf.rail is not None})
    label = "rails:" if rails else "host cables:"
    out = [_svg.text(x, y + 10, label, 11)]
    x += _svg.text_width(label, 11) + 8
    for rail in rails or [0]:
        color = RAIL_COLORS[(rail - 1) % len(RAIL_COLORS)] if rail else NO_RAIL_COLOR
        out.append(_svg.line([(x, y + 6), (x + 22, y + 6)], color, 4))
        out.append(_svg.text(x + 26, y + 10, f"r{rail}" if rail else "node ↔ leaf", 11))
        x += 56 if rail else 110
    out.append(_svg.text(x + 10, y + 10, "leaf label: n↓ host cables, n↑ uplinks; one line per bundle of parallel cables", 11, fill="#555"))
    return out


def _draw_spine_group(
    out: list[str], geo: _Geometry, g: int, members: list[SwitchPlan], structure: Structure, *, counts: set[int], y: float
) -> tuple[float, float]:
    """A frame with the group's spines wrapped to the page width (``counts``: the cables from a leaf to each of its
    spines, every count seen); returns the next y and the connector's y."""
    per_row = max(1, int((geo.content_w - 16) // (geo.spine_w + 8)))
    rows = (len(members) + per_row - 1) // per_row
    height = 26 + rows * _ROW + 4
    out.append(_svg.rect(_PAD, y, geo.content_w, height, "#f7f9fc", stroke="#9ab", dash=True))
    each = f"{next(iter(counts))} × {speeds_label(structure.uplink_speeds)}" if len(counts) == 1 else "varying"
    sample = members[0]
    label = "spines" if geo.groups == 1 else f"spine group {g + 1}"
    asn = f" · AS {sample.asn}" if sample.asn is not None and all(s.asn == sample.asn for s in members) else ""
    out.append(_svg.text(_PAD + 8, y + 16, f"{label}: {len(members)} × {sample.model} ({sample.nos}){asn} · each leaf to each spine: {each}", 11))
    for i, spine in enumerate(members):
        sx = _PAD + 8 + (i % per_row) * (geo.spine_w + 8)
        sy = y + 24 + (i // per_row) * _ROW
        up = structure.super_uplinks.get(spine.name, 0)
        label = f"{structure.downlinks.get(spine.name, 0)}↓" + (f" {up}↑" if up else "")
        out.append(_switch_box(sx, sy, geo.spine_w, spine, counts=label, tier="spine"))
    connector_y = y + height / 2
    out.append(_svg.line([(_PAD + geo.content_w, connector_y), (geo.riser_x(g), connector_y)], "#333", 2))
    return y + height + 10, connector_y


def _draw_supers(out: list[str], geo: _Geometry, structure: Structure, *, y: float) -> tuple[float, float]:
    """The super-spines of a three-tier fabric in one frame above the spine groups; returns the next y and its middle."""
    per_row = max(1, int((geo.content_w - 16) // (geo.spine_w + 8)))
    rows = (len(structure.supers) + per_row - 1) // per_row
    height = 26 + rows * _ROW + 4
    out.append(_svg.rect(_PAD, y, geo.content_w, height, "#eef3fb", stroke="#9ab", dash=True))
    sample = structure.supers[0]
    ups = sorted(set(structure.super_uplinks.values()))
    each = f"{ups[0]} × {speeds_label(structure.super_speeds)}" if len(ups) == 1 else "varying"
    label = f"super-spines: {len(structure.supers)} × {sample.model} ({sample.nos}) · each spine to the super-spines: {each}"
    out.append(_svg.text(_PAD + 8, y + 16, label, 11))
    for i, switch in enumerate(structure.supers):
        sx = _PAD + 8 + (i % per_row) * (geo.spine_w + 8)
        sy = y + 24 + (i // per_row) * _ROW
        out.append(_switch_box(sx, sy, geo.spine_w, switch, counts=f"{structure.downlinks.get(switch.name, 0)}↓", tier="spine"))
    return y + height + 10, y + height / 2


def _switch_box(x: float, y: float, w: float, switch: SwitchPlan, *, counts: str, tier: str) -> str:
    details = f"{switch.name}: {switch.model} ({switch.nos})"
    details += f", AS {switch.asn}" if switch.asn is not None else ""
    details += f", loopback {switch.loopback}" if switch.loopback else ""
    details += f", mgmt {switch.mgmt_address}"
    return (
        "<g>"
        + _svg.tooltip(details)
        + _svg.rect(x, y, w, _BOX_H, _TIER_FILL[tier])
        + _svg.text(x + 6, y + 14.5, switch.name, 12)
        + _svg.text(x + w - 5, y + 14, counts, 10, anchor="end", fill="#555")
        + "</g>"
    )


def _draw_band(out: list[str], geo: _Geometry, structure: Structure, bundles: _Uplinks, columns: list[Column], *, buses: list[float]) -> float:
    """Columns side by side under their buses; returns the y below the band."""
    top = buses[-1] + 36
    bottom = top
    bus_left: dict[int, float] = {}
    for c, column in enumerate(columns):
        x = _PAD + c * geo.column_w
        bottom = max(bottom, _draw_column(out, geo, structure, bundles, column, x=x, top=top, buses=buses, bus_left=bus_left))
    for g, bus_y in enumerate(buses):
        if g in bus_left:
            out.append(_svg.line([(bus_left[g], bus_y), (geo.riser_x(g), bus_y)], "#333", 2))
    return bottom + 16


def _draw_column(
    out: list[str],
    geo: _Geometry,
    structure: Structure,
    bundles: _Uplinks,
    column: Column,
    *,
    x: float,
    top: float,
    buses: list[float],
    bus_left: dict[int, float],
) -> float:
    leaf_x = x + geo.comb_w
    right = leaf_x + geo.leaf_w
    rows = {leaf.name: top + 8 + i * _ROW for i, leaf in enumerate(column.leaves)}
    up = sum(bundles.per_leaf.get(leaf.name, 0) for leaf in column.leaves)
    out.append(_svg.text(leaf_x, top - 13, column.title, 12, weight="bold"))
    out.append(_svg.text(leaf_x, top, f"↑ {up} × {speeds_label(structure.uplink_speeds)} to the spines", 10, fill="#555"))
    trunks: dict[int, list[float]] = defaultdict(list)  # spine group -> the rows of the column's leaves that reach it
    for leaf in column.leaves:
        for g in bundles.reach.get(leaf.name, ()):
            trunks[g].append(rows[leaf.name] + _BOX_H / 2)
    for g, ends in sorted(trunks.items()):
        trunk_x = right + _TRUNK_GAP * (g + 1)
        bus_left[g] = min(bus_left.get(g, trunk_x), trunk_x)
        out.append(_svg.line([(trunk_x, buses[g]), (trunk_x, max(ends))], "#333", 2))
        out.extend(_svg.line([(right, end), (trunk_x, end)], "#333", 1.5) for end in ends)
    for leaf in column.leaves:
        counts = f"{structure.downlinks.get(leaf.name, 0)}↓ {bundles.per_leaf.get(leaf.name, 0)}↑"
        out.append(_switch_box(leaf_x, rows[leaf.name], geo.leaf_w, leaf, counts=counts, tier="leaf"))
    y = top + 8 + len(column.leaves) * _ROW + 6
    slot = round(geo.comb_w / geo.pitch)  # the line to the highest leaf runs outermost, so no two lines of a box cross
    rail_of = {leaf.name: leaf.rail for leaf in column.leaves}
    for box in column.boxes:
        lines = _box_lines(box)
        out.append(_svg.rect(leaf_x, y, geo.leaf_w, _NODE_H, _TIER_FILL["nodes"]))
        out.append(_svg.text(leaf_x + 6, y + 14, lines[0], 11, weight="bold"))
        out.extend(_svg.text(leaf_x + 6, y + 14 + 13 * (i + 1), line, 10) for i, line in enumerate(lines[1:]))
        for leaf in sorted(box.per_leaf, key=lambda n: rows[n]):
            slot -= 1
            lx = leaf_x - geo.pitch * slot
            rail = rail_of[leaf]
            color = RAIL_COLORS[(rail - 1) % len(RAIL_COLORS)] if rail else NO_RAIL_COLOR
            row_y = rows[leaf] + _BOX_H / 2
            out.append(_svg.line([(leaf_x, y + 8), (lx, y + 8), (lx, row_y), (leaf_x, row_y)], color, 1.5))
        y += _NODE_H + 6
    return y


def _legend(plan: ClusterPlan, fabric: FabricPlan, plane: str, structure: Structure, *, shown: str | None = None) -> list[tuple[str, float]]:
    """Title and legend lines, each with its font size (``shown``: the plane as the title names it, if not ``plane``)."""
    units = f", {fabric.scalable_units} scalable units × {fabric.rails} rails" if fabric.scalable_units else ""
    lines: list[tuple[str, float]] = [(f"{plan.name}: {shown or plane + ' plane'}, {fabric.topology} {fabric.link_layer}{units}", 16)]
    lines.append(
        (
            f"cables: {structure.host_links} × {speeds_label(structure.host_speeds)} node ↔ leaf, "
            f"{structure.fabric_links} × {speeds_label(structure.uplink_speeds)} leaf ↔ spine"
            + (f", {sum(structure.super_uplinks.values())} × {speeds_label(structure.super_speeds)} spine ↔ super-spine" if structure.supers else "")
            + " · "
            "MTU " + ", ".join(f"{p.name} {p.mtu}" for p in plan.planes),
            11,
        )
    )
    for tier in fabric.tiers:
        sample = ({"leaf": fabric.leaves, "spine": fabric.spines, "superspine": fabric.super_spines}[tier.tier]) or None
        kind = f"{sample[0].model} ({sample[0].nos})" if sample else "-"
        top = tier is fabric.tiers[-1]  # the fabric's cut sits at its top tier (spines, or super-spines on three tiers)
        bisection = fabric.bisection_gbps if top else min(tier.downlink_gbps, tier.uplink_gbps) * tier.switches // 2
        up = f", {_tbps(tier.uplink_gbps)} up, oversubscription {tier.oversubscription}" if tier.uplink_gbps else ""
        lines.append(
            (
                f"{tier.tier} tier: {tier.switches} × {kind}, {tier.ports_used_per_switch}/{tier.ports_per_switch} ports used, "
                f"per switch {_tbps(tier.downlink_gbps)} down{up}; bisection {_tbps(bisection)}",
                11,
            )
        )
    lines.append((f"fabric: bisection {_tbps(fabric.bisection_gbps)}, oversubscription {fabric.oversubscription}", 11))
    if fabric.link_layer == "ethernet" and plan.plane(plane).transport == "roce":
        lines.append((f"RoCE: {plan.roce.summary()}", 11))
    elif plan.infiniband is not None:
        sm = plan.infiniband.subnet_manager
        ib = plan.infiniband
        features = "".join(f", {name}" for name, on in (("SHARP", ib.sharp), ("adaptive routing", ib.adaptive_routing)) if on)
        text = f"InfiniBand: MTU {ib.mtu}, subnet manager {sm.kind} on {len(sm.nodes)} node(s), routing {sm.routing_engine}{features}"
        lines.append((text, 11))
    return lines


def _tbps(gbps: int) -> str:
    return f"{gbps / 1000:g} Tb/s" if gbps >= 1000 else f"{gbps} Gb/s"
