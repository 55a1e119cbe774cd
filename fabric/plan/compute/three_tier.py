"""Three-tier fabrics: pods of leaves and spines, joined by planes of super-spines (a five-stage Clos).

Shape (RFC 7938 section 3.2, https://www.rfc-editor.org/rfc/rfc7938#section-3.2): each leaf reaches every spine of its
pod; spine k of every pod reaches every super-spine of plane k. Sizing, from the leaves up:

- spines per pod: ``fabric.spines`` or one per leaf uplink (a leaf's uplinks spread one per spine);
- leaves per pod: as many as a spine's ports take at the spine tier's oversubscription target, in whole scalable units on
  a rail-optimized fabric (a pod holds every rail of its units);
- super-spines per plane: the fewest dividing a spine's uplinks whose radix takes ``super_spine.pods`` pods.

Stability: every number comes from stable ids and the definition's fixed sizes, never from how many nodes there are. Leaf N
keeps the two-tier leaf's id, name, ASN, loopback and /31s; spine N of pod P is ``(P - 1) * spines_per_pod + k``; the
super-spines are sized for ``pods`` (the build-out) and take addresses from the top of the pools. So a pod added within
``pods`` adds switches and cables and changes none that exist.

ASNs (RFC 7938 section 5.2.1): one ASN shared by all super-spines, one per pod shared by its spines, one per leaf.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from ipaddress import IPv4Network

from fabric.model.cluster import ClusterSpec
from fabric.model.topology import FabricSpec, SuperSpineSpec
from fabric.plan import addressing
from fabric.plan.compute.pods import PodSizing
from fabric.plan.compute.sizing import FabricMember, FabricSizing, format_ratio
from fabric.plan.compute.two_tier import HostAttachment, build_switches, cable_hosts, fabric_plan
from fabric.plan.ports import MGMT_INTERFACE, port_name
from fabric.plan.types import FabricPlan, Link, PodsPlan, SwitchPlan, TierStats

Switches = tuple[tuple[SwitchPlan, ...], tuple[SwitchPlan, ...], tuple[SwitchPlan, ...]]
"""A three-tier fabric's leaves, spines and super-spines."""


def three_tier_switches(spec: ClusterSpec, sizing: FabricSizing, pods: PodSizing) -> Switches:
    """The leaves (the two-tier leaves), the pods' spines and the super-spines, with ids, names, ASNs and addresses."""
    _, leaves = build_switches(spec, sizing)
    spines = tuple(_pod_spine(spec, sizing, pods, n) for n in range(1, pods.pods * pods.spines_per_pod + 1))
    super_spines = tuple(_super_spine(spec, sizing, pods, m) for m in range(1, pods.super_spines + 1))
    return leaves, spines, super_spines


def build_three_tier(
    spec: ClusterSpec, sizing: FabricSizing, pods: PodSizing, members: list[FabricMember], switches: Switches | None = None
) -> tuple[FabricPlan, dict[tuple[int, int], HostAttachment]]:
    """The whole three-tier fabric plan, and the attachment of every node port.

    Args:
        spec: The definition (of one plane, on a multi-plane fabric).
        sizing: The leaf tier's sizing.
        pods: The pods' and super-spines' sizing.
        members: The node ports to cable.
        switches: The switches to cable (``three_tier_switches``, as a multi-plane fabric renames them before cabling);
            None: those of ``three_tier_switches``.
    """
    fabric = spec.fabric
    assert fabric is not None
    ss = fabric.super_spine
    assert ss is not None
    leaves, spines, super_spines = switches if switches is not None else three_tier_switches(spec, sizing, pods)
    host_links, attached = cable_hosts(spec, sizing, leaves, members)
    leaf_links = list(_cable_leaves(fabric, sizing, pods, leaves, spines))
    spine_links = list(_cable_spines(fabric, ss, pods, spines, super_spines, routed=sizing.link_layer == "ethernet"))
    up_speed = sizing.up_speed
    host_bw, leaf_up_bw, spine_up_bw = len(host_links) * sizing.speed_gbps, len(leaf_links) * up_speed, len(spine_links) * pods.speed_gbps
    cut = min(host_bw, leaf_up_bw, spine_up_bw) if pods.pods > 1 else min(host_bw, leaf_up_bw)
    used_ss = pods.pods * pods.parallel
    upper = (
        TierStats(
            "spine",
            len(spines),
            sizing.spine_radix,
            pods.spine_down + pods.spine_up,
            pods.spine_down * up_speed,
            pods.spine_up * pods.speed_gbps,
            format_ratio(Fraction(pods.spine_down * up_speed, pods.spine_up * pods.speed_gbps)),
        ),
        TierStats("superspine", len(super_spines), pods.super_spine_radix, used_ss, used_ss * pods.speed_gbps, 0, "n/a"),
    )
    plan = fabric_plan(
        fabric,
        sizing,
        (leaves, spines, tuple(host_links + leaf_links + spine_links)),
        upper_tiers=upper,
        host_bw=host_bw,
        up_bw=cut,
        pods=PodsPlan(
            pods=pods.pods,
            pods_planned=pods.pods_planned,
            max_pods=pods.max_pods,
            leaves_per_pod=pods.leaves_per_pod,
            spines_per_pod=pods.spines_per_pod,
            spine_downlinks=pods.spine_down,
            spine_uplinks=pods.spine_up,
            super_spines_per_plane=pods.super_spines_per_plane,
            parallel_links=pods.parallel,
            uplink_speed_gbps=pods.speed_gbps,
            super_spines=super_spines,
        ),
    )
    return plan, attached


def _mgmt_pool(spec: ClusterSpec) -> tuple[IPv4Network, int]:
    fabric = spec.fabric
    assert fabric is not None
    return fabric.management.mgmt_pool or addressing.default_mgmt_pool(spec.planes.oob.cidr), spec.planes.oob.cidr.prefixlen


def _pod_spine(spec: ClusterSpec, sizing: FabricSizing, pods: PodSizing, n: int) -> SwitchPlan:
    """Spine ``n`` (pod ``(n - 1) // spines_per_pod + 1``): the two-tier spine's loopback and management offsets, the pod's ASN."""
    fabric = spec.fabric
    assert fabric is not None
    assert fabric.super_spine is not None
    pod, k = divmod(n - 1, pods.spines_per_pod)
    routed = sizing.link_layer == "ethernet"
    pool, prefix = _mgmt_pool(spec)
    return SwitchPlan(
        name=f"pod{pod + 1:02d}-spine{k + 1:02d}",
        tier="spine",
        switch_id=n,
        model=fabric.spine.model,
        nos=fabric.spine.nos,
        nos_version=fabric.spine.release,
        asn=fabric.super_spine.pod_asn_base + pod if routed else None,
        loopback=addressing.allocate_loopback(fabric.underlay.loopback_pool, n, f"spine {n}") if routed else None,
        mgmt_interface=MGMT_INTERFACE[fabric.spine.nos],
        mgmt_address=addressing.allocate_mgmt(pool, n + 1, f"spine {n}", prefix),
    )


def _super_spine(spec: ClusterSpec, sizing: FabricSizing, pods: PodSizing, m: int) -> SwitchPlan:
    """Super-spine ``m`` (plane ``(m - 1) // per_plane + 1``): addresses counted down from the top of each pool."""
    fabric = spec.fabric
    assert fabric is not None
    ss = fabric.super_spine
    assert ss is not None
    plane, i = divmod(m - 1, pods.super_spines_per_plane)
    routed = sizing.link_layer == "ethernet"
    pool, prefix = _mgmt_pool(spec)
    loopbacks = fabric.underlay.loopback_pool
    return SwitchPlan(
        name=f"superspine{plane + 1:02d}-{i + 1:02d}",
        tier="superspine",
        switch_id=m,
        model=ss.model,
        nos=ss.nos,
        nos_version=ss.release,
        asn=ss.asn if routed else None,
        loopback=addressing.allocate_loopback(loopbacks, loopbacks.num_addresses - 1 - m, f"super-spine {m}") if routed else None,
        mgmt_interface=MGMT_INTERFACE[ss.nos],
        mgmt_address=addressing.allocate_mgmt(pool, pool.num_addresses - 1 - m, f"super-spine {m}", prefix),
    )


def _cable_leaves(
    fabric: FabricSpec, sizing: FabricSizing, pods: PodSizing, leaves: tuple[SwitchPlan, ...], spines: tuple[SwitchPlan, ...]
) -> Iterator[Link]:
    """Uplink j of a leaf goes to spine ``j % spines_per_pod`` of its pod; /31s keyed by (leaf id, uplink) as on two tiers."""
    underlay = fabric.underlay
    numbered = sizing.link_layer == "ethernet" and underlay.addressing == "p2p-31"
    per_pod = pods.spines_per_pod
    for leaf in leaves:
        pod, position = divmod(leaf.switch_id - 1, pods.leaves_per_pod)
        for j in range(sizing.uplinks_per_leaf):
            spine = spines[pod * per_pod + j % per_pod]
            subnet = spine_ip = leaf_ip = None
            if numbered:
                subnet, spine_ip, leaf_ip = addressing.allocate_p2p(underlay.p2p_pool, leaf.switch_id, j, sizing.leaf_radix)
            yield Link(
                "fabric",
                leaf.name,
                port_name(leaf.model, leaf.nos, sizing.first_uplink + j, sizing.up_speed),
                spine.name,
                port_name(spine.model, spine.nos, position * pods.leaf_parallel + j // per_pod, sizing.up_speed),
                sizing.up_speed,
                fabric.cable_length_m.fabric,
                "compute",
                subnet,
                leaf_ip,
                spine_ip,
            )


def _cable_spines(
    fabric: FabricSpec, ss: SuperSpineSpec, pods: PodSizing, spines: tuple[SwitchPlan, ...], super_spines: tuple[SwitchPlan, ...], *, routed: bool
) -> Iterator[Link]:
    """Uplink u of spine k of pod P goes to super-spine ``u % per_plane`` of plane k, port ``(P - 1) * parallel + u // per_plane``."""
    numbered = routed and fabric.underlay.addressing == "p2p-31"
    per_plane = pods.super_spines_per_plane
    for spine in spines:
        pod, k = divmod(spine.switch_id - 1, pods.spines_per_pod)
        for u in range(pods.spine_up):
            top = super_spines[k * per_plane + u % per_plane]
            subnet = top_ip = spine_ip = None
            if numbered:
                subnet, top_ip, spine_ip = addressing.allocate_p2p(
                    ss.p2p_pool, spine.switch_id, u, pods.spine_up_radix, "fabric.super_spine.p2p_pool"
                )
            yield Link(
                "fabric",
                spine.name,
                port_name(spine.model, spine.nos, pods.spine_first_uplink + u, pods.speed_gbps),
                top.name,
                port_name(top.model, top.nos, pod * pods.parallel + u // per_plane, pods.speed_gbps),
                pods.speed_gbps,
                fabric.cable_length_m.fabric,
                "compute",
                subnet,
                spine_ip,
                top_ip,
            )
