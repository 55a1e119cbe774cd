"""Build the compute fabric plan: switches with ASNs, loopbacks and management addresses, and the cabling."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from ipaddress import IPv4Network

from fabric.model.cluster import ClusterSpec
from fabric.model.topology import FabricSpec
from fabric.plan import addressing
from fabric.plan.compute.sizing import FabricMember, FabricSizing, format_ratio, leaf_slot
from fabric.plan.ports import MGMT_INTERFACE, port_name
from fabric.plan.quick_init import quick_init
from fabric.plan.types import FabricPlan, Link, PodsPlan, SwitchPlan, TierStats


@quick_init  # built by the hundred thousand: fabric.plan.quick_init
@dataclass(frozen=True, slots=True)
class HostAttachment:
    """Where one node port is cabled and how it is addressed."""

    leaf: str
    leaf_port: str
    rail: int | None
    subnet: str | None = None
    leaf_address: str | None = None
    host_address: str | None = None


def build_switches(spec: ClusterSpec, sizing: FabricSizing) -> tuple[tuple[SwitchPlan, ...], tuple[SwitchPlan, ...]]:
    """Spines and leaves with stable ids, names, ASNs, loopbacks and management addresses."""
    fabric = spec.fabric
    assert fabric is not None
    underlay, mgmt = fabric.underlay, fabric.management
    pool = mgmt.mgmt_pool or addressing.default_mgmt_pool(spec.planes.oob.cidr)
    prefix = spec.planes.oob.cidr.prefixlen
    routed = sizing.link_layer == "ethernet"
    spines = tuple(
        SwitchPlan(
            name=f"spine{n:02d}",
            tier="spine",
            switch_id=n,
            model=fabric.spine.model,
            nos=fabric.spine.nos,
            nos_version=fabric.spine.release,
            asn=underlay.spine_asn if routed else None,
            loopback=addressing.allocate_loopback(underlay.loopback_pool, n, f"spine {n}") if routed else None,
            mgmt_interface=MGMT_INTERFACE[fabric.spine.nos],
            mgmt_address=addressing.allocate_mgmt(pool, n + 1, f"spine {n}", prefix),
        )
        for n in range(1, sizing.spines + 1)
    )
    leaves = tuple(_leaf(spec, sizing, n, pool, prefix) for n in range(1, sizing.leaves + 1))
    return spines, leaves


def _leaf(spec: ClusterSpec, sizing: FabricSizing, n: int, pool: IPv4Network, prefix: int) -> SwitchPlan:
    fabric = spec.fabric
    assert fabric is not None
    underlay, mgmt = fabric.underlay, fabric.management
    routed = sizing.link_layer == "ethernet"
    su, rail = divmod(n - 1, sizing.rails) if fabric.topology == "rail-optimized" else (None, None)
    name = f"leaf-su{su + 1:02d}-r{rail + 1}" if su is not None and rail is not None else f"leaf{n:02d}"
    return SwitchPlan(
        name=name,
        tier="leaf",
        switch_id=n,
        model=fabric.leaf.model,
        nos=fabric.leaf.nos,
        nos_version=fabric.leaf.release,
        asn=underlay.leaf_asn_base + n - 1 if routed else None,
        loopback=addressing.allocate_loopback(underlay.loopback_pool, underlay.leaf_loopback_offset + n, f"leaf {n}") if routed else None,
        mgmt_interface=MGMT_INTERFACE[fabric.leaf.nos],
        mgmt_address=addressing.allocate_mgmt(pool, mgmt.mgmt_leaf_offset + n, f"leaf {n}", prefix),
        scalable_unit=su + 1 if su is not None else None,
        rail=rail + 1 if rail is not None else None,
    )


def cable_hosts(
    spec: ClusterSpec, sizing: FabricSizing, leaves: tuple[SwitchPlan, ...], members: list[FabricMember]
) -> tuple[list[Link], dict[tuple[int, int], HostAttachment]]:
    """Host links (node port <-> leaf port) and, per (node id, port), where it lands."""
    fabric = spec.fabric
    assert fabric is not None
    compute = spec.planes.compute
    routed = sizing.link_layer == "ethernet"
    links: list[Link] = []
    attached: dict[tuple[int, int], HostAttachment] = {}
    for member in members:
        leaf_id, position, rail = leaf_slot(fabric, sizing, member, compute.max_ports_per_node)
        leaf = leaves[leaf_id - 1]
        leaf_port = port_name(leaf.model, leaf.nos, position, sizing.speed_gbps)
        subnet = leaf_ip = host_ip = None
        if routed and compute.cidr is not None:
            subnet, leaf_ip, host_ip = addressing.allocate_host_link(compute.cidr, member.node_id, member.port, compute.max_ports_per_node)
        attached[(member.node_id, member.port)] = HostAttachment(leaf.name, leaf_port, rail, subnet, leaf_ip, host_ip)
        links.append(
            Link(
                "host",
                leaf.name,
                leaf_port,
                member.hostname,
                member.interface,
                sizing.speed_gbps,
                fabric.cable_length_m.host,
                "compute",
                subnet,
                leaf_ip,
                host_ip,
            )
        )
    return links, attached


def cable_fabric(fabric: FabricSpec, sizing: FabricSizing, leaves: tuple[SwitchPlan, ...], spines: tuple[SwitchPlan, ...]) -> list[Link]:
    """Leaf uplinks: uplink j of a leaf goes to spine ``j % spines``; /31s keyed by (leaf id, uplink)."""
    underlay = fabric.underlay
    numbered = sizing.link_layer == "ethernet" and underlay.addressing == "p2p-31"
    links: list[Link] = []
    for leaf in leaves:
        for j in range(sizing.uplinks_per_leaf):
            spine = spines[j % sizing.spines]
            spine_index = (leaf.switch_id - 1) * sizing.parallel_links + j // sizing.spines
            subnet = spine_ip = leaf_ip = None
            if numbered:
                subnet, spine_ip, leaf_ip = addressing.allocate_p2p(underlay.p2p_pool, leaf.switch_id, j, sizing.leaf_radix)
            links.append(
                Link(
                    "fabric",
                    leaf.name,
                    port_name(leaf.model, leaf.nos, sizing.first_uplink + j, sizing.up_speed),
                    spine.name,
                    port_name(spine.model, spine.nos, spine_index, sizing.up_speed),
                    sizing.up_speed,
                    fabric.cable_length_m.fabric,
                    "compute",
                    subnet,
                    leaf_ip,
                    spine_ip,
                )
            )
    return links


def build_fabric(
    spec: ClusterSpec,
    sizing: FabricSizing,
    members: list[FabricMember],
    switches: tuple[tuple[SwitchPlan, ...], tuple[SwitchPlan, ...]] | None = None,
) -> tuple[FabricPlan, dict[tuple[int, int], HostAttachment]]:
    """The whole fabric plan, and the attachment of every node port; ``switches``: the (spines, leaves) to cable (as a
    multi-plane fabric renames them before cabling), None: those of ``build_switches``."""
    fabric = spec.fabric
    assert fabric is not None
    spines, leaves = switches if switches is not None else build_switches(spec, sizing)
    host_links, attached = cable_hosts(spec, sizing, leaves, members)
    fabric_links = cable_fabric(fabric, sizing, leaves, spines)
    used_spine_ports = len(leaves) * sizing.parallel_links
    spine_tier = TierStats("spine", len(spines), sizing.spine_radix, used_spine_ports, used_spine_ports * sizing.up_speed, 0, "n/a")
    links = tuple(host_links + fabric_links)
    host_bw, up_bw = len(host_links) * sizing.speed_gbps, len(fabric_links) * sizing.up_speed
    plan = fabric_plan(fabric, sizing, (leaves, spines, links), upper_tiers=(spine_tier,), host_bw=host_bw, up_bw=up_bw)
    return plan, attached


def fabric_plan(
    fabric: FabricSpec,
    sizing: FabricSizing,
    built: tuple[tuple[SwitchPlan, ...], tuple[SwitchPlan, ...], tuple[Link, ...]],
    *,
    upper_tiers: tuple[TierStats, ...],
    host_bw: int,
    up_bw: int,
    pods: PodsPlan | None = None,
) -> FabricPlan:
    """The fabric plan of two or three tiers: the leaf tier's figures from the sizing, bisection and oversubscription.

    Args:
        fabric: The fabric definition.
        sizing: The leaf tier's sizing.
        built: The leaves, the spines and every cable.
        upper_tiers: The figures of the tiers above the leaves, spines first.
        host_bw: The bandwidth of every host port, Gb/s.
        up_bw: The bandwidth of the narrowest tier above the hosts, Gb/s: the cut is the lesser of the two.
        pods: The pods and super-spines of a three-tier fabric.

    Returns:
        The fabric plan.
    """
    leaves, spines, links = built
    leaf_tier = TierStats(
        "leaf",
        len(leaves),
        sizing.leaf_radix,
        sizing.host_ports_per_leaf + sizing.uplinks_per_leaf,
        sizing.host_ports_per_leaf * sizing.speed_gbps,
        sizing.uplinks_per_leaf * sizing.up_speed,
        format_ratio(sizing.oversubscription),
    )
    cut = min(host_bw, up_bw)
    return FabricPlan(
        topology=fabric.topology,
        link_layer="infiniband" if sizing.link_layer == "infiniband" else "ethernet",
        scalable_units=(len(leaves) // sizing.rails) if fabric.topology == "rail-optimized" else 0,
        rails=sizing.rails,
        host_ports_per_leaf=sizing.host_ports_per_leaf,
        uplinks_per_leaf=sizing.uplinks_per_leaf,
        host_speed_gbps=sizing.speed_gbps,
        uplink_speed_gbps=sizing.up_speed,
        mtu=fabric.switch_mtu,
        leaves=leaves,
        spines=spines,
        links=links,
        tiers=(leaf_tier, *upper_tiers),
        bisection_gbps=cut // 2,
        bisection_both_directions_gbps=cut,
        oversubscription=format_ratio(Fraction(host_bw, up_bw)) if up_bw else "n/a",
        underlay=fabric.underlay,
        management=fabric.management,
        pods=pods,
    )
