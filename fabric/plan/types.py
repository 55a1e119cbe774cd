"""Immutable plan objects: what the planner derives from a ClusterSpec."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field

from fabric.model.infiniband import InfinibandSpec
from fabric.model.load_balancing import NO_LOAD_BALANCING, LoadBalancingSpec
from fabric.model.qos import RoceSpec
from fabric.model.topology import ManagementSpec, UnderlaySpec
from fabric.plan.buffers import SwitchBuffers
from fabric.plan.cables import Cable
from fabric.plan.oob.types import OobPlan
from fabric.plan.quick_init import quick_init
from fabric.plan.storage.types import StorageNetworkPlan

if TYPE_CHECKING:  # an annotation only: on-prem runs never import the cloud plan types
    from fabric.plan.cloud.types import CloudPlan

Tier = Literal["leaf", "spine", "superspine"]
LinkLayer = Literal["ethernet", "infiniband"]


@quick_init  # built by the hundred thousand: fabric.plan.quick_init
@dataclass(frozen=True, slots=True)
class HostInterface:
    """One node port on one plane.

    Attributes:
        address: ``a.b.c.d/len`` or None where the cloud assigns it.
        peer_address: the leaf's end of a routed /31 host link (the next hop for the compute plane).
        switch, switch_port: where the cable lands (compute fabric only).
        kind: ``netdev`` for host interfaces, ``bmc`` for the baseboard controller's own port.
    """

    name: str
    plane: str
    index: int
    speed_gbps: int
    mtu: int
    link_layer: LinkLayer
    kind: Literal["netdev", "bmc"] = "netdev"
    address: str | None = None
    peer_address: str | None = None
    switch: str | None = None
    switch_port: str | None = None
    rail: int | None = None
    hca: str | None = None


@quick_init  # built by the hundred thousand: fabric.plan.quick_init
@dataclass(frozen=True, slots=True)
class NodePlan:
    """A node with every interface on every plane."""

    hostname: str
    group: str
    role: str
    node_id: int
    hardware: str
    gpus: int
    interfaces: tuple[HostInterface, ...]
    scalable_unit: int | None = None
    slot: int | None = None
    rdma_stack: str | None = None  # on-prem: what the node roles install (doca where RoCE compute ports need DOCA's tools)


@quick_init  # built by the hundred thousand: fabric.plan.quick_init
@dataclass(frozen=True, slots=True)
class SwitchPlan:
    """A switch of the compute fabric."""

    name: str
    tier: Tier
    switch_id: int
    model: str
    nos: str
    nos_version: str
    asn: int | None
    loopback: str | None
    mgmt_interface: str
    mgmt_address: str
    scalable_unit: int | None = None
    rail: int | None = None


@quick_init  # built by the hundred thousand: fabric.plan.quick_init
@dataclass(frozen=True, slots=True)
class Link(Cable):
    """A cable of the compute fabric. ``a`` is the switch closer to the hosts (leaf for fabric links), ``b`` the node or spine."""

    kind: Literal["host", "fabric"]
    plane: str = "compute"
    subnet: str | None = None
    a_address: str | None = None
    b_address: str | None = None


@dataclass(frozen=True, slots=True)
class TierStats:
    """Bandwidth figures of one tier."""

    tier: Tier
    switches: int
    ports_per_switch: int
    ports_used_per_switch: int
    downlink_gbps: int
    uplink_gbps: int
    oversubscription: str


@dataclass(frozen=True, slots=True)
class PodsPlan:
    """The third tier of a three-tier fabric: pods of leaves and spines, and the super-spines joining them.

    Leaf N sits in pod ``(N - 1) // leaves_per_pod + 1``, spine N in pod ``(N - 1) // spines_per_pod + 1``; spine k of
    every pod uplinks to the super-spines of plane k, each over ``parallel_links`` cables.
    """

    pods: int
    pods_planned: int
    """Pods the super-spine tier is built for; pods up to this number add switches and cables and change none."""
    max_pods: int
    """The most pods these super-spines can take (their radix over the links from each pod)."""
    leaves_per_pod: int
    spines_per_pod: int
    spine_downlinks: int
    spine_uplinks: int
    super_spines_per_plane: int
    parallel_links: int
    uplink_speed_gbps: int
    super_spines: tuple[SwitchPlan, ...]

    def pod_of(self, switch: SwitchPlan) -> int | None:
        """The pod of a leaf or spine; None for a super-spine."""
        if switch.tier == "leaf":
            return (switch.switch_id - 1) // self.leaves_per_pod + 1
        if switch.tier == "spine":
            return (switch.switch_id - 1) // self.spines_per_pod + 1
        return None


@dataclass(frozen=True, slots=True)
class FabricPlan:
    """The on-prem compute fabric: switches, cabling and its figures."""

    topology: str
    link_layer: LinkLayer
    scalable_units: int
    rails: int
    host_ports_per_leaf: int
    uplinks_per_leaf: int
    host_speed_gbps: int
    uplink_speed_gbps: int
    mtu: int
    leaves: tuple[SwitchPlan, ...]
    spines: tuple[SwitchPlan, ...]
    links: tuple[Link, ...]
    tiers: tuple[TierStats, ...]
    bisection_gbps: int
    """Bandwidth across the narrowest cut into two halves, one direction (half the nodes sending to the other half)."""
    bisection_both_directions_gbps: int
    """The same cut counted in both directions at once (full duplex): twice ``bisection_gbps``, as many designs quote it."""
    oversubscription: str
    underlay: UnderlaySpec
    management: ManagementSpec
    pods: PodsPlan | None = None
    """The pods and super-spines of a three-tier fabric; None on two tiers."""

    @property
    def super_spines(self) -> tuple[SwitchPlan, ...]:
        """The super-spines of a three-tier fabric (none on two tiers)."""
        return self.pods.super_spines if self.pods is not None else ()

    @property
    def switches(self) -> tuple[SwitchPlan, ...]:
        """Super-spines, spines, then leaves."""
        return self.super_spines + self.spines + self.leaves


@dataclass(frozen=True, slots=True)
class PlanePlan:
    """A network plane as the nodes see it."""

    name: str
    cidr: str | None
    mtu: int
    vlan: int | None
    gateway: str | None
    default_route: bool
    transport: str | None = None
    routes: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class HardwarePlan:
    """What the schedulers need of one node profile in use: CPUs, memory, the multi-node NVLink domain (None: unknown)."""

    name: str
    gpus: int
    sockets: int | None = None
    cores_per_socket: int | None = None
    memory_gb: int | None = None
    nvlink_domain_nodes: int | None = None
    arch: str = "x86_64"


@dataclass(frozen=True, slots=True)
class NicPlan:
    """The compute NIC of one node group and the RoCE marking it sends once the node roles ran (fabric.model.nics).

    Attributes:
        model: the catalog name (``fabric/catalog/data/nics/<model>.yaml``).
        tool: the path roles/nic_qos takes on it (``mlnx``, ``bnxt``), None where it sets nothing.
        sets: the marking fields the roles change from the NIC's out-of-the-box values.
    """

    group: str
    model: str
    vendor: str
    tool: str | None
    sets: tuple[str, ...]
    roce_dscp: int
    roce_priority: int
    cnp_dscp: int
    cnp_priority: int


NOT_IN_PLAN_JSON = {"plan_json": False}
"""Field metadata: ``fabric.plan.serialize`` leaves the field out of plan.json (pydantic's dump, by ``Field(exclude=True)``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterPlan:
    """Everything derived from one cluster definition (built by keyword: twelve fields read best by name)."""

    name: str
    target: str
    planes: tuple[PlanePlan, ...]
    nodes: tuple[NodePlan, ...]
    fabric: FabricPlan | None
    roce: RoceSpec
    infiniband: InfinibandSpec | None
    cloud: CloudPlan | None = None
    oob: OobPlan | None = None
    storage: tuple[StorageNetworkPlan, ...] = ()
    """The storage / in-band Ethernet networks (``planes.storage.network``, ``planes.inband.network``)."""
    hardware: tuple[HardwarePlan, ...] = ()
    """The node profiles the groups use, by name (bare metal only)."""
    positions: tuple[tuple[str, str, int], ...] = ()
    """(device, rack, lowest U) of every device the definition places (``racks``), by device name."""
    buffers: tuple[SwitchBuffers, ...] = ()
    """ECN thresholds and PFC headroom of every compute-fabric and storage switch with lossless ports (``fabric.plan.buffers``)."""
    load_balancing: LoadBalancingSpec = NO_LOAD_BALANCING
    """The compute fabric's load-balancing intent (``fabric.plan.load_balancing`` says what each NOS renders)."""

    def buffers_of(self, switch: str) -> SwitchBuffers | None:
        """One switch's derived buffers (None: no lossless port, or not a compute-fabric or storage switch). A scan of
        the list: a loop over every switch takes ``buffers_by_switch`` once instead."""
        return next((b for b in self.buffers if b.switch == switch), None)

    def buffers_by_switch(self) -> dict[str, SwitchBuffers]:
        """Every switch's derived buffers by name, the first where a name repeats (as ``buffers_of``)."""
        index: dict[str, SwitchBuffers] = {}
        for b in self.buffers:
            index.setdefault(b.switch, b)
        return index

    nics: tuple[NicPlan, ...] = ()
    """The compute NIC of every RoCE node group whose model is known, and what it sends (``fabric.model.nics``)."""
    spectrum_x_multiplane: Annotated[Literal["swplb", "hwplb"] | None, Field(exclude=True)] = field(default=None, metadata=NOT_IN_PLAN_JSON)
    """``fabric.spectrum_x.multiplane_mode`` on a multi-plane fabric (None: one plane, or no Spectrum-X settings): what
    the NCCL facts need of the definition (``fabric.plan.nccl``). An input, not a derived fact, so not in plan.json."""

    def nic_of(self, node: NodePlan) -> NicPlan | None:
        """The compute NIC of a node's group (None: not a RoCE group, or its NIC model is not known)."""
        return next((n for n in self.nics if n.group == node.group), None)

    def hardware_of(self, node: NodePlan) -> HardwarePlan | None:
        """The profile facts of a node's hardware (None on cloud nodes)."""
        return next((h for h in self.hardware if h.name == node.hardware), None)

    def plane(self, name: str) -> PlanePlan:
        """The plane called ``name``."""
        return next(p for p in self.planes if p.name == name)
