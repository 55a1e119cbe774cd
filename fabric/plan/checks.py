"""Fabric-wide checks that need derived numbers: plane capacity, port strides, ASN ranges, SM switches."""

from __future__ import annotations

from collections.abc import Iterator

from fabric.errors import Finding
from fabric.model.cluster import ClusterSpec
from fabric.model.planes import PLANE_NAMES
from fabric.plan.addressing import RESERVED_LOW
from fabric.plan.types import FabricPlan

PRIVATE_ASN_2B = (64512, 65534)
PRIVATE_ASN_4B = (4200000000, 4294967294)


def check_planes(spec: ClusterSpec) -> Iterator[Finding]:
    """Each plane's block holds every node's ports; no hardware has more ports on a plane than its stride."""
    for plane in PLANE_NAMES:
        plane_spec = getattr(spec.planes, plane)
        if plane_spec.cidr is None or spec.target != "onprem":
            continue
        stride = plane_spec.max_ports_per_node
        top_id = 0
        for gi, group in enumerate(spec.nodes):
            profile = spec.profile_of(group)
            ports = profile.ports.get(plane) if profile else None
            if ports is None or group.count == 0:
                continue
            top_id = max(top_id, group.id_offset + group.count)
            if ports.count > stride:
                yield Finding(
                    ("planes", plane, "max_ports_per_node"),
                    f"'{group.hardware or group.group}' (nodes[{gi}]) has {ports.count} {plane} ports but the plane allows {stride} per node; "
                    f"raise max_ports_per_node to {ports.count} (this renumbers the plane) or override the hardware",
                )
        routed_pairs = plane == "compute" and spec.planes.compute.transport == "roce"
        needed = top_id * stride * 2 if routed_pairs else RESERVED_LOW + top_id * stride + 1
        if top_id and needed > plane_spec.cidr.num_addresses:
            prefix = 32 - max(needed - 1, 1).bit_length()
            what = "a /31 per port" if routed_pairs else f"{RESERVED_LOW} reserved + {stride} per node id"
            yield Finding(
                ("planes", plane, "cidr"),
                f"{plane_spec.cidr} holds {plane_spec.cidr.num_addresses} addresses but node ids up to {top_id} need {needed} "
                f"({what}); use a /{prefix} or larger",
            )


def check_fabric_plan(spec: ClusterSpec, fabric: FabricPlan) -> Iterator[Finding]:
    """ASNs stay inside one private range and clear of the spine ASN; switch-hosted SMs name real switches."""
    if fabric.link_layer == "ethernet" and fabric.leaves:
        underlay = fabric.underlay
        first, last = underlay.leaf_asn_base, underlay.leaf_asn_base + len(fabric.leaves) - 1
        ranges = (PRIVATE_ASN_2B, PRIVATE_ASN_4B)
        if not any(lo <= first and last <= hi for lo, hi in ranges):
            yield Finding(
                ("fabric", "underlay", "leaf_asn_base"),
                f"leaf ASNs {first}..{last} leave the private ranges 64512-65534 / 4200000000-4294967294; "
                "start lower or use a 4-byte base such as 4200000001",
            )
        if first <= underlay.spine_asn <= last:
            yield Finding(
                ("fabric", "underlay", "spine_asn"), f"spine ASN {underlay.spine_asn} falls inside the leaf ASNs {first}..{last}; move one of them"
            )
    if spec.fabric is not None and spec.fabric.spines is None and len(fabric.spines) == 1 and fabric.leaves:
        yield Finding(
            ("fabric", "spines"),
            f"the planner chose a single spine ({fabric.spines[0].name}): it carries all traffic between the {len(fabric.leaves)} "
            "leaves, so losing it (failure or upgrade) cuts every leaf off from every other; set spines: 2 or more "
            "(with uplinks_per_leaf a multiple of it), or set spines: 1 to accept this",
            "warning",
        )
    ib = spec.infiniband
    if ib is not None and ib.subnet_manager.kind == "switch":
        names = {s.name for s in fabric.switches}
        for ni, node in enumerate(ib.subnet_manager.nodes):
            if node.host not in names:
                yield Finding(
                    ("infiniband", "subnet_manager", "nodes", ni, "host"),
                    f"'{node.host}' is not a switch of the fabric; use e.g. {sorted(names)[:3]}",
                )
