"""GCP layout: host VPCs, GPUDirect-TCPX/O VPCs or the RDMA VPC, compact placement, firewall rules per plane, storage."""

from __future__ import annotations

import math
from collections import Counter
from ipaddress import IPv4Network

from fabric.catalog.cloud import GCP_MACHINE_TYPES, GcpMachineType
from fabric.model.cloud import GcpSpec
from fabric.model.cluster import ClusterSpec
from fabric.plan.cloud.types import (
    CapacityPlan,
    CloudGroupPlan,
    CloudNetwork,
    CloudNic,
    CloudPlan,
    CloudStoragePlan,
    CloudSubnet,
    FirewallRule,
    Ports,
    Protocol,
)

SERVICE_NETWORKING = "servicenetworking.googleapis.com"
IAP_RANGE = "35.235.240.0/20"  # Identity-Aware Proxy TCP forwarding: the cloud's out-of-band path
# The APIs a cluster uses, enabled before anything else (Managed Lustre VPC guide step 1: "gcloud services enable
# servicenetworking.googleapis.com"); IAP TCP forwarding and OS Login carry the out-of-band SSH path.
BASE_SERVICES = ("compute.googleapis.com", "iap.googleapis.com", "logging.googleapis.com", "monitoring.googleapis.com", "oslogin.googleapis.com")
STORAGE_SERVICES = {"filestore": "file.googleapis.com", "managed-lustre": "lustre.googleapis.com"}
# Creating a service account needs the IAM API: Cluster Toolkit modules/project/service-account/metadata.yaml
# "requirements: services: - iam.googleapis.com" (GoogleCloudPlatform/cluster-toolkit @ 1047080).
IAM_SERVICE = "iam.googleapis.com"
# The operators' out-of-band path: IAP TCP forwarding to port 22 and an OS Login account on the VM. Paraphrased, not quoted
# (the pages' exact sentences were not retrievable in this session; the 2026-11 cloud audit M8 names the same two roles):
# - roles/iap.tunnelResourceAccessor: IAP TCP forwarding (https://cloud.google.com/iap/docs/using-tcp-forwarding) lets a
#   principal open a tunnel only with this role (permission iap.tunnelInstances.accessViaIAP);
# - roles/compute.osAdminLogin: OS Login (https://cloud.google.com/compute/docs/oslogin/set-up-oslogin) logs a principal
#   in with roles/compute.osLogin, with sudo under roles/compute.osAdminLogin (the operators run Ansible with become);
# - roles/iam.serviceAccountUser: the same OS Login page asks for it when the VM runs as a service account (ours do).
OPERATOR_ROLES = ("roles/iap.tunnelResourceAccessor", "roles/compute.osAdminLogin", "roles/iam.serviceAccountUser")
# Least privilege for the nodes' service account: a user-managed account (never the Compute Engine default, which holds
# Editor) that may write logs and metrics, nothing else; CIS GKE 5.2.1 names logging.logWriter and monitoring.metricWriter
# (plus monitoring.viewer, which only GKE's own agents need) as the node minimum.
NODE_ROLES = ("roles/logging.logWriter", "roles/monitoring.metricWriter")
STORAGE_PORTS: dict[str, Ports] = {
    "managed-lustre": (("tcp", "988"),),
    "filestore": (("tcp", "111"), ("tcp", "2049"), ("udp", "111"), ("udp", "2049")),
}


def split_subnets(cidr: IPv4Network, count: int) -> tuple[IPv4Network, ...]:
    """The first ``count`` equal subnets of ``cidr`` (split by ``ceil(log2(count))`` bits, as Cluster Toolkit does).

    Example:
        >>> [str(n) for n in split_subnets(IPv4Network("10.0.0.0/16"), 3)]
        ['10.0.0.0/18', '10.0.64.0/18', '10.0.128.0/18']
    """
    bits = math.ceil(math.log2(count)) if count > 1 else 0
    return tuple(cidr.subnets(prefixlen_diff=bits))[:count]


def rdma_profile(project: str, zone: str) -> str:
    """The RoCE network profile of a zone; RDMA VPCs and their NICs are bound to it.

    Example:
        >>> rdma_profile("p1", "europe-west1-b")
        'projects/p1/global/networkProfiles/europe-west1-b-vpc-roce'
    """
    return f"projects/{project}/global/networkProfiles/{zone}-vpc-roce"


def _gpu_machine(spec: ClusterSpec) -> GcpMachineType | None:
    return next((GCP_MACHINE_TYPES[g.instance_type or ""] for g in spec.nodes if g.role == "gpu" and g.count), None)


def plan_gcp(spec: ClusterSpec) -> CloudPlan:
    """The GCP plan of a validated definition (one GPU network layout per cluster, checked by the rules)."""
    gcp = spec.gcp
    assert gcp is not None
    planes = spec.planes
    machine = _gpu_machine(spec)
    logs = gcp.flow_logs
    inband = CloudNetwork(
        "inband",
        "inband",
        "gvnic",
        planes.inband.mtu,
        (str(planes.inband.cidr),),
        (CloudSubnet("inband", "inband", "inband", str(planes.inband.cidr), flow_logs=logs),),
    )
    networks = [inband]
    storage_cidr = planes.storage.cidr
    storage_vpc = machine is not None and machine.gvnic_vpcs >= 2
    if storage_vpc:
        # Second gVNIC (A3 Ultra / A4 net-1) carries the storage plane: nodes in the first half, the service in the second.
        nodes_half, service_half = storage_cidr.subnets(prefixlen_diff=1)
        networks.append(
            CloudNetwork(
                "storage",
                "storage",
                "gvnic",
                planes.storage.mtu,
                (str(storage_cidr),),
                (CloudSubnet("storage", "storage", "storage", str(nodes_half), flow_logs=logs),),
            )
        )
        storage_cidr = service_half
    fabric_nics = _fabric_networks(spec, gcp, machine, networks)
    host_nics = tuple(CloudNic(i, 0, "GVNIC", n.subnets[0].key, n.plane) for i, n in enumerate(networks[: 2 if storage_vpc else 1]))
    groups = tuple(
        CloudGroupPlan(
            group.group,
            group.role,
            group.instance_type or "",
            tuple(group.hostnames()),
            host_nics + (_renumber(fabric_nics, len(host_nics)) if group.role == "gpu" else ()),
            placed=group.role == "gpu" and gcp.placement.enabled,
            fabric=group.role == "gpu",
            gpu_topology=GCP_MACHINE_TYPES[group.instance_type or ""].gpu_topology if group.role == "gpu" else None,
            nvlink_domain_nodes=_slice_nodes(GCP_MACHINE_TYPES[group.instance_type or ""]) if group.role == "gpu" and gcp.placement.enabled else None,
        )
        for group in spec.nodes
        if group.count
    )
    storage = None
    if gcp.storage is not None:
        ports = STORAGE_PORTS[gcp.storage.kind]
        storage = CloudStoragePlan(gcp.storage.kind, "storage" if storage_vpc else "inband", str(storage_cidr), gcp.storage.capacity_gib, ports)
    firewall = _firewall(tuple(networks), storage)
    plan_networks = tuple(networks)
    capacity = gcp_capacity(gcp, reservation_bound=machine is not None and machine.reservation_bound)
    services = _services(gcp, storage)
    roles = NODE_ROLES if gcp.service_account else ()
    operators = tuple((role, member) for member in gcp.operators for role in OPERATOR_ROLES)
    notes = _notes(gcp, machine, storage_vpc, storage, capacity)
    resources = _resources(plan_networks, groups, firewall, storage, services=len(services), roles=len(roles) + len(operators), account=bool(roles))
    return CloudPlan(
        "gcp",
        gcp.region,
        gcp.zone,
        plan_networks,
        groups,
        firewall,
        storage,
        gcp,
        notes,
        resources,
        capacity,
        services,
        roles,
        operators,
    )


def _services(gcp: GcpSpec, storage: CloudStoragePlan | None) -> tuple[str, ...]:
    if not gcp.enable_apis:
        return ()
    found = {*BASE_SERVICES, *((SERVICE_NETWORKING, STORAGE_SERVICES[storage.kind]) if storage else ())}
    if gcp.service_account:
        found.add(IAM_SERVICE)
    return tuple(sorted(found))


def _slice_nodes(machine: GcpMachineType) -> int | None:
    """VMs of one NVLink domain when a group is placed as one GPU slice (A4X ``1x72``: 72 GPUs / 4 = 18 VMs), else None.

    One placed group = one compact policy with ``gpuTopology`` = one slice (the rules keep a group within a slice).
    """
    if machine.gpu_topology is None or not machine.gpus:
        return None
    rows, gpus = (int(n) for n in machine.gpu_topology.split("x"))
    return rows * gpus // machine.gpus


def gcp_capacity(gcp: GcpSpec, *, reservation_bound: bool = False) -> CapacityPlan:
    """Provisioning model and reservation affinity of the GPU VMs, from the capacity type and reservation mode.

    - specific reservation: STANDARD VMs with SPECIFIC_RESERVATION affinity (slurm-gcp resume.py keeps the provisioning
      model of ordinary reservations and sets ``consumeReservationType: SPECIFIC_RESERVATION``);
    - calendar: RESERVATION_BOUND, which "lets you create ... VMs by using reserved capacity from a future reservation in
      calendar mode or future reservation in AI Hypercomputer" (GCP about-reservation-bound-vms); the default for a
      reservation of a ``reservation_bound`` type (A3 Ultra, A4, A4X: Cluster Toolkit "if you have a reservation, keep
      RESERVATION_BOUND");
    - dws-flex: FLEX_START with NO_RESERVATION (slurm-gcp partition.tf ``no_reservation_affinity``; flex-start consumes no
      reservation);
    - reservation_mode none: on-demand VMs that never consume a reservation (NO_RESERVATION); otherwise the API default.

    Example:
        >>> from fabric.model.cloud import GcpCapacitySpec, GcpSpec
        >>> spec = GcpSpec(project="demo-123", region="us-central1", zone="us-central1-a", image="i",
        ...                capacity=GcpCapacitySpec(type="reservation", reservation="r1", reservation_mode="calendar"))
        >>> gcp_capacity(spec)
        CapacityPlan(model='RESERVATION_BOUND', affinity='SPECIFIC_RESERVATION', reservation='r1')
    """
    capacity = gcp.capacity
    mode = capacity.mode_for(reservation_bound=reservation_bound)
    if capacity.type == "reservation":
        model = "RESERVATION_BOUND" if mode == "calendar" else "STANDARD"
        return CapacityPlan(model, "SPECIFIC_RESERVATION", capacity.reservation)
    if capacity.type == "dws-flex":
        return CapacityPlan("FLEX_START", "NO_RESERVATION")
    model = "SPOT" if capacity.type == "spot" else "STANDARD"
    return CapacityPlan(model, "NO_RESERVATION" if mode == "none" else None)


def _fabric_networks(spec: ClusterSpec, gcp: GcpSpec, machine: GcpMachineType | None, networks: list[CloudNetwork]) -> tuple[CloudNic, ...]:
    compute = spec.planes.compute
    if machine is None or compute.cidr is None:
        return ()
    if machine.gpu_vpcs:
        nics: list[CloudNic] = []
        for i, cidr in enumerate(split_subnets(compute.cidr, machine.gpu_vpcs)):
            key = f"gpu-{i}"
            subnet = CloudSubnet(key, key, "compute", str(cidr), flow_logs=gcp.flow_logs)
            networks.append(CloudNetwork(key, "compute", "gpu", compute.mtu, (str(cidr),), (subnet,)))
            nics.append(CloudNic(i, 0, "GVNIC", key, "compute"))
        return tuple(nics)
    if machine.rdma_nics:
        # No flow logs on RoCE subnets: RDMA-profile VPCs support a restricted feature set (create-vpc-network-rdma: "If you
        # attempt to configure unsupported features, Google Cloud returns an error"), and their traffic bypasses the host.
        subnets = tuple(CloudSubnet(f"rdma-{i}", "rdma", "compute", str(c)) for i, c in enumerate(split_subnets(compute.cidr, machine.rdma_nics)))
        networks.append(CloudNetwork("rdma", "compute", "rdma", compute.mtu, (str(compute.cidr),), subnets, rdma_profile(gcp.project, gcp.zone)))
        return tuple(CloudNic(i, 0, "MRDMA", s.key, "compute") for i, s in enumerate(subnets))
    return ()


def _renumber(nics: tuple[CloudNic, ...], start: int) -> tuple[CloudNic, ...]:
    return tuple(CloudNic(start + i, 0, n.kind, n.subnet, n.plane) for i, n in enumerate(nics))


def _firewall(networks: tuple[CloudNetwork, ...], storage: CloudStoragePlan | None) -> tuple[FirewallRule, ...]:
    rules: list[FirewallRule] = []
    for network in networks:
        if network.kind == "rdma":
            continue  # RDMA-profile VPCs allow all traffic implicitly and accept no firewall rules
        own = tuple(s.cidr for s in network.subnets)
        rules.append(FirewallRule(network.key, f"{network.key}-internal", "ingress", "all", (), own))
    rules.append(FirewallRule("inband", "inband-iap-ssh", "ingress", "tcp", ("22",), (IAP_RANGE,)))
    if storage is not None:
        clients = tuple(s.cidr for s in next(n for n in networks if n.key == storage.network).subnets)
        protocols: list[Protocol] = sorted({p for p, _ in storage.ports})
        for proto in protocols:
            ports = tuple(port for p, port in storage.ports if p == proto)
            rules.append(FirewallRule(storage.network, f"storage-{proto}", "ingress", proto, ports, (storage.cidr, *clients)))
    return tuple(rules)


def _notes(
    gcp: GcpSpec, machine: GcpMachineType | None, storage_vpc: bool, storage: CloudStoragePlan | None, capacity: CapacityPlan
) -> tuple[str, ...]:
    notes = ["no external IPs; egress through Cloud NAT on the inband VPC", "out-of-band access: IAP TCP forwarding (SSH from 35.235.240.0/20)"]
    affinity = f", {capacity.affinity}" + (f" {capacity.reservation}" if capacity.reservation else "") if capacity.affinity else ""
    notes.append(f"GPU VMs: provisioning model {capacity.model}{affinity}")
    if gcp.capacity.type == "reservation" and not gcp.placement.enabled:
        notes.append("placement: the reservation's own (no placement policy of ours on reserved VMs)")
    if gcp.operators:
        notes.append(f"operators ({len(gcp.operators)}): IAP tunnel, OS Login admin and service-account user on the project")
    if machine is not None and machine.gpu_topology and gcp.placement.enabled:
        notes.append(f"placement: compact policy with GPU slice {machine.gpu_topology}")
    shielded = gcp.shielded_vm
    if shielded.enabled:
        notes.append(
            "Shielded VM: vTPM and integrity monitoring"
            + (", Secure Boot" if shielded.secure_boot else " (Secure Boot off: unsigned GPU/RDMA modules)")
        )
    if gcp.flow_logs:
        notes.append("VPC flow logs on every subnet except the RDMA VPC's")
    if machine is not None and machine.gpu_vpcs:
        notes.append(f"{machine.name}: {machine.gpu_vpcs} GPU VPCs (GVNIC, MTU {machine.mtu}) for {machine.transport}")
    if machine is not None and machine.rdma_nics:
        notes.append(f"{machine.name}: RDMA VPC with {machine.rdma_nics} subnets, MRDMA NICs, MTU {machine.mtu}, no firewall rules")
    if storage is not None:
        where = "the storage VPC (second gVNIC)" if storage_vpc else "the inband VPC"
        notes.append(f"storage: {storage.kind} via private service access {storage.cidr} in {where}")
    return tuple(notes)


def _resources(
    networks: tuple[CloudNetwork, ...],
    groups: tuple[CloudGroupPlan, ...],
    firewall: tuple[FirewallRule, ...],
    storage: CloudStoragePlan | None,
    *,
    services: int,
    roles: int,
    account: bool,
) -> tuple[tuple[str, int], ...]:
    count: Counter[str] = Counter(
        {
            "gcp:compute/network:Network": len(networks),
            "gcp:compute/subnetwork:Subnetwork": sum(len(n.subnets) for n in networks),
            "gcp:compute/firewall:Firewall": len(firewall),
            "gcp:compute/router:Router": 1,
            "gcp:compute/routerNat:RouterNat": 1,
            "gcp:compute/instance:Instance": sum(len(g.hostnames) for g in groups),
        }
    )
    placed = sum(1 for g in groups if g.placed)
    if placed:
        count["gcp:compute/resourcePolicy:ResourcePolicy"] += placed
    if storage is not None:
        count["gcp:compute/globalAddress:GlobalAddress"] += 1
        count["gcp:servicenetworking/connection:Connection"] += 1
        count["gcp:lustre/instance:Instance" if storage.kind == "managed-lustre" else "gcp:filestore/instance:Instance"] += 1
    if services:
        count["gcp:projects/service:Service"] += services
    if account:
        count["gcp:serviceaccount/account:Account"] += 1
    if roles:
        count["gcp:projects/iAMMember:IAMMember"] += roles
    return tuple(sorted(count.items()))
