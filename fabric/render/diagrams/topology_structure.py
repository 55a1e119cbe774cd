"""What the topology diagram shows of a plane (``fabric.render.diagrams.topology`` draws it): spine groups, leaf
columns with the node boxes under them, and the cable bundles between them, from bulk counts over the links."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter, not_

from fabric.plan.natural import natural_key
from fabric.plan.types import ClusterPlan, FabricPlan, Link, NodePlan, SwitchPlan

MAX_LEAVES_PER_COLUMN = 16  # leaves per column when the fabric has no scalable units
_A, _B, _SPEED, _KIND = attrgetter("a_device"), attrgetter("b_device"), attrgetter("speed_gbps"), attrgetter("kind")


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
    """A plane\'s links reduced to spine groups, leaf columns with their node boxes, and the bundles between them.

    The cables are counted by their ends in bulk (``collections.Counter`` over ``operator.attrgetter``): the Python-level
    work grows with switch pairs and node groups, not with host cables.
    """
    switches = {s.name: s for s in fabric.switches}
    is_fabric = list(map("fabric".__eq__, map(_KIND, links)))
    hosts = list(compress(links, map(not_, is_fabric)))
    fabric_links = list(compress(links, is_fabric))
    host_leaves = list(map(_A, hosts))
    a_ends, b_ends, speeds = list(map(_A, fabric_links)), list(map(_B, fabric_links)), list(map(_SPEED, fabric_links))
    upper = {name for name in set(a_ends) if switches[name].tier != "leaf"}  # spine -> super-spine cables (three tiers)
    leaf_a, leaf_b, leaf_speeds = a_ends, b_ends, speeds
    spine_a: list[str] = []
    spine_b: list[str] = []
    spine_speeds: list[int] = []
    if upper:  # three tiers: the spines' cables to the super-spines apart from the leaves'
        up = list(map(upper.__contains__, a_ends))
        low = list(map(not_, up))
        leaf_a, leaf_b, leaf_speeds = list(compress(a_ends, low)), list(compress(b_ends, low)), list(compress(speeds, low))
        spine_a, spine_b, spine_speeds = list(compress(a_ends, up)), list(compress(b_ends, up)), list(compress(speeds, up))
    pair_count = Counter(zip(leaf_a, leaf_b, strict=True))  # (leaf, spine) -> cables, in cable order
    downlinks = Counter(b_ends)
    downlinks.update(host_leaves)
    signature: dict[str, list[tuple[str, int]]] = defaultdict(list)  # spine -> its (leaf, cables), one entry per leaf
    for (leaf, spine), count in pair_count.items():
        signature[spine].append((leaf, count))
    groups: dict[frozenset[tuple[str, int]], list[SwitchPlan]] = defaultdict(list)
    for spine in sorted(signature, key=natural_key):
        groups[frozenset(signature[spine])].append(switches[spine])  # as a set: the same leaves, whatever their order
    spine_groups = list(groups.values())
    group_of = {s.name: g for g, members in enumerate(spine_groups) for s in members}
    uplinks = {(leaf, group_of[spine]): count for (leaf, spine), count in pair_count.items()}
    leaves = set(host_leaves).union(leaf_a)
    columns = _columns(sorted((switches[n] for n in leaves), key=_leaf_key))
    host_speeds = list(map(_SPEED, hosts))
    _attach_nodes(columns, plan.nodes, host_leaves, list(map(_B, hosts)), host_speeds)
    return Structure(
        spine_groups,
        columns,
        uplinks,
        set(leaf_speeds),
        dict(downlinks),
        len(hosts),
        sum(pair_count.values()),
        set(host_speeds),
        sorted((switches[n] for n in set(spine_b)), key=lambda x: natural_key(x.name)),
        dict(Counter(spine_a)),
        set(spine_speeds),
    )


def _attach_nodes(columns: list[Column], nodes: Iterable[NodePlan], leaves: list[str], hosts: list[str], speeds: list[int]) -> None:
    """One box per node group and column, with its cables per leaf of the column: the host cables given by their
    ``leaves``, ``hosts`` and ``speeds``, counted in bulk."""
    column_of = {leaf.name: c for c, column in enumerate(columns) for leaf in column.leaves}
    group: dict[str, str] = {}
    about: dict[str, tuple[str, str, int | None]] = {}
    for node in nodes:
        group[node.hostname] = node.group
        about[node.hostname] = (node.group, node.hardware, node.scalable_unit)
    boxes: dict[tuple[int, str], NodeBox] = {}
    for (leaf, g, speed), count in Counter(zip(leaves, map(group.__getitem__, hosts), speeds, strict=True)).items():
        box = boxes.get((column_of[leaf], g))
        if box is None:
            box = boxes[column_of[leaf], g] = NodeBox(g)
        box.per_leaf[leaf] = box.per_leaf.get(leaf, 0) + count
        box.speeds.add(speed)
    for c, host in set(zip(map(column_of.__getitem__, leaves), hosts, strict=True)):
        g, hardware, unit = about[host]
        box = boxes[c, g]
        box.nodes.add(host)
        box.hardware.add(hardware)
        if unit is not None:
            box.units.add(unit)
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
