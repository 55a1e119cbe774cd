"""The plan-wide files as they were built before issue 36's speed-up, one row and one cable at a time: the reference that
``fabric.render.cabling`` and ``fabric.render.diagrams.topology_structure`` must match byte for byte and field for field."""

from __future__ import annotations

import csv
import io
from collections import defaultdict

from fabric.plan.compute.planes import plane_of
from fabric.plan.natural import natural_key
from fabric.plan.oob.types import OobLink
from fabric.plan.storage.types import StorageLink
from fabric.plan.types import ClusterPlan, FabricPlan, Link, NodePlan, SwitchPlan
from fabric.render.cabling import COLUMNS
from fabric.render.diagrams.topology_structure import Column, NodeBox, Structure, _columns, _leaf_key


def cables(plan: ClusterPlan) -> list[Link | OobLink | StorageLink]:
    """Every cable of the plan, in ``cabling.csv`` order."""
    storage = [x for net in plan.storage for x in net.links]
    return [*(plan.fabric.links if plan.fabric else ()), *(plan.oob.links if plan.oob else ()), *storage]


def cabling(plan: ClusterPlan) -> str:
    """Every row through ``csv.writer``."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    planes = plan.fabric is not None and any(plane_of(s.name) for s in plan.fabric.spines + plan.fabric.leaves)
    writer.writerow((*COLUMNS, "fabric_plane") if planes else COLUMNS)
    where = {device: (rack, str(unit)) for device, rack, unit in plan.positions}
    for x in cables(plan):
        ends = (*where.get(x.a_device, ("", "")), *where.get(x.b_device, ("", "")))
        row = (x.a_device, x.a_port, x.b_device, x.b_port, x.speed_gbps, x.cable_m, x.plane, x.kind, *ends)
        if planes:
            plane = plane_of(x.a_device) if isinstance(x, Link) else None
            row = (*row, f"p{plane}" if plane else "")
        writer.writerow(row)
    return out.getvalue()


def plane_structure(plan: ClusterPlan, fabric: FabricPlan, links: list[Link]) -> Structure:
    """One pass over the links, a box per (leaf, node) pair."""
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
        if link.kind == "fabric" and switches[link.a_device].tier != "leaf":
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
    supers_sorted = sorted((switches[n] for n in supers), key=lambda x: natural_key(x.name))
    return Structure(
        spine_groups,
        columns,
        uplinks,
        uplink_speeds,
        dict(downlinks),
        sum(host_count.values()),
        sum(pair_count.values()),
        host_speeds,
        supers_sorted,
        dict(super_uplinks),
        super_speeds,
    )


def _attach_nodes(columns: list[Column], nodes: dict[str, NodePlan], host_count: dict[tuple[str, str], int], links: list[Link]) -> None:
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
