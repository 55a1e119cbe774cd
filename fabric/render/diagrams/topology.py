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

import re
from collections import defaultdict
from dataclasses import dataclass, field

from fabric.model.qos import RoceSpec
from fabric.plan.types import ClusterPlan, FabricPlan, Link, NodePlan, SwitchPlan
from fabric.render.diagrams import _svg
from fabric.render.diagrams.oob import oob_svg
from fabric.render.diagrams.storage import storage_svgs

MAX_COLUMNS = 8  # columns per band: 8 columns of ~220 px fit a 1920-px wide screen
MAX_LEAVES_PER_COLUMN = 16  # leaves per column when the fabric has no scalable units
RAIL_COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#9c755f", "#17becf", "#bcbd22")  # Tableau 10 hues
NO_RAIL_COLOR = "#888888"
_TIER_FILL = {"spine": "#d0e1f9", "leaf": "#e3f2d9", "nodes": "#f4e1c1"}
_PAD, _ROW, _BOX_H, _NODE_H, _COL_GAP, _SLOT, _TRUNK_GAP = 20.0, 24.0, 20.0, 46.0, 12.0, 4.0, 6.0


def natural_key(name: str) -> tuple[tuple[int, str], ...]:
    """Sort key that orders ``leaf2`` before ``leaf10``."""
    return tuple((int(part), "") if part.isdigit() else (-1, part) for part in re.split(r"(\d+)", name) if part)


@dataclass(slots=True)
class _NodeBox:
    """The nodes of one group attached to one column, with their cables per leaf."""

    group: str
    nodes: set[str] = field(default_factory=set[str])
    units: set[int] = field(default_factory=set[int])
    hardware: set[str] = field(default_factory=set[str])
    per_leaf: dict[str, int] = field(default_factory=dict[str, int])
    speeds: set[int] = field(default_factory=set[int])


@dataclass(slots=True)
class _Column:
    title: str
    leaves: list[SwitchPlan]
    boxes: list[_NodeBox] = field(default_factory=list["_NodeBox"])


@dataclass(slots=True)
class _Structure:
    """A plane's fabric reduced to what the picture shows: spine groups, leaf columns, bundles."""

    spine_groups: list[list[SwitchPlan]]
    columns: list[_Column]
    uplinks: dict[tuple[str, int], int]  # (leaf, spine group) -> cables from the leaf to each spine of the group
    uplink_speeds: set[int]
    downlinks: dict[str, int]  # switch -> host cables (leaf) or leaf cables (spine)
    host_links: int
    fabric_links: int  # leaf <-> spine
    host_speeds: set[int]
    supers: list[SwitchPlan] = field(default_factory=list[SwitchPlan])  # super-spines of a three-tier fabric
    super_uplinks: dict[str, int] = field(default_factory=dict[str, int])  # spine -> cables to the super-spines
    super_speeds: set[int] = field(default_factory=set[int])


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
        by_plane: dict[str, list[Link]] = defaultdict(list)
        for link in fabric.links:
            by_plane[link.plane].append(link)
        svgs = {plane: _draw(plan, fabric, plane, _structure(plan, fabric, links)) for plane, links in by_plane.items()}
    for network, svg in storage_svgs(plan).items():
        svgs.setdefault(network, svg)  # storage / in-band networks of their own (fabric.render.diagrams.storage)
    oob = oob_svg(plan)
    if oob is not None:
        svgs.setdefault("oob", oob)  # the management switches' own picture, unless the fabric carries the oob plane
    return dict(sorted(svgs.items()))


def _structure(plan: ClusterPlan, fabric: FabricPlan, links: list[Link]) -> _Structure:
    switches = {s.name: s for s in fabric.switches}
    pair_count: dict[tuple[str, str], int] = defaultdict(int)
    host_count: dict[tuple[str, str], int] = defaultdict(int)
    downlinks: dict[str, int] = defaultdict(int)
    uplink_speeds: set[int] = set()
    host_speeds: set[int] = set()
    leaves: set[str] = set()
    super_uplinks: dict[str, int] = defaultdict(int)
    super_speeds: set[int] = set()
    supers: set[str] = set()
    for link in links:
        if link.kind == "fabric" and switches[link.a_device].tier != "leaf":  # spine -> super-spine (three tiers)
            super_uplinks[link.a_device] += 1
            downlinks[link.b_device] += 1
            super_speeds.add(link.speed_gbps)
            supers.add(link.b_device)
            continue
        leaves.add(link.a_device)
        if link.kind == "fabric":
            pair_count[link.a_device, link.b_device] += 1
            downlinks[link.b_device] += 1
            uplink_speeds.add(link.speed_gbps)
        else:
            host_count[link.a_device, link.b_device] += 1
            downlinks[link.a_device] += 1
            host_speeds.add(link.speed_gbps)
    signature: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for (leaf, spine), count in sorted(pair_count.items()):
        signature[spine].append((leaf, count))
    groups: dict[tuple[tuple[str, int], ...], list[SwitchPlan]] = defaultdict(list)
    for spine in sorted(signature, key=natural_key):
        groups[tuple(signature[spine])].append(switches[spine])
    spine_groups = list(groups.values())
    group_of = {s.name: g for g, members in enumerate(spine_groups) for s in members}
    uplinks = {(leaf, group_of[spine]): count for (leaf, spine), count in pair_count.items()}
    columns = _columns(sorted((switches[n] for n in leaves), key=_leaf_key))
    _attach_nodes(columns, {n.hostname: n for n in plan.nodes}, host_count, links)
    return _Structure(
        spine_groups,
        columns,
        uplinks,
        uplink_speeds,
        dict(downlinks),
        sum(host_count.values()),
        sum(pair_count.values()),
        host_speeds,
        sorted((switches[n] for n in supers), key=lambda x: natural_key(x.name)),
        dict(super_uplinks),
        super_speeds,
    )


def _attach_nodes(columns: list[_Column], nodes: dict[str, NodePlan], host_count: dict[tuple[str, str], int], links: list[Link]) -> None:
    """One box per node group and column, with its cables per leaf of the column."""
    column_of = {leaf.name: c for c, column in enumerate(columns) for leaf in column.leaves}
    boxes: dict[tuple[int, str], _NodeBox] = {}
    for (leaf, host), count in sorted(host_count.items()):
        node = nodes[host]
        box = boxes.setdefault((column_of[leaf], node.group), _NodeBox(node.group))
        box.nodes.add(host)
        box.hardware.add(node.hardware)
        if node.scalable_unit is not None:
            box.units.add(node.scalable_unit)
        box.per_leaf[leaf] = box.per_leaf.get(leaf, 0) + count
    for link in links:
        if link.kind == "host":
            boxes[column_of[link.a_device], nodes[link.b_device].group].speeds.add(link.speed_gbps)
    for (c, _), box in sorted(boxes.items()):
        columns[c].boxes.append(box)


def _leaf_key(leaf: SwitchPlan) -> tuple[int, int, tuple[tuple[int, str], ...]]:
    return (leaf.scalable_unit or 0, leaf.rail or 0, natural_key(leaf.name))


def _columns(leaves: list[SwitchPlan]) -> list[_Column]:
    """One column per scalable unit (split if it has too many leaves), else runs of leaves in natural order."""
    runs: dict[int | None, list[SwitchPlan]] = defaultdict(list)
    for leaf in leaves:
        runs[leaf.scalable_unit].append(leaf)
    columns: list[_Column] = []
    for unit, members in runs.items():
        for start in range(0, len(members), MAX_LEAVES_PER_COLUMN):
            chunk = members[start : start + MAX_LEAVES_PER_COLUMN]
            title = f"SU {unit}" if unit is not None else f"leaves {start + 1}-{start + len(chunk)}"
            if unit is not None and len(members) > MAX_LEAVES_PER_COLUMN:
                title += f" ({start // MAX_LEAVES_PER_COLUMN + 1})"
            columns.append(_Column(title, chunk))
    return columns


def speeds_label(speeds: set[int]) -> str:
    """``400G`` or ``200G/400G``."""
    return "/".join(f"{s}G" for s in sorted(speeds)) or "-"


def _range_label(units: set[int]) -> str:
    if not units:
        return ""
    low, high = min(units), max(units)
    return f" · SU {low}" if low == high else f" · SU {low}-{high}"


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


def _geometry(structure: _Structure, legend_w: float) -> _Geometry:
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


def _box_lines(box: _NodeBox) -> tuple[str, str, str]:
    cables = sum(box.per_leaf.values())
    return (
        f"{box.group}{_range_label(box.units)}",
        f"{len(box.nodes)} × {', '.join(sorted(box.hardware))}",
        f"{cables} × {speeds_label(box.speeds)} to {len(box.per_leaf)} leaves",
    )


def _draw(plan: ClusterPlan, fabric: FabricPlan, plane: str, structure: _Structure) -> str:
    legend = _legend(plan, fabric, plane, structure)
    legend_w = max(_svg.text_width(text, size) for text, size in legend) + 2 * _PAD
    geo = _geometry(structure, legend_w)
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
        y, connector_y = _draw_spine_group(out, geo, g, members, structure, y=y)
        connectors.append(connector_y)
    if super_y is not None and connectors:  # the super-spines' trunk down the left margin, a stub into each spine group
        out.append(_svg.line([(_PAD, super_y), (_PAD / 2, super_y), (_PAD / 2, connectors[-1])], "#333", 2))
        out.extend(_svg.line([(_PAD / 2, c), (_PAD, c)], "#333", 2) for c in connectors[:-1])
        out.append(_svg.line([(_PAD / 2, connectors[-1]), (_PAD, connectors[-1])], "#333", 2))
    band_buses: list[list[float]] = []
    for start in range(0, len(structure.columns), MAX_COLUMNS):
        buses = [y + 10 + 6 * g for g in range(geo.groups)]
        band_buses.append(buses)
        y = _draw_band(out, geo, structure, structure.columns[start : start + MAX_COLUMNS], buses)
    for g, connector_y in enumerate(connectors):
        if band_buses:
            out.append(_svg.line([(geo.riser_x(g), connector_y), (geo.riser_x(g), band_buses[-1][g])], "#333", 2))
    width = _PAD + geo.content_w + 12 + 8 * geo.groups + _PAD
    title = f"{plan.name}: {plane} plane topology"
    return _svg.document(width, y + _PAD, title, out)


def _rail_swatches(x: float, y: float, structure: _Structure) -> list[str]:
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


def _draw_spine_group(out: list[str], geo: _Geometry, g: int, members: list[SwitchPlan], structure: _Structure, *, y: float) -> tuple[float, float]:
    """A frame with the group's spines wrapped to the page width; returns the next y and the connector's y."""
    per_row = max(1, int((geo.content_w - 16) // (geo.spine_w + 8)))
    rows = (len(members) + per_row - 1) // per_row
    height = 26 + rows * _ROW + 4
    out.append(_svg.rect(_PAD, y, geo.content_w, height, "#f7f9fc", stroke="#9ab", dash=True))
    counts = {c for (_, group), c in structure.uplinks.items() if group == g}
    each = f"{next(iter(counts))} × {speeds_label(structure.uplink_speeds)}" if len(counts) == 1 else "varying"
    sample = members[0]
    label = "spines" if geo.groups == 1 else f"spine group {g + 1}"
    asn = f" · AS {sample.asn}" if sample.asn is not None and all(s.asn == sample.asn for s in members) else ""
    out.append(_svg.text(_PAD + 8, y + 16, f"{label}: {len(members)} × {sample.model} ({sample.nos}){asn} · each leaf to each spine: {each}", 11))
    for i, spine in enumerate(members):
        sx = _PAD + 8 + (i % per_row) * (geo.spine_w + 8)
        sy = y + 24 + (i // per_row) * _ROW
        up = structure.super_uplinks.get(spine.name, 0)
        counts = f"{structure.downlinks.get(spine.name, 0)}↓" + (f" {up}↑" if up else "")
        out.append(_switch_box(sx, sy, geo.spine_w, spine, counts=counts, tier="spine"))
    connector_y = y + height / 2
    out.append(_svg.line([(_PAD + geo.content_w, connector_y), (geo.riser_x(g), connector_y)], "#333", 2))
    return y + height + 10, connector_y


def _draw_supers(out: list[str], geo: _Geometry, structure: _Structure, *, y: float) -> tuple[float, float]:
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


def _draw_band(out: list[str], geo: _Geometry, structure: _Structure, columns: list[_Column], buses: list[float]) -> float:
    """Columns side by side under their buses; returns the y below the band."""
    top = buses[-1] + 36
    bottom = top
    bus_left: dict[int, float] = {}
    for c, column in enumerate(columns):
        x = _PAD + c * geo.column_w
        bottom = max(bottom, _draw_column(out, geo, structure, column, x=x, top=top, buses=buses, bus_left=bus_left))
    for g, bus_y in enumerate(buses):
        if g in bus_left:
            out.append(_svg.line([(bus_left[g], bus_y), (geo.riser_x(g), bus_y)], "#333", 2))
    return bottom + 16


def _draw_column(
    out: list[str], geo: _Geometry, structure: _Structure, column: _Column, *, x: float, top: float, buses: list[float], bus_left: dict[int, float]
) -> float:
    leaf_x = x + geo.comb_w
    right = leaf_x + geo.leaf_w
    rows = {leaf.name: top + 8 + i * _ROW for i, leaf in enumerate(column.leaves)}
    up = sum(structure.uplinks.get((leaf.name, g), 0) * len(structure.spine_groups[g]) for leaf in column.leaves for g in range(geo.groups))
    out.append(_svg.text(leaf_x, top - 13, column.title, 12, weight="bold"))
    out.append(_svg.text(leaf_x, top, f"↑ {up} × {speeds_label(structure.uplink_speeds)} to the spines", 10, fill="#555"))
    for g in range(geo.groups):
        trunk_x = right + _TRUNK_GAP * (g + 1)
        ends = [rows[leaf.name] + _BOX_H / 2 for leaf in column.leaves if (leaf.name, g) in structure.uplinks]
        if not ends:
            continue
        bus_left[g] = min(bus_left.get(g, trunk_x), trunk_x)
        out.append(_svg.line([(trunk_x, buses[g]), (trunk_x, max(ends))], "#333", 2))
        out.extend(_svg.line([(right, end), (trunk_x, end)], "#333", 1.5) for end in ends)
    for leaf in column.leaves:
        ups = sum(structure.uplinks.get((leaf.name, g), 0) * len(structure.spine_groups[g]) for g in range(geo.groups))
        out.append(_switch_box(leaf_x, rows[leaf.name], geo.leaf_w, leaf, counts=f"{structure.downlinks.get(leaf.name, 0)}↓ {ups}↑", tier="leaf"))
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


def _legend(plan: ClusterPlan, fabric: FabricPlan, plane: str, structure: _Structure) -> list[tuple[str, float]]:
    """Title and legend lines, each with its font size."""
    units = f", {fabric.scalable_units} scalable units × {fabric.rails} rails" if fabric.scalable_units else ""
    lines: list[tuple[str, float]] = [(f"{plan.name}: {plane} plane, {fabric.topology} {fabric.link_layer}{units}", 16)]
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
        lines.append((f"RoCE: {roce_contract(plan.roce)}", 11))
    elif plan.infiniband is not None:
        sm = plan.infiniband.subnet_manager
        lines.append((f"InfiniBand: MTU {plan.infiniband.mtu}, subnet manager {sm.kind} on {len(sm.nodes)} node(s), routing {sm.routing_engine}", 11))
    return lines


def _tbps(gbps: int) -> str:
    return f"{gbps / 1000:g} Tb/s" if gbps >= 1000 else f"{gbps} Gb/s"


def roce_contract(roce: RoceSpec) -> str:
    """The lossless RoCE contract in one line (what hosts mark, what switches honour).

    Example:
        >>> roce_contract(RoceSpec()).startswith("DSCP 26 (ToS 106) → priority 3 → TC 3, PFC on [3]")
        True
    """
    ecn, cnp, wd = roce.ecn, roce.cnp, roce.pfc_watchdog
    watchdog = f"PFC watchdog {wd.detection_ms} ms {wd.action}" if wd.enabled else "PFC watchdog off"
    return (
        f"DSCP {roce.dscp} (ToS {roce.effective_tos}) → priority {roce.priority} → TC {roce.traffic_class}, "
        f"PFC on {list(roce.pfc_priorities)}, {roce.bandwidth_percent} % bandwidth; CNP DSCP {cnp.dscp} → priority {cnp.priority}"
        f"{' strict' if cnp.strict else ''}; ECN {ecn.min_threshold_bytes // 1000} KB-{ecn.max_threshold_bytes / 1e6:g} MB "
        f"at {ecn.probability} %; {watchdog}"
    )
