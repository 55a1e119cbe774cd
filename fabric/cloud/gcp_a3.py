"""GCP: an A3/A4 GPU cluster (host VPCs, GPUDirect-TCPX/O VPCs or the RDMA VPC, compact placement, storage)."""

from __future__ import annotations

from collections.abc import Sequence
from ipaddress import IPv4Network

import pulumi
import pulumi_gcp as gcp

from fabric.cloud._args import CloudClusterArgs
from fabric.cloud._shared_fs import reported
from fabric.cloud._tokens import token
from fabric.inventory import cloud_inventory, inventory_yaml
from fabric.inventory.shared_fs import lustre_mount_point
from fabric.model.cloud import GcpSpec
from fabric.plan.cloud.types import CloudGroupPlan, CloudNetwork, CloudSubnet, FirewallRule

SERVICE_NETWORKING = "servicenetworking.googleapis.com"
RESERVATION_KEY = "compute.googleapis.com/reservation-name"
# With IAM deciding what the account may do, the scope is cloud-platform: "Google recommends custom service accounts that
# have cloud-platform scope and permissions granted via IAM Roles" (Terraform google provider, google_compute_instance).
NODE_SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
# Subnet flow logs: 5 s aggregation, half the flows sampled, all metadata (the VPC Flow Logs defaults are 5 s / 0.5).
FLOW_LOG = gcp.compute.SubnetworkLogConfigArgs(aggregation_interval="INTERVAL_5_SEC", flow_sampling=0.5, metadata="INCLUDE_ALL_METADATA")


def account_id(cluster: str) -> str:
    """The nodes' service-account id: 6-30 characters, a letter first, no trailing hyphen.

    Example:
        >>> account_id("gcp-a3ultra"), account_id("a-very-long-cluster-name-for-tests")
        ('gcp-a3ultra-nodes', 'a-very-long-cluster-name-nodes')
    """
    return f"{cluster[:24].rstrip('-')}-nodes"


class GpuCluster(pulumi.ComponentResource):
    """A GPU cluster built from the GCP part of a cluster plan."""

    nodes: pulumi.Output[dict[str, dict[str, str]]]
    ansible_inventory: pulumi.Output[str]

    def __init__(self, name: str, args: CloudClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(token("gcp", "GpuCluster"), name, None, opts)
        cloud = args.plan.cloud
        assert cloud is not None
        assert isinstance(cloud.settings, GcpSpec)
        self._name, self._cloud, self._gcp = name, cloud, cloud.settings
        self._labels = args.tags()
        self._child = pulumi.ResourceOptions(parent=self)
        self.services = [
            gcp.projects.Service(
                f"{name}-api-{api.split('.')[0]}", project=self._gcp.project, service=api, disable_on_destroy=False, opts=self._child
            )
            for api in cloud.services
        ]
        # Everything else waits for the APIs it calls.
        self._child = pulumi.ResourceOptions(parent=self, depends_on=list(self.services))
        self.service_account = self._service_account()
        for role, member in cloud.operator_roles:
            # The operators' IAP tunnel and OS Login grants (plan: ``operator_roles``); the member's name keys the resource.
            principal = member.split(":", 1)[1].replace("@", "-at-")
            gcp.projects.IAMMember(
                f"{name}-operator-{principal}-{role.rsplit('.', 1)[-1]}", project=self._gcp.project, role=role, member=member, opts=self._child
            )
        self.networks = {n.key: self._network(n) for n in cloud.networks}
        self.subnets = {s.key: self._subnet(n, s) for n in cloud.networks for s in n.subnets}
        for rule in cloud.firewall:
            self._firewall(rule)
        self._egress()
        self.file_system = self._storage()
        self.placement = {g.group: self._placement(g) for g in cloud.groups if g.placed}
        self.instances = {host: self._instance(g, host) for g in cloud.groups for host in g.hostnames}
        addresses = {host: self._addresses(g, self.instances[host]) for g in cloud.groups for host in g.hostnames}
        self.nodes = pulumi.Output.all(**addresses) if addresses else pulumi.Output.from_input({})
        mount = self._mount()
        self.ansible_inventory = pulumi.Output.all(self.nodes, mount).apply(lambda f: inventory_yaml(cloud_inventory(args.plan, f[0], f[1])))
        self.register_outputs({"nodes": self.nodes, "ansible_inventory": self.ansible_inventory})

    def _network(self, plan: CloudNetwork) -> gcp.compute.Network:
        return gcp.compute.Network(
            f"{self._name}-{plan.key}",
            project=self._gcp.project,
            auto_create_subnetworks=False,
            routing_mode="REGIONAL",
            mtu=plan.mtu,
            network_profile=plan.profile,
            description=f"gpufabric {self._name}: {plan.plane} plane ({plan.kind})",
            opts=self._child,
        )

    def _service_account(self) -> gcp.serviceaccount.Account | None:
        """A node service account that may only write logs and metrics (the plan's ``node_roles``)."""
        if not self._cloud.node_roles:
            return None
        account = gcp.serviceaccount.Account(
            f"{self._name}-nodes",
            project=self._gcp.project,
            account_id=account_id(self._name),
            display_name=f"gpufabric {self._name} nodes",
            opts=self._child,
        )
        for role in self._cloud.node_roles:
            gcp.projects.IAMMember(
                f"{self._name}-nodes-{role.rsplit('.', 1)[-1]}", project=self._gcp.project, role=role, member=account.member, opts=self._child
            )
        return account

    def _subnet(self, network: CloudNetwork, subnet: CloudSubnet) -> gcp.compute.Subnetwork:
        return gcp.compute.Subnetwork(
            f"{self._name}-{subnet.key}",
            project=self._gcp.project,
            region=self._cloud.region,
            network=self.networks[network.key].id,
            ip_cidr_range=subnet.cidr,
            private_ip_google_access=network.kind != "rdma",
            log_config=FLOW_LOG if subnet.flow_logs else None,
            opts=self._child,
        )

    def _firewall(self, rule: FirewallRule) -> None:
        gcp.compute.Firewall(
            f"{self._name}-{rule.name}",
            project=self._gcp.project,
            network=self.networks[rule.scope].name,
            direction=rule.direction.upper(),
            priority=rule.priority,
            source_ranges=list(rule.peers),
            allows=[gcp.compute.FirewallAllowArgs(protocol=rule.protocol, ports=list(rule.ports) or None)],
            opts=self._child,
        )

    def _egress(self) -> None:
        """Cloud NAT for the inband subnet only: nodes have no external IPs, compute and storage planes no egress."""
        router = gcp.compute.Router(
            f"{self._name}-router", project=self._gcp.project, region=self._cloud.region, network=self.networks["inband"].id, opts=self._child
        )
        gcp.compute.RouterNat(
            f"{self._name}-nat",
            project=self._gcp.project,
            region=self._cloud.region,
            router=router.name,
            nat_ip_allocate_option="AUTO_ONLY",
            source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",
            subnetworks=[gcp.compute.RouterNatSubnetworkArgs(name=self.subnets["inband"].id, source_ip_ranges_to_nats=["ALL_IP_RANGES"])],
            opts=self._child,
        )

    def _mount(self) -> pulumi.Output[dict[str, str] | None] | None:
        """What a node mounts, read back from the created file system (Managed Lustre ``mount_point``; Filestore's address)."""
        fs = self.file_system
        if isinstance(fs, gcp.lustre.Instance):
            return fs.mount_point.apply(lambda m: reported("managed-lustre", *lustre_mount_point(m or "")))
        if isinstance(fs, gcp.filestore.Instance):
            return fs.networks.apply(lambda n: reported("filestore", _first_address(n), "shared"))
        return None

    def _storage(self) -> pulumi.CustomResource | None:
        storage, spec = self._cloud.storage, self._gcp.storage
        if storage is None or spec is None:
            return None
        network = self.networks[storage.network]
        block = IPv4Network(storage.cidr)
        n, project = self._name, self._gcp.project
        address = gcp.compute.GlobalAddress(
            f"{n}-storage-range",
            project=project,
            purpose="VPC_PEERING",
            address_type="INTERNAL",
            address=str(block.network_address),
            prefix_length=block.prefixlen,
            network=network.id,
            opts=self._child,
        )
        peering = gcp.servicenetworking.Connection(
            f"{n}-storage-peering", network=network.id, service=SERVICE_NETWORKING, reserved_peering_ranges=[address.name], opts=self._child
        )
        after = pulumi.ResourceOptions(parent=self, depends_on=[*self.services, peering])
        if storage.kind == "managed-lustre":
            return gcp.lustre.Instance(
                f"{n}-lustre",
                project=project,
                location=self._cloud.zone,
                instance_id=f"{n}-lustre",
                filesystem="lustrefs",
                capacity_gib=str(spec.capacity_gib),
                per_unit_storage_throughput=spec.tier,
                network=network.id,
                labels=self._labels,
                opts=after,
            )
        return gcp.filestore.Instance(
            f"{n}-filestore",
            project=project,
            location=self._cloud.zone,
            tier=spec.tier,
            file_shares=gcp.filestore.InstanceFileSharesArgs(name="shared", capacity_gb=spec.capacity_gib),
            networks=[
                gcp.filestore.InstanceNetworkArgs(
                    network=network.name, modes=["MODE_IPV4"], connect_mode="PRIVATE_SERVICE_ACCESS", reserved_ip_range=address.name
                )
            ],
            labels=self._labels,
            opts=after,
        )

    def _placement(self, group: CloudGroupPlan) -> gcp.compute.ResourcePolicy:
        if group.gpu_topology is not None:
            # Slice-based families (A4X): the policy names the GPU slice shape instead of a distance (Cluster Toolkit a4x-vm).
            policy = gcp.compute.ResourcePolicyGroupPlacementPolicyArgs(collocation="COLLOCATED", gpu_topology=group.gpu_topology)
        else:
            policy = gcp.compute.ResourcePolicyGroupPlacementPolicyArgs(
                vm_count=len(group.hostnames), collocation="COLLOCATED", max_distance=self._gcp.placement.max_distance
            )
        return gcp.compute.ResourcePolicy(
            f"{self._name}-{group.group}-compact",
            project=self._gcp.project,
            region=self._cloud.region,
            group_placement_policy=policy,
            opts=self._child,
        )

    def _instance(self, group: CloudGroupPlan, host: str) -> gcp.compute.Instance:
        rdma = any(n.kind == "MRDMA" for n in group.nics)
        nics = [
            gcp.compute.InstanceNetworkInterfaceArgs(subnetwork=self.subnets[n.subnet].id, nic_type=n.kind, stack_type="IPV4_ONLY")
            for n in group.nics
        ]
        disk = gcp.compute.InstanceBootDiskInitializeParamsArgs(image=self._gcp.image, size=200, type="hyperdisk-balanced" if rdma else "pd-balanced")
        policy = self.placement.get(group.group)
        shielded = self._gcp.shielded_vm
        return gcp.compute.Instance(
            f"{self._name}-{host}",
            name=host,
            project=self._gcp.project,
            zone=self._cloud.zone,
            machine_type=group.instance_type,
            boot_disk=gcp.compute.InstanceBootDiskArgs(initialize_params=disk),
            network_interfaces=nics,
            scheduling=self._scheduling(group),
            reservation_affinity=self._affinity(group),
            resource_policies=policy.self_link if policy is not None else None,
            shielded_instance_config=gcp.compute.InstanceShieldedInstanceConfigArgs(
                enable_vtpm=True, enable_integrity_monitoring=True, enable_secure_boot=shielded.secure_boot
            )
            if shielded.enabled
            else None,
            service_account=gcp.compute.InstanceServiceAccountArgs(email=self.service_account.email, scopes=list(NODE_SCOPES))
            if self.service_account is not None
            else None,
            metadata={"enable-oslogin": "TRUE"},
            labels={**self._labels, "gpufabric-group": group.group},
            opts=self._child,
        )

    def _affinity(self, group: CloudGroupPlan) -> gcp.compute.InstanceReservationAffinityArgs | None:
        """The GPU VMs' reservation affinity from the plan (non-GPU VMs keep the API default)."""
        plan = self._cloud.capacity
        if not group.fabric or plan is None or plan.affinity is None:
            return None
        if plan.affinity != "SPECIFIC_RESERVATION":
            return gcp.compute.InstanceReservationAffinityArgs(type=plan.affinity)
        return gcp.compute.InstanceReservationAffinityArgs(
            type=plan.affinity,
            specific_reservation=gcp.compute.InstanceReservationAffinitySpecificReservationArgs(key=RESERVATION_KEY, values=[plan.reservation or ""]),
        )

    def _scheduling(self, group: CloudGroupPlan) -> gcp.compute.InstanceSchedulingArgs:
        """GPU VMs cannot live-migrate: TERMINATE on host maintenance; the provisioning model comes from the plan."""
        capacity = self._gcp.capacity
        plan = self._cloud.capacity
        if not group.fabric or plan is None:
            return gcp.compute.InstanceSchedulingArgs(on_host_maintenance="MIGRATE", automatic_restart=True)
        duration = gcp.compute.InstanceSchedulingMaxRunDurationArgs(seconds=capacity.max_run_duration_s) if capacity.max_run_duration_s else None
        if plan.model == "FLEX_START":
            return gcp.compute.InstanceSchedulingArgs(
                on_host_maintenance="TERMINATE",
                automatic_restart=False,
                provisioning_model="FLEX_START",
                instance_termination_action="DELETE",
                max_run_duration=duration,
            )
        if plan.model == "SPOT":
            return gcp.compute.InstanceSchedulingArgs(
                on_host_maintenance="TERMINATE",
                automatic_restart=False,
                preemptible=True,
                provisioning_model="SPOT",
                instance_termination_action="DELETE",
                max_run_duration=duration,
            )
        return gcp.compute.InstanceSchedulingArgs(on_host_maintenance="TERMINATE", automatic_restart=True, provisioning_model=plan.model)

    def _addresses(self, group: CloudGroupPlan, instance: gcp.compute.Instance) -> pulumi.Output[dict[str, str]]:
        keys = [n.subnet for n in group.nics]
        return instance.network_interfaces.apply(lambda found: {k: nic.network_ip or "" for k, nic in zip(keys, found, strict=True)})


def _first_address(networks: Sequence[gcp.filestore.outputs.InstanceNetwork] | None) -> str | None:
    """Filestore's address: the first of its first network's ``ip_addresses`` (None until the provider reports it)."""
    addresses = networks[0].ip_addresses if networks else None
    return addresses[0] if addresses else None
