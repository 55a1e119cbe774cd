"""Immutable plan objects: what the planner derives from a ClusterSpec."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fabric.model.infiniband import InfinibandSpec
from fabric.model.qos import RoceSpec
from fabric.model.topology import ManagementSpec, UnderlaySpec
from fabric.plan.cloud_types import CloudPlan
from fabric.plan.oob_types import OobPlan
from fabric.plan.storage_types import StorageNetworkPlan

Tier = Literal["leaf", "spine"]
LinkLayer = Literal["ethernet", "infiniband"]


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


@dataclass(frozen=True, slots=True)
class Link:
    """A cable. ``a`` is the switch closer to the hosts (leaf for fabric links), ``b`` the node or spine."""

    kind: Literal["host", "fabric"]
    a_device: str
    a_port: str
    b_device: str
    b_port: str
    speed_gbps: int
    cable_m: int
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

    @property
    def switches(self) -> tuple[SwitchPlan, ...]:
        """Spines, then leaves."""
        return self.spines + self.leaves


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
class ClusterPlan:
    """Everything derived from one cluster definition."""

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

    def plane(self, name: str) -> PlanePlan:
        """The plane called ``name``."""
        return next(p for p in self.planes if p.name == name)
