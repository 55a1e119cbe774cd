"""Immutable cloud plan objects: the networks, NIC layouts, rules and groups a cloud component creates.

The components in ``fabric.cloud`` translate these one to one into provider resources; every layout decision is made here,
in plain Python, so it can be tested and printed without Pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # annotations only: an on-prem run never imports the cloud models (fabric/model/deferred.py)
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
    flow_logs: bool = False


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
    """One rule. ``scope`` is the AWS security group, GCP network or Azure plane NSG that holds it.

    ``peers`` are CIDRs, ``*`` (any source), ``self`` (the scope's own members) or ``sg:<scope>`` (another security group).
    Only Azure NSGs carry ``deny`` rules (AWS security groups and GCP firewalls deny whatever is not allowed).
    """

    scope: str
    name: str
    direction: Literal["ingress", "egress"]
    protocol: Protocol
    ports: tuple[str, ...]
    peers: tuple[str, ...]
    priority: int = 1000
    action: Literal["allow", "deny"] = "allow"


@dataclass(frozen=True, slots=True)
class ScaleSetPlan:
    """An Azure scale set: one InfiniBand group (one partition key) with at most ``scale_set_size`` VMs."""

    name: str
    ib_group: int
    hostnames: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CloudGroupPlan:
    """One node group on a cloud: its type, the NIC layout every instance gets, and whether it is packed.

    Attributes:
        placed: the group gets a placement policy/group of ours.
        gpu_topology: GCP GPU slice shape of that policy (A4X ``1x72``), which replaces ``max_distance``.
        root_volume_gib: root volume size (AWS; the other clouds size the boot disk in the component).
    """

    group: str
    role: str
    instance_type: str
    hostnames: tuple[str, ...]
    nics: tuple[CloudNic, ...]
    placed: bool
    fabric: bool
    scale_sets: tuple[ScaleSetPlan, ...] = ()
    gpu_topology: str | None = None
    root_volume_gib: int | None = None
    nvlink_domain_nodes: int | None = None


@dataclass(frozen=True, slots=True)
class CloudStoragePlan:
    """The shared file system on the storage plane and the ports it needs."""

    kind: Literal["fsx-lustre", "filestore", "managed-lustre", "amlfs"]
    network: str
    cidr: str
    capacity_gib: int
    ports: Ports
    subnet: str | None = None
    efa: bool = False


@dataclass(frozen=True, slots=True)
class CapacityPlan:
    """How the GPU nodes get capacity: the provider's provisioning model and reservation affinity.

    Attributes:
        model: GCP provisioning model (STANDARD, SPOT, FLEX_START, RESERVATION_BOUND).
        affinity: GCP reservation affinity (SPECIFIC_RESERVATION, NO_RESERVATION), None for the API default (ANY).
        reservation: the reservation consumed with SPECIFIC_RESERVATION.
    """

    model: str
    affinity: str | None = None
    reservation: str | None = None


@dataclass(frozen=True, slots=True)
class CloudPlan:
    """What a cloud component builds, decided up front.

    Attributes:
        resources: Pulumi resource type token → count, exactly what the component registers (tested under mocks).
        capacity: the GPU nodes' provisioning model and reservation affinity (GCP).
        services: provider APIs the stack enables first (GCP).
        node_roles: IAM roles of the nodes' service account (GCP; least privilege).
        operator_roles: (role, principal) project grants for the operators' out-of-band path (GCP: IAP tunnel, OS Login).
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
    capacity: CapacityPlan | None = None
    services: tuple[str, ...] = ()
    node_roles: tuple[str, ...] = ()
    operator_roles: tuple[tuple[str, str], ...] = ()

    def network(self, key: str) -> CloudNetwork:
        """The network called ``key``."""
        return next(n for n in self.networks if n.key == key)

    def subnet(self, key: str) -> CloudSubnet:
        """The subnet called ``key``."""
        return next(s for n in self.networks for s in n.subnets if s.key == key)
