"""Stage 2 — plan: pure functions from a ClusterSpec to an immutable ClusterPlan. No I/O."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from fabric.errors import Finding, InputError, PlanError
from fabric.model.cluster import ClusterSpec
from fabric.model.load_balancing import NO_LOAD_BALANCING
from fabric.model.nics import contract_roce
from fabric.model.planes import PLANE_NAMES
from fabric.model.rules import check_spec
from fabric.plan.buffers import SwitchBuffers, switch_buffers
from fabric.plan.checks import check_fabric_plan, check_planes
from fabric.plan.cloud import plan_cloud
from fabric.plan.compute.planes import build_planes
from fabric.plan.compute.pods import check_pods, size_pods
from fabric.plan.compute.sizing import FabricMember, fabric_members, size_fabric
from fabric.plan.compute.three_tier import build_three_tier
from fabric.plan.compute.two_tier import HostAttachment, build_fabric
from fabric.plan.host_bonds import plan_bond_addresses
from fabric.plan.load_balancing import refusals
from fabric.plan.nics import plan_nics
from fabric.plan.nodes import build_nodes
from fabric.plan.oob.build import build_oob
from fabric.plan.racks import build_positions
from fabric.plan.storage.build import build_storage
from fabric.plan.storage.facts import lossless_ports
from fabric.plan.storage.types import StorageNetworkPlan
from fabric.plan.types import ClusterPlan, FabricPlan, HardwarePlan, HostInterface, Link, NodePlan, PlanePlan, SwitchPlan

__all__ = [
    "ClusterPlan",
    "FabricPlan",
    "HardwarePlan",
    "HostInterface",
    "Link",
    "NodePlan",
    "PlanePlan",
    "SwitchPlan",
    "check_and_plan",
    "check_cluster",
    "plan_cluster",
]


def check_cluster(spec: ClusterSpec) -> list[Finding]:
    """Every finding (errors and warnings) for a schema-valid spec: model rules, fabric-wide checks, then the OOB network's
    (port budgets, device ports, relay targets), which need the nodes and the fabric planned first.
    """
    findings, _ = check_and_plan(spec)
    return findings


def _checked(spec: ClusterSpec) -> tuple[list[Finding], tuple[FabricPlan, dict[tuple[int, int], HostAttachment]] | None]:
    """Findings, and the fabric built while checking it (reused by plan_cluster so it is built once)."""
    findings = check_spec(spec)
    if any(f.severity == "error" for f in findings):
        return findings, None
    findings.extend(check_planes(spec))
    if spec.fabric is None:
        return findings, None
    members = fabric_members(spec)
    try:
        built = build_planes(spec, members) if spec.fabric.planes > 1 else _build_one(spec, members)
    except InputError as exc:
        return findings + list(exc.findings), None
    except PlanError as exc:
        return [*findings, Finding(("fabric",), str(exc))], None
    findings.extend(check_fabric_plan(spec, built[0]))
    findings.extend(check_pods(spec, built[0]))
    return findings, built


def _build_one(spec: ClusterSpec, members: list[FabricMember]) -> tuple[FabricPlan, dict[tuple[int, int], HostAttachment]]:
    """A one-plane fabric of two or three tiers."""
    sizing = size_fabric(spec, members)
    if spec.fabric is not None and spec.fabric.super_spine is not None:
        return build_three_tier(spec, sizing, size_pods(spec, sizing), members)
    return build_fabric(spec, sizing, members)


def plan_cluster(spec: ClusterSpec) -> ClusterPlan:
    """Derive the cluster plan: planes, nodes with every interface, and the on-prem fabric.

    Example:
        >>> from fabric.model import load_cluster
        >>> plan = plan_cluster(load_cluster("inventories/lab/cluster.yaml"))
        >>> [s.name for s in plan.fabric.spines]
        ['spine01', 'spine02']

    Raises:
        InputError: the definition breaks a rule (every finding listed).
        PlanError: a pool is exhausted or two allocations collide.
    """
    findings, plan = check_and_plan(spec)
    if plan is None:
        raise InputError([f for f in findings if f.severity == "error"])
    return plan


def check_and_plan(spec: ClusterSpec) -> tuple[list[Finding], ClusterPlan | None]:
    """Every finding, and the plan when there is no error: the rules run once and the fabric is built once.

    Example:
        >>> from fabric.model import load_cluster
        >>> findings, plan = check_and_plan(load_cluster("inventories/lab/cluster.yaml"))
        >>> plan is not None and not [f for f in findings if f.severity == "error"]
        True

    Raises:
        PlanError: a pool is exhausted or two allocations collide.
    """
    findings, built = _checked(spec)
    if any(f.severity == "error" for f in findings):
        return findings, None
    fabric, attached = built if built is not None else (None, {})
    nodes = build_nodes(spec, attached)
    storage, storage_findings = build_storage(spec, nodes)
    nodes = plan_bond_addresses(nodes, storage)  # one address per host bond, none on its other members
    oob, oob_findings = build_oob(spec, nodes, fabric, storage)
    devices = [n.hostname for n in nodes]
    devices += [s.name for s in fabric.switches] if fabric else []
    devices += [s.name for s in oob.switches] if oob else []
    devices += [s.name for net in storage for s in net.switches]
    positions, rack_findings = build_positions(spec, devices)
    findings = findings + oob_findings + storage_findings + rack_findings
    if any(f.severity == "error" for f in oob_findings + storage_findings + rack_findings):
        return findings, None
    try:
        buffers = _buffers(spec, fabric) + _storage_buffers(spec, storage)
    except PlanError as exc:
        return [*findings, Finding(("roce", "ecn"), str(exc))], None
    tiers = {k: (t.nos, t.model) for k, t in spec.fabric.tier_specs.items()} if spec.fabric is not None else {}
    if spec.fabric is not None and (refused := refusals(spec.fabric.load_balancing, tiers)):
        return findings + refused, None
    plan = ClusterPlan(
        name=spec.name,
        target=spec.target,
        planes=_planes(spec),
        nodes=nodes,
        fabric=fabric,
        roce=contract_roce(spec),
        infiniband=spec.infiniband,
        cloud=plan_cloud(spec),
        oob=oob,
        storage=storage,
        hardware=_hardware(spec),
        positions=positions,
        buffers=buffers,
        load_balancing=spec.fabric.load_balancing if spec.fabric is not None else NO_LOAD_BALANCING,
        nics=plan_nics(spec),
        spectrum_x_multiplane=_spectrum_x_multiplane(spec),
    )
    _assert_unique_addresses(plan)
    return findings, plan


def _spectrum_x_multiplane(spec: ClusterSpec) -> Literal["swplb", "hwplb"] | None:
    """The compute NICs' Spectrum-X multiplane mode on a multi-plane fabric (None: one plane or no ``fabric.spectrum_x``)."""
    fabric = spec.fabric
    return fabric.spectrum_x.multiplane_mode if fabric is not None and fabric.spectrum_x is not None and fabric.planes > 1 else None


def _buffers(spec: ClusterSpec, fabric: FabricPlan | None) -> tuple[SwitchBuffers, ...]:
    """Each compute-fabric switch's ECN thresholds and PFC headroom, from its RoCE ports (both ends of a fabric link)."""
    if fabric is None or fabric.link_layer != "ethernet" or spec.planes.compute.transport != "roce":
        return ()
    ports: dict[str, list[tuple[int, int, int]]] = {s.name: [] for s in fabric.switches}
    for link in fabric.links:
        ports[link.a_device].append((link.speed_gbps, link.cable_m, fabric.mtu))
        if link.kind == "fabric":
            ports[link.b_device].append((link.speed_gbps, link.cable_m, fabric.mtu))
    found = (switch_buffers(name, spec.roce.ecn, lossless) for name, lossless in ports.items())
    return tuple(b for b in found if b is not None)


def _storage_buffers(spec: ClusterSpec, storage: tuple[StorageNetworkPlan, ...]) -> tuple[SwitchBuffers, ...]:
    """Each storage / in-band switch's ECN thresholds and PFC headroom, from its lossless ports (RoCE segments)."""
    found = (switch_buffers(s.name, spec.roce.ecn, lossless_ports(net, s.name)) for net in storage for s in net.switches)
    return tuple(b for b in found if b is not None)


def _hardware(spec: ClusterSpec) -> tuple[HardwarePlan, ...]:
    """The profiles the node groups use, sorted by name."""
    profiles = {p.name: p for p in (spec.profile_of(g) for g in spec.nodes) if p is not None}
    return tuple(
        HardwarePlan(p.name, p.gpus, p.sockets, p.cores_per_socket, p.memory_gb, p.nvlink_domain_nodes, p.arch) for _, p in sorted(profiles.items())
    )


def _planes(spec: ClusterSpec) -> tuple[PlanePlan, ...]:
    planes = spec.planes
    inband_gw = str(planes.inband.gateway) if planes.inband.gateway else None
    return (
        PlanePlan(
            "compute",
            str(planes.compute.cidr) if planes.compute.cidr else None,
            planes.compute.mtu,
            planes.compute.vlan,
            gateway=None,
            default_route=False,
            transport=planes.compute.transport,
        ),
        PlanePlan(
            "storage",
            str(planes.storage.cidr),
            planes.storage.mtu,
            planes.storage.vlan,
            gateway=None,
            default_route=False,
            routes=tuple((str(r.to), str(r.via)) for r in planes.storage.routes),
        ),
        PlanePlan("inband", str(planes.inband.cidr), planes.inband.mtu, planes.inband.vlan, gateway=inband_gw, default_route=inband_gw is not None),
        PlanePlan(
            "oob",
            str(planes.oob.cidr),
            planes.oob.mtu,
            planes.oob.vlan,
            gateway=str(planes.oob.gateway) if planes.oob.gateway else None,
            default_route=False,
        ),
    )


def _assert_unique_addresses(plan: ClusterPlan) -> None:
    """Every address of the plan is allocated once: gateways, node ports, switch loopbacks and management, fabric links.

    Raises:
        PlanError: the first address, in claim order, that is claimed twice, and both owners.
    """
    addresses = _addresses(plan)
    claimed = len(addresses) - addresses.count(None)
    if len({address.partition("/")[0] for address in addresses if address is not None}) == claimed:
        return  # the common case: no owner is named, no claim is built
    owner: dict[str, str] = {}
    for address, who, *parts in _address_claims(plan):
        if address is None:
            continue
        ip = address.partition("/")[0]
        if ip in owner:
            msg = f"address {ip} is allocated twice: {owner[ip]} and {who.format(*parts)}; move an explicit address or a pool"
            raise PlanError(msg)
        owner[ip] = who.format(*parts)


def _addresses(plan: ClusterPlan) -> list[str | None]:
    """The addresses of ``_address_claims``, in its order, without their owners: the check of a plan without a
    duplicate builds no claim (a 4,096-node plan has some 170,000 addresses; tests/plan keeps the two in step)."""
    found: list[str | None] = [plan.plane(plane).gateway for plane in PLANE_NAMES]
    for node in plan.nodes:
        for iface in node.interfaces:
            found += (iface.address, iface.peer_address)
    if plan.fabric is not None:
        for switch in plan.fabric.switches:
            found += (switch.loopback, switch.mgmt_address)
        for link in plan.fabric.links:
            if link.kind == "fabric":
                found += (link.a_address, link.b_address)
    found += (oob_switch.mgmt_address for oob_switch in (plan.oob.switches if plan.oob else ()))
    for switch in (s for net in plan.storage for s in net.switches):
        found.append(switch.mgmt_address)
        found += (gateway[3] for gateway in switch.gateways)
    found += (cable.b_address for cable in (plan.oob.links if plan.oob else ()) if cable.kind == "device")
    return found


def _address_claims(plan: ClusterPlan) -> Iterator[tuple[str | None, str, *tuple[str, ...]]]:
    """Each address the plan allocates, in a fixed order, with its owner as a format and its words (formatted only when
    an address is claimed twice: a 4,096-node plan claims some 170,000)."""
    for plane in PLANE_NAMES:
        yield plan.plane(plane).gateway, "planes.{}.gateway", plane
    for node in plan.nodes:
        for iface in node.interfaces:
            yield iface.address, "{}:{}", node.hostname, iface.name
            yield iface.peer_address, "leaf side of {}:{}", node.hostname, iface.name
    if plan.fabric is not None:
        for switch in plan.fabric.switches:
            yield switch.loopback, "{} loopback", switch.name
            yield switch.mgmt_address, "{} management", switch.name
        for link in plan.fabric.links:
            if link.kind == "fabric":
                yield link.a_address, "{}:{}", link.a_device, link.a_port
                yield link.b_address, "{}:{}", link.b_device, link.b_port
    for oob_switch in plan.oob.switches if plan.oob else ():
        yield oob_switch.mgmt_address, "{} management", oob_switch.name
    for switch in (s for net in plan.storage for s in net.switches):
        yield switch.mgmt_address, "{} management", switch.name
        for plane, _, _, address, _ in switch.gateways:
            yield address, "{} {} gateway interface", switch.name, plane
    for cable in plan.oob.links if plan.oob else ():
        if cable.kind == "device":
            yield cable.b_address, "{} (planes.oob.network.devices)", cable.b_device
