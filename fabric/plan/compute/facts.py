"""Per-switch facts: the only code that looks across devices (AVD's facts layer).

Renderers see one ``SwitchFacts`` at a time: its ports with peers and descriptions from the cabling plan, its BGP
neighbours, the prefixes it originates, its management plane and the lossless contract it must enforce.
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Interface, IPv4Network
from typing import Literal

from fabric.model.infiniband import InfinibandSpec
from fabric.model.load_balancing import NO_LOAD_BALANCING, LoadBalancingSpec
from fabric.model.qos import RoceSpec
from fabric.model.topology import UnderlaySpec
from fabric.plan.buffers import resolved_roce
from fabric.plan.compute.planes import block, plane_of
from fabric.plan.gnmi import gnmi_port
from fabric.plan.quick_init import quick_init
from fabric.plan.types import ClusterPlan, FabricPlan, Link, SwitchPlan


@quick_init  # built by the hundred thousand: fabric.plan.quick_init
@dataclass(frozen=True, slots=True)
class PortFacts:
    """One cabled switch port.

    Attributes:
        address: ``a.b.c.d/31`` on numbered links; None on unnumbered fabric links.
        lossless: the port carries RoCE, so PFC, ECN and the QoS maps apply.
    """

    name: str
    kind: Literal["host", "fabric"]
    peer: str
    peer_port: str
    speed_gbps: int
    mtu: int
    cable_m: int
    address: str | None
    peer_address: str | None
    lossless: bool

    @property
    def description(self) -> str:
        """``node1:eth1`` — the peer, as the cabling plan names it."""
        return f"{self.peer}:{self.peer_port}"


@quick_init  # built by the hundred thousand: fabric.plan.quick_init
@dataclass(frozen=True, slots=True)
class NeighborFacts:
    """An eBGP underlay session: by interface (unnumbered) or by the peer's /31 address."""

    peer: str
    interface: str
    address: str | None
    remote_asn: int


@dataclass(frozen=True, slots=True)
class ManagementFacts:
    """The management plane of one switch: OOB port or VRF, services, and who may SSH in."""

    vrf: str
    interface: str
    address: str
    gateway: str | None
    allowed_prefix: str
    ntp: tuple[str, ...]
    syslog: tuple[str, ...]
    dns: tuple[str, ...]
    domain: str | None
    gnmi_port: int | None = None  # the switch's gNMI server (fabric.plan.gnmi); None: the render gives it none


@dataclass(frozen=True, slots=True)
class SwitchFacts:
    """Everything one switch's configuration is rendered from."""

    switch: SwitchPlan
    cluster: str
    link_layer: Literal["ethernet", "infiniband"]
    ports: tuple[PortFacts, ...]
    neighbors: tuple[NeighborFacts, ...]
    originated: tuple[str, ...]
    fabric_prefixes: tuple[tuple[str, int], ...]
    underlay: UnderlaySpec
    management: ManagementFacts
    roce: RoceSpec | None
    infiniband: InfinibandSpec | None
    sm_priority: int | None
    load_balancing: LoadBalancingSpec = NO_LOAD_BALANCING
    plane_prefixes: tuple[tuple[tuple[str, int], ...], ...] = ()  # a shared spine: each plane's fabric_prefixes (spine_vrfs)

    @property
    def router_id(self) -> str | None:
        """The loopback address without its length."""
        return self.switch.loopback.split("/")[0] if self.switch.loopback else None


def build_switch_facts(plan: ClusterPlan, only: Collection[str] | None = None, links: Sequence[Link] | None = None) -> tuple[SwitchFacts, ...]:
    """Facts for every switch of an on-prem plan, in plan order (spines, then leaves).

    Args:
        plan: the cluster plan.
        only: the names of the switches wanted (a share of a parallel render); None: every switch. Each switch's facts
            are the same either way: the whole cabling plan is read, only the wanted switches' ports are built.
        links: the cables to read instead of the whole cabling plan: every cable of the wanted switches, in cabling
            order (``fabric.cli.render_workers`` indexes them once per process); None: ``plan.fabric.links``.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> facts = build_switch_facts(plan_cluster(load_cluster("inventories/lab/cluster.yaml")))
        >>> [(f.switch.name, len(f.ports), [n.peer for n in f.neighbors]) for f in facts][:3]
        [('spine01', 2, ['leaf01', 'leaf02']), ('spine02', 2, ['leaf01', 'leaf02']), ('leaf01', 4, ['spine01', 'spine02'])]
    """
    if plan.fabric is None:
        return ()
    enabled = gc.isenabled()
    gc.disable()  # some million objects, all alive until returned: a cyclic collection finds nothing (see _facts)
    try:
        return _facts(plan, plan.fabric, only, plan.fabric.links if links is None else links)
    finally:
        if enabled:
            gc.enable()


def _facts(plan: ClusterPlan, fabric: FabricPlan, only: Collection[str] | None, links: Sequence[Link]) -> tuple[SwitchFacts, ...]:
    """``build_switch_facts`` with the cyclic collector off. A render worker freezes the plan (``gc.freeze``), so the
    collector counts nothing as long-lived and runs full collections over the new facts again and again as they
    grow: about half the facts' time at 8,320 switches (``bench/bench_planes.py``). Reference counting frees all."""
    asn = {s.name: s.asn for s in fabric.switches}
    wanted = asn.keys() if only is None else frozenset(only)
    lossless = plan.plane("compute").transport == "roce"
    mtu = fabric.mtu
    ports: dict[str, list[PortFacts]] = defaultdict(list)
    neighbors: dict[str, list[NeighborFacts]] = defaultdict(list)
    originated: dict[str, list[str]] = defaultdict(list)
    for link in links:  # each switch's lists in cabling order; one pass, only the wanted switches' facts built
        a, b, kind, subnet = link.a_device, link.b_device, link.kind, link.subnet
        # Each end's PortFacts built in place: a call per port was a quarter of the facts' time (issue 36).
        if a in wanted:
            address = link.a_address
            with_len = f"{address}/31" if address is not None and subnet is not None else None
            ports[a].append(PortFacts(link.a_port, kind, b, link.b_port, link.speed_gbps, mtu, link.cable_m, with_len, link.b_address, lossless))
            if kind == "host":
                if subnet is not None:
                    originated[a].append(subnet)
            elif (remote := asn[b]) is not None:
                neighbors[a].append(NeighborFacts(b, link.a_port, link.b_address, remote))
        if kind == "fabric" and b in wanted:
            address = link.b_address
            with_len = f"{address}/31" if address is not None and subnet is not None else None
            ports[b].append(PortFacts(link.b_port, kind, a, link.a_port, link.speed_gbps, mtu, link.cable_m, with_len, link.a_address, lossless))
            if (remote := asn[a]) is not None:
                neighbors[b].append(NeighborFacts(a, link.b_port, link.a_address, remote))
    planes = max((plane_of(s.name) or 1 for s in fabric.spines + fabric.leaves), default=1)
    prefixes = {k: _fabric_prefixes(plan, fabric, k, planes) for k in range(1, planes + 1)}
    buffers = plan.buffers_by_switch()  # once: buffers_of per switch would scan the list, O(switches²) at 8,320
    return tuple(
        SwitchFacts(
            switch=switch,
            cluster=plan.name,
            link_layer=fabric.link_layer,
            ports=tuple(ports[switch.name]),
            neighbors=tuple(neighbors[switch.name]),
            originated=tuple([switch.loopback] if switch.loopback else []) + tuple(originated[switch.name]),
            fabric_prefixes=prefixes[plane_of(switch.name) or 1],
            underlay=fabric.underlay,
            management=_management(plan, switch),
            roce=resolved_roce(plan.roce, buffers.get(switch.name)) if lossless else None,
            infiniband=plan.infiniband,
            sm_priority=_sm_priority(plan.infiniband, switch.name),
            load_balancing=plan.load_balancing,
            plane_prefixes=tuple(prefixes.values()) if planes > 1 and plane_of(switch.name) is None else (),
        )
        for switch in fabric.switches
        if switch.name in wanted
    )


def _fabric_prefixes(plan: ClusterPlan, fabric: FabricPlan, plane: int, planes: int) -> tuple[tuple[str, int], ...]:
    """What the underlay may advertise, as (prefix, ge): loopbacks as /32s, host links as /31s. Nothing else.

    On a multi-plane fabric, only the switch's own plane's blocks (fabric.plan.compute.planes): no plane advertises
    another's prefixes even if a cable crossed.
    """
    loopbacks = fabric.underlay.loopback_pool
    found = [(str(block(loopbacks, plane, planes) if planes > 1 else loopbacks), 32)]
    compute = plan.plane("compute").cidr
    if compute is not None:
        found.append((str(block(IPv4Network(compute), plane, planes)) if planes > 1 else compute, 31))
    return tuple(found)


def _management(plan: ClusterPlan, switch: SwitchPlan) -> ManagementFacts:
    fabric = plan.fabric
    assert fabric is not None
    oob = plan.plane("oob")
    mgmt = fabric.management
    network = IPv4Interface(switch.mgmt_address).network
    return ManagementFacts(
        vrf=mgmt.vrf,
        interface=switch.mgmt_interface,
        address=switch.mgmt_address,
        gateway=oob.gateway,
        allowed_prefix=oob.cidr or str(network),
        ntp=tuple(str(a) for a in mgmt.ntp_servers),
        syslog=tuple(str(a) for a in mgmt.syslog_servers),
        dns=tuple(str(a) for a in mgmt.dns_servers),
        domain=mgmt.domain,
        gnmi_port=gnmi_port(switch.nos, switch.nos_version, enabled=mgmt.gnmi),
    )


def _sm_priority(infiniband: InfinibandSpec | None, name: str) -> int | None:
    if infiniband is None or infiniband.subnet_manager.kind != "switch":
        return None
    return next((n.priority for n in infiniband.subnet_manager.nodes if n.host == name), None)
