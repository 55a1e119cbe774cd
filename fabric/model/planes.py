"""The four network planes: compute, storage, in-band management and out-of-band (BMC)."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network
from typing import Annotated, Literal

from pydantic import Field, model_validator

from fabric.model.base import SpecModel, Vlan
from fabric.model.oob import OobNetworkSpec
from fabric.model.storage import EthernetNetworkSpec
from fabric.model.strings import Description

ComputeTransport = Literal["infiniband", "roce", "efa", "gpudirect-tcpx", "gpudirect-tcpxo", "gcp-rdma", "azure-ib"]
PlaneName = Literal["compute", "storage", "inband", "oob"]
PLANE_NAMES: tuple[PlaneName, ...] = ("compute", "storage", "inband", "oob")
Mtu = Annotated[int, Field(ge=576, le=65520, description="IP MTU of host interfaces on the plane.")]
PortsPerNode = Annotated[int, Field(ge=1, le=32)]


class _PlaneBase(SpecModel):
    cidr: IPv4Network = Field(description="The plane's address block. Planes never overlap.")
    mtu: Mtu = 1500
    vlan: Vlan | None = Field(default=None, description="802.1Q VLAN id where the plane is an L2 segment.")
    description: Description = ""


class ComputePlaneSpec(SpecModel):
    """The GPU fabric. It never carries a default route."""

    transport: ComputeTransport = Field(description="How GPUs talk across nodes.")
    cidr: IPv4Network | None = Field(
        default=None,
        description="Address block: /31 host links for RoCE, IPoIB for InfiniBand, the EFA/GPU subnets in clouds. "
        "Not used with azure-ib (Azure's RDMA network is not a VNet).",
    )
    mtu: Mtu = 9000
    vlan: Vlan | None = None
    max_ports_per_node: PortsPerNode = Field(
        default=8, description="Address stride per node: ports a node may ever have on this plane (keeps allocation stable)."
    )
    description: Description = ""


class StorageRoute(SpecModel):
    """A specific route on the storage plane (never a default route)."""

    to: IPv4Network
    via: IPv4Address


class StoragePlaneSpec(_PlaneBase):
    """Storage traffic (parallel file system, object store). It never carries a default route."""

    mtu: Mtu = 9000
    max_ports_per_node: PortsPerNode = 2
    routes: tuple[StorageRoute, ...] = Field(default=(), max_length=256, description="Specific prefixes reached through a storage router.")
    network: EthernetNetworkSpec | None = Field(default=None, description="The storage (and, converged, in-band) switches (on-prem only).")


class _RoutedPlane(_PlaneBase):
    gateway: IPv4Address | None = Field(default=None, description="Gateway of the plane.")

    @model_validator(mode="after")
    def _gateway_inside(self) -> _RoutedPlane:
        if self.gateway is not None and self.gateway not in self.cidr:
            msg = f"gateway {self.gateway} is outside the plane's cidr {self.cidr}; pick an address inside it"
            raise ValueError(msg)
        return self


class InbandPlaneSpec(_RoutedPlane):
    """In-band management: SSH, provisioning, monitoring. The only plane with a default route (its gateway)."""

    max_ports_per_node: PortsPerNode = 2
    network: EthernetNetworkSpec | None = Field(
        default=None, description="A separate in-band network (on-prem only; not with a converged planes.storage.network)."
    )


class OobPlaneSpec(_RoutedPlane):
    """Out-of-band: BMC/IPMI/Redfish ports and switch management ports. Its gateway serves BMCs and switches only."""

    max_ports_per_node: PortsPerNode = 1
    network: OobNetworkSpec | None = Field(default=None, description="The OOB switches, their uplinks and DHCP (on-prem only).")


class PlanesSpec(SpecModel):
    """All four planes, explicit and separate."""

    compute: ComputePlaneSpec
    storage: StoragePlaneSpec
    inband: InbandPlaneSpec
    oob: OobPlaneSpec
