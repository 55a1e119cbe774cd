"""Multi-plane compute fabrics: ``fabric.planes`` parallel planes, each its own leaf/spine (or three-tier) fabric.

The designs (cited in docs/definition/planes.md): NVIDIA DGX SuperPOD B300's twin-planar compute fabric ("Each GPU has
2x 400GbE connectivity through two different planes"), Alibaba HPN's dual-plane dual-ToR (SIGCOMM 2024: each NIC port to
a different ToR, the ToRs of a port forming one plane).

Which node port goes to which plane (``fabric.plane_split``; the ports are listed NIC by NIC, ``ports_per_nic`` each):

- ``port``: port p is port ``p % ports_per_nic`` of its NIC and goes to plane ``(p % ports_per_nic) % planes + 1``:
  one port of every NIC per plane (SuperPOD B300; HPN's dual-ToR is the same split with two planes);
- ``nic``: NIC ``n = p // ports_per_nic`` goes whole to plane ``n % planes + 1``: each GPU's NICs across planes.

Each plane is planned as the one-plane fabric of its ports alone (plane-local port q is the node's q-th port on that
plane, so rail q of plane k), its switches named ``p<k>-<name>`` (``p1-leaf-su01-r1``, ``p2-spine01``,
``p1-pod01-spine01``, ``p2-superspine01-01``). Switch ids stay plane-local (pods and rails derive from them).

Keeping planes apart, by construction: no cable joins two planes (each plane is cabled alone), and every plane has
its own address blocks and ASNs, so even a mis-cable cannot bring up a BGP session or a /31 between planes:

- pools: plane k takes the k-th of ``2**ceil(log2(planes))`` equal blocks of ``underlay.loopback_pool``,
  ``underlay.p2p_pool``, ``super_spine.p2p_pool`` and ``planes.compute.cidr`` (the host /31s), and a node's ports on
  it are strided by ``max_ports_per_node // planes``;
- ASNs: leaves are numbered across planes (plane k's leaf n has ASN ``leaf_asn_base + (k - 1) * leaves + n - 1``);
  plane k's spines ``spine_asn - (k - 1)``, pod P's spines ``pod_asn_base + (k - 1) * pods_planned + P - 1``,
  super-spines ``super_spine.asn - (k - 1)``; an ASN two planes would share is refused;
- management addresses: numbered across planes as one fabric (spines ``mgmt_pool[g + 1]``, leaves
  ``mgmt_pool[mgmt_leaf_offset + g]``, super-spines from the top, g the switch's number across planes).

Shared spines (``plane_spines: shared``, a VRF per plane on each spine): fabric.plan.compute.shared_spines.
Refused, with the reason: InfiniBand planes (each plane is its own subnet with its own subnet manager, and
``infiniband.subnet_manager`` describes one).
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from fractions import Fraction
from ipaddress import IPv4Network

from fabric.errors import Finding, InputError
from fabric.model.cluster import ClusterSpec
from fabric.model.topology import FabricSpec
from fabric.plan import addressing
from fabric.plan.compute import shared_spines
from fabric.plan.compute.pods import size_pods
from fabric.plan.compute.sizing import FabricMember, format_ratio, size_fabric
from fabric.plan.compute.three_tier import Switches, build_three_tier, three_tier_switches
from fabric.plan.compute.two_tier import HostAttachment, build_fabric, build_switches
from fabric.plan.types import ClusterPlan, FabricPlan, Link, PodsPlan, SwitchPlan

PLANE_PATH = ("fabric", "planes")
_PLANE_NAME = re.compile(r"^p([1-9])-")


def plane_of(device: str | None) -> int | None:
    """The plane of a compute switch from its name (``p2-leaf-su01-r1`` -> 2); None on a one-plane fabric's switch.

    Example:
        >>> plane_of("p2-leaf-su01-r1"), plane_of("leaf-su01-r1"), plane_of(None)
        (2, None, None)
    """
    if device and len(device) > 2 and device[0] == "p" and device[2] == "-" and "1" <= device[1] <= "9":
        return int(device[1])  # _PLANE_NAME's match, without the regex: cabling.csv asks it of every cable
    return None


def port_plane(port: int, ports_per_nic: int, planes: int, split: str) -> int:
    """The plane (1-based) of node port ``port`` (0-based, listed NIC by NIC).

    Example:
        >>> [port_plane(p, 2, 2, "port") for p in range(4)], [port_plane(p, 1, 2, "nic") for p in range(4)]
        ([1, 2, 1, 2], [1, 2, 1, 2])
    """
    unit = port % ports_per_nic if split == "port" else port // ports_per_nic
    return unit % planes + 1


def block(pool: IPv4Network, plane: int, planes: int) -> IPv4Network:
    """Plane ``plane``'s block of ``pool``: the plane-th of ``2**ceil(log2(planes))`` equal parts.

    Example:
        >>> str(block(IPv4Network("10.254.0.0/16"), 2, 2)), str(block(IPv4Network("10.254.0.0/16"), 3, 3))
        ('10.254.128.0/17', '10.254.128.0/18')
    """
    bits = (planes - 1).bit_length()
    size = pool.num_addresses >> bits
    return IPv4Network((int(pool.network_address) + (plane - 1) * size, pool.prefixlen + bits))


def refusals(spec: ClusterSpec) -> list[Finding]:
    """Why the definition's planes cannot be built, if they cannot."""
    fabric = spec.fabric
    assert fabric is not None
    n = fabric.planes
    findings = shared_spines.refusals(spec)
    if spec.planes.compute.transport == "infiniband":
        findings.append(
            Finding(
                PLANE_PATH,
                f"{n} InfiniBand planes are not built yet: each plane is its own subnet with its own subnet manager, and "
                "infiniband.subnet_manager describes one; use planes: 1, or a RoCE compute plane",
            )
        )
    if spec.planes.compute.max_ports_per_node % n:
        findings.append(
            Finding(
                ("planes", "compute", "max_ports_per_node"),
                f"max_ports_per_node {spec.planes.compute.max_ports_per_node} does not split into {n} planes; use a multiple of {n}",
            )
        )
    for gi, group in enumerate(spec.nodes):
        profile = spec.profile_of(group)
        ports = profile.ports.get("compute") if profile else None
        if ports is None or not group.count:
            continue
        name = group.hardware or group.group
        if fabric.plane_split == "port" and ports.ports_per_nic % n:
            findings.append(
                Finding(
                    ("fabric", "plane_split"),
                    f"'{name}' (nodes[{gi}]) has {ports.ports_per_nic} compute port(s) per NIC, which do not split into {n} planes "
                    f"by port; state ports_per_nic (a multiple of {n}) in its profile, or use plane_split: nic",
                )
            )
        elif fabric.plane_split == "nic" and (ports.count // ports.ports_per_nic) % n:
            findings.append(
                Finding(
                    ("fabric", "plane_split"),
                    f"'{name}' (nodes[{gi}]) has {ports.count // ports.ports_per_nic} compute NICs, which do not split evenly into "
                    f"{n} planes; use planes that divide the NIC count, or plane_split: port",
                )
            )
    return findings


def plane_spec(spec: ClusterSpec, plane: int) -> ClusterSpec:
    """The definition of plane ``plane`` alone: its blocks of every pool, its spine and super-spine ASNs."""
    fabric = spec.fabric
    assert fabric is not None
    n = fabric.planes
    underlay = fabric.underlay.model_copy(
        update={
            "loopback_pool": block(fabric.underlay.loopback_pool, plane, n),
            "p2p_pool": block(fabric.underlay.p2p_pool, plane, n),
            "spine_asn": fabric.underlay.spine_asn - (plane - 1),
        }
    )
    update: dict[str, object] = {"underlay": underlay, "planes": 1}
    if fabric.super_spine is not None:
        ss = fabric.super_spine
        update["super_spine"] = ss.model_copy(update={"p2p_pool": block(ss.p2p_pool, plane, n), "asn": ss.asn - (plane - 1)})
    compute = spec.planes.compute
    cidr = block(compute.cidr, plane, n) if compute.cidr is not None else None
    compute = compute.model_copy(update={"cidr": cidr, "max_ports_per_node": compute.max_ports_per_node // n})
    return spec.model_copy(update={"fabric": fabric.model_copy(update=update), "planes": spec.planes.model_copy(update={"compute": compute})})


def split_members(spec: ClusterSpec, members: list[FabricMember], plane: int) -> tuple[list[FabricMember], dict[tuple[int, int], int]]:
    """Plane ``plane``'s node ports, renumbered plane-locally, and each (node id, local port)'s port on the node."""
    fabric = spec.fabric
    assert fabric is not None
    per_nic: dict[int, int] = {}
    for group in spec.nodes:
        profile = spec.profile_of(group)
        ports = profile.ports.get("compute") if profile else None
        per_nic.update(dict.fromkeys(group.node_ids(), ports.ports_per_nic if ports else 1))
    most = max((m.ports for m in members), default=0)
    on_plane = {  # ports per NIC -> the node ports on this plane (port_plane asked once per port, not once per member)
        nic: frozenset(p for p in range(most) if port_plane(p, nic, fabric.planes, fabric.plane_split) == plane) for nic in set(per_nic.values())
    }
    local: list[FabricMember] = []
    back: dict[tuple[int, int], int] = {}
    seen: dict[int, int] = {}
    for m in members:
        if m.port not in on_plane[per_nic[m.node_id]]:
            continue
        q = seen[m.node_id] = seen.get(m.node_id, -1) + 1
        back[(m.node_id, q)] = m.port
        local.append(FabricMember(m.hostname, m.node_id, q, m.ports // fabric.planes, m.interface))
    return local, back


def build_planes(spec: ClusterSpec, members: list[FabricMember]) -> tuple[FabricPlan, dict[tuple[int, int], HostAttachment]]:
    """Every plane planned alone and renamed, merged into one fabric plan; the attachment of every node port.

    Raises:
        InputError: the planes cannot be built (every reason listed), or two planes would share an ASN.
    """
    fabric = spec.fabric
    assert fabric is not None
    found = refusals(spec)
    if found:
        raise InputError(found)
    plans: list[FabricPlan] = []
    attached: dict[tuple[int, int], HostAttachment] = {}
    for k in range(1, fabric.planes + 1):
        alone = plane_spec(spec, k)
        local, back = split_members(spec, members, k)
        sizing = size_fabric(alone, local)
        if fabric.plane_spines == "shared":  # one spine layer for every plane's leaves: sized for them all
            alone, sizing = shared_spines.widen(spec, alone, sizing, local)
        if fabric.super_spine is None:
            spines, leaves = build_switches(alone, sizing)
            leaves, spines, _ = _renamed(spec, k, (leaves, spines, ()), None, routed=sizing.link_layer == "ethernet")
            plan, att = build_fabric(alone, sizing, local, (spines, leaves))
        else:
            pods = size_pods(alone, sizing)
            switches = _renamed(spec, k, three_tier_switches(alone, sizing, pods), pods.pods_planned, routed=sizing.link_layer == "ethernet")
            plan, att = build_three_tier(alone, sizing, pods, local, switches)
        plans.append(plan)
        attached.update({(node, back[(node, q)]): a for (node, q), a in att.items()})
    merged = _merged(fabric, plans)
    merged = shared_spines.share(spec, merged) if fabric.plane_spines == "shared" else merged
    _check_asns(merged)
    return merged, attached


def _renamed(spec: ClusterSpec, k: int, switches: Switches, pods_planned: int | None, *, routed: bool) -> Switches:
    """Plane k's leaves, spines and super-spines named ``p<k>-...``, with ASNs and management addresses numbered across
    planes (``pods_planned``: None on two tiers). Named before they are cabled, so every cable and host attachment
    carries its plane's names from the start (renaming 600,000 cables afterwards was a fifth of a 100k-GPU plan)."""
    fabric = spec.fabric
    assert fabric is not None
    pool = fabric.management.mgmt_pool or addressing.default_mgmt_pool(spec.planes.oob.cidr)
    prefix = spec.planes.oob.cidr.prefixlen

    def rename(s: SwitchPlan, global_id: int, asn: int | None, mgmt_offset: int) -> SwitchPlan:
        mgmt = addressing.allocate_mgmt(pool, mgmt_offset, f"plane {k} {s.tier} {s.switch_id} ({global_id} across planes)", prefix)
        return dataclasses.replace(s, name=f"p{k}-{s.name}", asn=asn, mgmt_address=mgmt)

    plan_leaves, plan_spines, plan_tops = switches
    n_leaves, n_spines = len(plan_leaves), len(plan_spines)
    leaves = tuple(
        rename(
            s,
            g := (k - 1) * n_leaves + s.switch_id,
            fabric.underlay.leaf_asn_base + g - 1 if routed else None,
            fabric.management.mgmt_leaf_offset + g,
        )
        for s in plan_leaves
    )
    spines = tuple(
        rename(
            s,
            g := (k - 1) * n_spines + s.switch_id,
            (s.asn + (k - 1) * pods_planned if pods_planned is not None else s.asn) if s.asn is not None else None,
            g + 1,
        )
        for s in plan_spines
    )
    total = pool.num_addresses - 1
    tops = tuple(rename(s, g := (k - 1) * len(plan_tops) + s.switch_id, s.asn, total - g) for s in plan_tops)
    return leaves, spines, tops


def _merged(fabric: FabricSpec, plans: list[FabricPlan]) -> FabricPlan:
    """One fabric plan of every plane: switches and cables plane by plane, tiers counted over planes, bisection summed."""
    first = plans[0]
    tiers = tuple(dataclasses.replace(tier, switches=sum(p.tiers[i].switches for p in plans)) for i, tier in enumerate(first.tiers))
    pods: PodsPlan | None = None
    if first.pods is not None:
        pods = dataclasses.replace(first.pods, super_spines=tuple(s for p in plans for s in p.super_spines))
    links: tuple[Link, ...] = tuple(x for p in plans for x in p.links)
    return dataclasses.replace(
        first,
        leaves=tuple(s for p in plans for s in p.leaves),
        spines=tuple(s for p in plans for s in p.spines),
        links=links,
        tiers=tiers,
        bisection_gbps=sum(p.bisection_gbps for p in plans),
        bisection_both_directions_gbps=sum(p.bisection_both_directions_gbps for p in plans),
        underlay=fabric.underlay,
        management=fabric.management,
        pods=pods,
    )


def _check_asns(plan: FabricPlan) -> None:
    """Refuse an ASN that switches of two planes would share (planes must never peer)."""
    owner: dict[int, int] = {}
    for s in plan.switches:
        plane = plane_of(s.name)
        if s.asn is None or plane is None:
            continue
        other = owner.setdefault(s.asn, plane)
        if other != plane:
            raise InputError(
                [
                    Finding(
                        ("fabric", "underlay"),
                        f"ASN {s.asn} is used in planes {other} and {plane} ({s.name}); planes need their own ASNs: move "
                        "leaf_asn_base, spine_asn or the super-spine pod_asn_base/asn apart (see fabric.plan.compute.planes)",
                    )
                ]
            )


@dataclasses.dataclass(frozen=True, slots=True)
class PlaneFigures:
    """One plane's switches and bandwidth, counted from its cables as the planner counts the whole fabric's."""

    plane: int
    switches: int
    host_gbps: int
    uplink_gbps: int
    bisection_gbps: int
    oversubscription: str


def plane_figures(plan: FabricPlan) -> tuple[PlaneFigures, ...]:
    """Per-plane figures of a multi-plane fabric (none on one plane): host bandwidth, the narrowest tier above the hosts
    (leaf uplinks; on three tiers with several pods, also the spines' uplinks), the cut and the oversubscription."""
    tiers = {s.name: (plane_of(s.name), s.tier) for s in plan.switches}
    planes = sorted({p for p, _ in tiers.values() if p is not None})
    figures: list[PlaneFigures] = []
    many_pods = plan.pods is not None and plan.pods.pods > 1
    hosts = dict.fromkeys(planes, 0)
    uplinks = {k: {"leaf": 0, "spine": 0} for k in planes}
    for x in plan.links:  # one pass for every plane (a per-plane figure is asked of every plane's diagram)
        if x.kind == "host":
            plane = tiers[x.a_device][0]
            if plane in hosts:
                hosts[plane] += x.speed_gbps
        elif x.kind == "fabric":
            plane, tier = tiers.get(x.a_device, (None, "leaf"))
            ups = uplinks.get(plane) if plane is not None else None
            if ups is not None and tier in ups:
                ups[tier] += x.speed_gbps
    counts = Counter(p for p, _ in tiers.values())
    for k in planes:
        host, ups = hosts[k], uplinks[k]
        up = min(ups["leaf"], ups["spine"]) if many_pods else ups["leaf"]
        cut = min(host, up)
        ratio = format_ratio(Fraction(host, up)) if up else "n/a"
        figures.append(PlaneFigures(k, counts[k], host, up, cut // 2, ratio))
    return tuple(figures)


def fabric_plane_cidrs(plan: ClusterPlan) -> dict[int, str]:
    """Each compute plane's block of planes.compute.cidr on a multi-plane fabric (fabric.plan.compute.planes); empty otherwise."""
    fabric, cidr = plan.fabric, plan.plane("compute").cidr
    planes = sorted({k for s in (fabric.leaves if fabric else ()) if (k := plane_of(s.name)) is not None})
    if not planes or cidr is None:
        return {}
    return {k: str(block(IPv4Network(cidr), k, len(planes))) for k in planes}


def plane_fabric(plan: FabricPlan, plane: int) -> FabricPlan:
    """Plane ``plane`` of a multi-plane fabric as a fabric plan of its own: its switches and cables, its tiers' counts,
    its bisection (what a per-plane picture or report shows)."""
    mine = {s.name for s in plan.switches if plane_of(s.name) in (plane, None)}  # None: a shared spine (every plane's)
    figures = next(f for f in plane_figures(plan) if f.plane == plane)
    pods = plan.pods
    if pods is not None:
        pods = dataclasses.replace(pods, super_spines=tuple(s for s in pods.super_spines if s.name in mine))
    return dataclasses.replace(
        plan,
        leaves=tuple(s for s in plan.leaves if s.name in mine),
        spines=tuple(s for s in plan.spines if s.name in mine),
        links=tuple(x for x in plan.links if x.a_device in mine),
        tiers=tuple(dataclasses.replace(t, switches=sum(s.tier == t.tier for s in plan.switches if s.name in mine)) for t in plan.tiers),
        bisection_gbps=figures.bisection_gbps,
        bisection_both_directions_gbps=2 * figures.bisection_gbps,
        oversubscription=figures.oversubscription,
        pods=pods,
    )
