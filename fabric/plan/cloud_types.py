"""Immutable cloud plan objects: the networks, NIC layouts, rules and groups a cloud component creates.

The components in ``fabric.cloud`` translate these one to one into provider resources; every layout decision is made here,
in plain Python, so it can be tested and printed without Pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fabric.model.cloud import AwsSpec, AzureSpec, GcpSpec

Provider = Literal["aws", "gcp", "azure"]
NicKind = Literal["interface", "efa", "efa-only", "GVNIC", "MRDMA", "accelerated"]
NetworkKind = Literal["vpc", "gvnic", "gpu", "rdma", "vnet"]
Protocol = Literal["all", "tcp", "udp", "icmp"]
Ports = tuple[tuple[Protocol, str], ...]


@dataclass(frozen=True, slots=True)
class CloudSubnet:
    """A subnet. ``key`` is unique in the plan and names the resource (``f"{cluster}-{key}"``)."""

    key: str
    network: str
    plane: str
    cidr: str
    public: bool = False


@dataclass(frozen=True, slots=True)
class CloudNetwork:
    """A VPC (AWS, GCP) or VNet (Azure).

    Attributes:
        kind: vpc/vnet (general), gvnic (GCP host network), gpu (GCP GPUDirect-TCPX/O), rdma (GCP RoCE profile).
        cidrs: the address space (AWS: primary block first, the others associated; Azure: address prefixes).
        profile: GCP network profile (RDMA VPCs only).
    """

    key: str
    plane: str
    kind: NetworkKind
    mtu: int
    cidrs: tuple[str, ...]
    subnets: tuple[CloudSubnet, ...]
    profile: str | None = None


@dataclass(frozen=True, slots=True)
class CloudNic:
    """One network interface of an instance. ``card``/``device`` are AWS NetworkCardIndex/DeviceIndex, else the NIC order."""

    card: int
    device: int
    kind: NicKind
    subnet: str
    plane: str


@dataclass(frozen=True, slots=True)
class FirewallRule:
    """One allow rule. ``scope`` is the AWS security group, GCP network or Azure plane NSG that holds it.

    ``peers`` are CIDRs, ``self`` (the scope's own members) or ``sg:<scope>`` (another security group).
    """

    scope: str
    name: str
    direction: Literal["ingress", "egress"]
    protocol: Protocol
    ports: tuple[str, ...]
    peers: tuple[str, ...]
    priority: int = 1000


@dataclass(frozen=True, slots=True)
class ScaleSetPlan:
    """An Azure scale set: one InfiniBand group (one partition key) with at most ``scale_set_size`` VMs."""

    name: str
    ib_group: int
    hostnames: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CloudGroupPlan:
    """One node group on a cloud: its type, the NIC layout every instance gets, and whether it is packed."""

    group: str
    role: str
    instance_type: str
    hostnames: tuple[str, ...]
    nics: tuple[CloudNic, ...]
    placed: bool
    fabric: bool
    scale_sets: tuple[ScaleSetPlan, ...] = ()


@dataclass(frozen=True, slots=True)
class CloudStoragePlan:
    """The shared file system on the storage plane and the ports it needs."""

    kind: Literal["fsx-lustre", "filestore", "managed-lustre", "amlfs"]
    network: str
    cidr: str
    capacity_gib: int
    ports: Ports


@dataclass(frozen=True, slots=True)
class CloudPlan:
    """What a cloud component builds, decided up front.

    Attributes:
        resources: Pulumi resource type token → count, exactly what the component registers (tested under mocks).
    """

    provider: Provider
    region: str
    zone: str
    networks: tuple[CloudNetwork, ...]
    groups: tuple[CloudGroupPlan, ...]
    firewall: tuple[FirewallRule, ...]
    storage: CloudStoragePlan | None
    settings: AwsSpec | GcpSpec | AzureSpec
    notes: tuple[str, ...]
    resources: tuple[tuple[str, int], ...]

    def network(self, key: str) -> CloudNetwork:
        """The network called ``key``."""
        return next(n for n in self.networks if n.key == key)

    def subnet(self, key: str) -> CloudSubnet:
        """The subnet called ``key``."""
        return next(s for n in self.networks for s in n.subnets if s.key == key)
