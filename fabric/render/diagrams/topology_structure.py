"""What the topology diagram shows of a plane (``fabric.render.diagrams.topology`` draws it): spine groups, leaf
columns with the node boxes under them, and the cable bundles between them, from one pass over the links."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from fabric.plan.natural import natural_key
from fabric.plan.types import ClusterPlan, FabricPlan, Link, NodePlan, SwitchPlan

MAX_LEAVES_PER_COLUMN = 16  # leaves per column when the fabric has no scalable units


@dataclass(slots=True)
class NodeBox:
    """The nodes of one group attached to one column, with their cables per leaf."""

    group: str
    nodes: set[str] = field(default_factory=set[str])
    units: set[int] = field(default_factory=set[int])
    hardware: set[str] = field(default_factory=set[str])
    per_leaf: dict[str, int] = field(default_factory=dict[str, int])
    speeds: set[int] = field(default_factory=set[int])


@dataclass(slots=True)
class Column:
    """One column of the picture: a scalable unit's leaves (or a run of leaves) and the node boxes under them."""

    title: str
    leaves: list[SwitchPlan]
    boxes: list[NodeBox] = field(default_factory=list["NodeBox"])


@dataclass(slots=True)
class Structure:
    """A plane's fabric reduced to what the picture shows: spine groups, leaf columns, bundles."""

    spine_groups: list[list[SwitchPlan]]
    columns: list[Column]
    uplinks: dict[tuple[str, int], int]  # (leaf, spine group) -> cables from the leaf to each spine of the group
    uplink_speeds: set[int]
    downlinks: dict[str, int]  # switch -> host cables (leaf) or leaf cables (spine)
    host_links: int
    fabric_links: int  # leaf <-> spine
    host_speeds: set[int]
    supers: list[SwitchPlan] = field(default_factory=list[SwitchPlan])  # super-spines of a three-tier fabric
    super_uplinks: dict[str, int] = field(default_factory=dict[str, int])  # spine -> cables to the super-spines
    super_speeds: set[int] = field(default_factory=set[int])


def plane_structure(plan: ClusterPlan, fabric: FabricPlan, links: list[Link]) -> Structure:
    """A plane\'s links reduced to spine groups, leaf columns with their node boxes, and the bundles between them."""
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
    return Structure(
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


def _attach_nodes(columns: list[Column], nodes: dict[str, NodePlan], host_count: dict[tuple[str, str], int], links: list[Link]) -> None:
    """One box per node group and column, with its cables per leaf of the column."""
    column_of = {leaf.name: c for c, column in enumerate(columns) for leaf in column.leaves}
    boxes: dict[tuple[int, str], NodeBox] = {}
    for (leaf, host), count in sorted(host_count.items()):
        node = nodes[host]
        box = boxes.setdefault((column_of[leaf], node.group), NodeBox(node.group))
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


def _columns(leaves: list[SwitchPlan]) -> list[Column]:
    """One column per scalable unit (split if it has too many leaves), else runs of leaves in natural order."""
    runs: dict[int | None, list[SwitchPlan]] = defaultdict(list)
    for leaf in leaves:
        runs[leaf.scalable_unit].append(leaf)
    columns: list[Column] = []
    for unit, members in runs.items():
        for start in range(0, len(members), MAX_LEAVES_PER_COLUMN):
            chunk = members[start : start + MAX_LEAVES_PER_COLUMN]
            title = f"SU {unit}" if unit is not None else f"leaves {start + 1}-{start + len(chunk)}"
            if unit is not None and len(members) > MAX_LEAVES_PER_COLUMN:
                title += f" ({start // MAX_LEAVES_PER_COLUMN + 1})"
            columns.append(Column(title, chunk))
    return columns
