"""Node inventory: every node with every interface and address on every plane."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from ipaddress import IPv4Network

from fabric.catalog.cloud import AWS_INSTANCE_TYPES, AZURE_VM_SIZES, GCP_MACHINE_TYPES, AwsInstanceType, AzureVmSize, GcpMachineType
from fabric.catalog.hardware import HardwareProfile
from fabric.model.cluster import ClusterSpec
from fabric.model.nics import is_connectx
from fabric.model.nodes import NodeGroupSpec, format_hostname
from fabric.model.planes import PLANE_NAMES
from fabric.plan import addressing
from fabric.plan.compute.two_tier import HostAttachment
from fabric.plan.types import HostInterface, NodePlan

# Lazy catalogs (read at first use): an on-prem plan never reads the cloud data files.
_CLOUD_TYPES: dict[str, Mapping[str, AwsInstanceType | GcpMachineType | AzureVmSize]] = {
    "aws": AWS_INSTANCE_TYPES,
    "gcp": GCP_MACHINE_TYPES,
    "azure": AZURE_VM_SIZES,
}


def _cloud_gpus(target: str, kind: str) -> int:
    """GPUs of a cloud instance type (0 when unknown or on-prem)."""
    found = _CLOUD_TYPES[target].get(kind) if target in _CLOUD_TYPES else None
    return found.gpus if found is not None else 0


def build_nodes(spec: ClusterSpec, attached: dict[tuple[int, int], HostAttachment]) -> tuple[NodePlan, ...]:
    """Every node of every group, sorted by node id."""
    nodes: list[NodePlan] = []
    for group in spec.nodes:
        profile = spec.profile_of(group)  # once per group: its nodes share hardware, port names and planes
        shared = _Group(group, profile, _group_planes(spec, group, profile) if profile is not None else ())
        nodes.extend(
            _node(spec, shared, index, node_id, attached) for index, node_id in zip(range(1, group.count + 1), group.node_ids(), strict=True)
        )
    return tuple(sorted(nodes, key=lambda n: n.node_id))


@dataclass(frozen=True, slots=True)
class _PlanePorts:
    """One plane's view for the nodes of a group: their ports and where the ports' addresses come from."""

    plane: str
    cidr: IPv4Network | None
    stride: int
    mtu: int
    speed_gbps: int
    infiniband: bool
    names: tuple[str, ...]
    hcas: tuple[str, ...]
    count: int


@dataclass(frozen=True, slots=True)
class _Group:
    """What the nodes of one group share: the group, its hardware (None on cloud) and its planes' ports."""

    spec: NodeGroupSpec
    profile: HardwareProfile | None
    planes: tuple[_PlanePorts, ...]


def _group_planes(spec: ClusterSpec, group: NodeGroupSpec, profile: HardwareProfile) -> tuple[_PlanePorts, ...]:
    """The planes a group's hardware has ports on, in plane order."""
    views: list[_PlanePorts] = []
    for plane in PLANE_NAMES:
        ports = profile.ports.get(plane)
        if ports is None:
            continue
        infiniband = plane == "compute" and spec.planes.compute.transport == "infiniband"
        names = group.interfaces.get(plane) or ports.interface_names("infiniband" if infiniband else "ethernet")
        plane_spec = getattr(spec.planes, plane)
        views.append(
            _PlanePorts(
                plane,
                plane_spec.cidr,
                plane_spec.max_ports_per_node,
                plane_spec.mtu,
                ports.speed_gbps,
                infiniband,
                tuple(names),
                ports.hcas,
                ports.count,
            )
        )
    return tuple(views)


def _node(spec: ClusterSpec, shared: _Group, index: int, node_id: int, attached: dict[tuple[int, int], HostAttachment]) -> NodePlan:
    group, profile = shared.spec, shared.profile
    hostname = format_hostname(group.hostname, index)
    if profile is None:
        kind = group.instance_type or ""
        return NodePlan(hostname, group.group, group.role, node_id, kind, _cloud_gpus(spec.target, kind), ())
    explicit = group.addresses.get(hostname, {})
    interfaces: list[HostInterface] = []
    for view in shared.planes:
        plane = view.plane
        interfaces.extend(
            _interface(
                view,
                node_id,
                port,
                explicit=str(explicit[plane]) if port == 0 and plane in explicit else None,
                attachment=attached.get((node_id, port)) if plane == "compute" else None,
            )
            for port in range(view.count)
        )
    su = slot = None
    fabric = spec.fabric
    if fabric is not None and "compute" in profile.ports:
        su, slot = (node_id - 1) // fabric.su_size + 1, (node_id - 1) % fabric.su_size + 1
    roce_ports = spec.planes.compute.transport == "roce" and "compute" in profile.ports
    stack = group.rdma_stack or ("doca" if roce_ports and is_connectx(profile) else "inbox")  # DOCA's tools are ConnectX tools
    return NodePlan(hostname, group.group, group.role, node_id, profile.name, profile.gpus, tuple(interfaces), su, slot, stack)


def _interface(view: _PlanePorts, node_id: int, port: int, *, explicit: str | None, attachment: HostAttachment | None) -> HostInterface:
    address = peer = None
    if attachment is not None and attachment.host_address is not None:
        address, peer = f"{attachment.host_address}/31", attachment.leaf_address
    elif view.cidr is not None and explicit is not None:
        address = f"{explicit}/{view.cidr.prefixlen}"
    elif view.cidr is not None:
        address = addressing.allocate_plane_address(view.cidr, node_id, port, view.stride, view.plane)
    return HostInterface(  # positional, in field order (250,880 interfaces at 100k GPUs): name, plane, index, speed, mtu,
        view.names[port],  # link layer, kind, address, peer address, switch, switch port, rail, HCA
        view.plane,
        port,
        view.speed_gbps,
        view.mtu,
        "infiniband" if view.infiniband else "ethernet",
        "bmc" if view.plane == "oob" else "netdev",
        address,
        peer,
        attachment.leaf if attachment else None,
        attachment.leaf_port if attachment else None,
        attachment.rail + 1 if attachment and attachment.rail is not None else None,
        view.hcas[port] if port < len(view.hcas) else None,
    )
