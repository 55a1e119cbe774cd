"""Azure: an ND InfiniBand cluster (VNet with a subnet per plane, NSGs, Bastion, IB scale sets, Managed Lustre)."""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
from pulumi_azure_native import compute, network, resources, storagecache

from fabric.cloud._args import CloudClusterArgs
from fabric.cloud._shared_fs import reported
from fabric.cloud._tokens import token
from fabric.errors import StackConfigError
from fabric.inventory import ROLE_GROUPS, inventory_yaml
from fabric.model.cloud import AzureSpec
from fabric.plan.cloud.nccl import cloud_nccl_env
from fabric.plan.cloud.stack import gpu_board, gpu_stack
from fabric.plan.cloud.types import CloudGroupPlan, FirewallRule, ScaleSetPlan

ADMIN_USER = "gpufabric"
_PROTOCOLS = {"all": "*", "tcp": "Tcp", "udp": "Udp", "icmp": "Icmp"}


class NdCluster(pulumi.ComponentResource):
    """An ND cluster built from the Azure part of a cluster plan. Every scale set is one InfiniBand group."""

    scale_sets: pulumi.Output[dict[str, dict[str, object]]]
    ansible_inventory: pulumi.Output[str]

    def __init__(self, name: str, args: CloudClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        if not args.ssh_public_key:
            msg = 'Azure scale sets need an admin SSH public key: pulumi config set sshPublicKey "$(cat ~/.ssh/id_ed25519.pub)"'
            raise StackConfigError(msg)
        super().__init__(token("azure", "NdCluster"), name, None, opts)
        cloud = args.plan.cloud
        assert cloud is not None
        assert isinstance(cloud.settings, AzureSpec)
        self._name, self._cloud, self._azure, self._key = name, cloud, cloud.settings, args.ssh_public_key
        self._tags = args.tags()
        self._child = pulumi.ResourceOptions(parent=self)
        self.resource_group = resources.ResourceGroup(
            f"{name}-rg", resource_group_name=self._azure.resource_group, location=cloud.region, tags=self._tags, opts=self._child
        )
        self._rg = self.resource_group.name
        self._network()
        self.proximity_group = compute.ProximityPlacementGroup(
            f"{name}-ppg",
            resource_group_name=self._rg,
            location=cloud.region,
            proximity_placement_group_type="Standard",
            tags=self._tags,
            opts=self._child,
        )
        self.vmss = {s.name: self._scale_set(g, s) for g in cloud.groups for s in g.scale_sets}
        self.file_system = self._lustre()
        stacks = {g.group: gpu_stack("azure", g) for g in cloud.groups}
        nccl = {g.group: env for g in cloud.groups if (env := cloud_nccl_env("azure", g))}
        members: dict[str, dict[str, object]] = {
            s.name: {"group": g.group, "ib_group": s.ib_group, "hostnames": list(s.hostnames)} for g in cloud.groups for s in g.scale_sets
        }
        self.scale_sets = pulumi.Output.from_input(members)
        boards = {g.group: gpu_board("azure", g) for g in cloud.groups}
        # What a node mounts: the MGS address and Lustre version AMLFS reports once created (clientInfo).
        fs = self.file_system
        mount = (
            fs.client_info.apply(lambda c: reported("amlfs", c.mgs_address if c else None, "lustrefs", c.lustre_version if c else None))
            if fs
            else None
        )
        self.ansible_inventory = pulumi.Output.all(mount).apply(lambda f: _dynamic_inventory(self._azure, members, stacks, nccl, boards, mount=f[0]))
        self.register_outputs({"scale_sets": self.scale_sets, "ansible_inventory": self.ansible_inventory})

    def _network(self) -> None:
        n, region, vnet_plan = self._name, self._cloud.region, self._cloud.network("vnet")
        self.nsgs = {
            scope: network.NetworkSecurityGroup(
                f"{n}-nsg-{scope}",
                resource_group_name=self._rg,
                location=region,
                security_rules=[_security_rule(r) for r in self._cloud.firewall if r.scope == scope],
                tags=self._tags,
                opts=self._child,
            )
            for scope in sorted({r.scope for r in self._cloud.firewall})
        }
        sku = network.PublicIPAddressSkuArgs(name="Standard")
        nat_ip = network.PublicIPAddress(
            f"{n}-nat-ip", resource_group_name=self._rg, location=region, sku=sku, public_ip_allocation_method="Static", opts=self._child
        )
        nat = network.NatGateway(
            f"{n}-nat",
            resource_group_name=self._rg,
            location=region,
            sku=network.NatGatewaySkuArgs(name="Standard"),
            public_ip_addresses=[network.SubResourceArgs(id=nat_ip.id)],
            opts=self._child,
        )
        subnets = [
            network.SubnetArgs(
                name=s.key,
                address_prefix=s.cidr,
                network_security_group=network.NetworkSecurityGroupArgs(id=self.nsgs[s.plane].id) if s.plane in self.nsgs else None,
                nat_gateway=network.SubResourceArgs(id=nat.id) if s.plane == "inband" else None,
            )
            for s in vnet_plan.subnets
        ]
        self.vnet = network.VirtualNetwork(
            f"{n}-vnet",
            resource_group_name=self._rg,
            location=region,
            address_space=network.AddressSpaceArgs(address_prefixes=list(vnet_plan.cidrs)),
            subnets=subnets,
            tags=self._tags,
            opts=self._child,
        )
        self.subnet_ids = {s.key: self.vnet.id.apply(lambda vnet_id, key=s.key: f"{vnet_id}/subnets/{key}") for s in vnet_plan.subnets}
        bastion_subnet = next(s.key for s in vnet_plan.subnets if s.public)
        bastion_ip = network.PublicIPAddress(
            f"{n}-bastion-ip", resource_group_name=self._rg, location=region, sku=sku, public_ip_allocation_method="Static", opts=self._child
        )
        network.BastionHost(
            f"{n}-bastion",
            bastion_host_name=f"{n}-bastion",  # a fixed name: docs/cloud.md's `az network bastion tunnel -n` uses it
            resource_group_name=self._rg,
            location=region,
            # Bastion native client: "Connections via native client require the Bastion Standard SKU" and tunnelling
            # ("Native Client" = enableTunneling); IP-based connection lets `az network bastion ssh|tunnel
            # --target-ip-address` reach scale-set VMs by the private address the azure_rm inventory reports.
            sku=network.SkuArgs(name="Standard"),
            enable_tunneling=True,
            enable_ip_connect=True,
            ip_configurations=[
                network.BastionHostIPConfigurationArgs(
                    name="bastion",
                    subnet=network.SubResourceArgs(id=self.subnet_ids[bastion_subnet]),
                    public_ip_address=network.SubResourceArgs(id=bastion_ip.id),
                )
            ],
            tags=self._tags,
            opts=self._child,
        )

    def _scale_set(self, group: CloudGroupPlan, scale_set: ScaleSetPlan) -> compute.VirtualMachineScaleSet:
        image = self._azure.image
        nic = group.nics[0]
        profile = compute.VirtualMachineScaleSetVMProfileArgs(
            storage_profile=compute.VirtualMachineScaleSetStorageProfileArgs(
                image_reference=compute.ImageReferenceArgs(publisher=image.publisher, offer=image.offer, sku=image.sku, version=image.version),
                os_disk=compute.VirtualMachineScaleSetOSDiskArgs(
                    create_option=compute.DiskCreateOptionTypes.FROM_IMAGE,
                    caching=compute.CachingTypes.READ_WRITE,
                    managed_disk=compute.VirtualMachineScaleSetManagedDiskParametersArgs(
                        storage_account_type=compute.StorageAccountTypes.PREMIUM_LRS
                    ),
                ),
            ),
            os_profile=compute.VirtualMachineScaleSetOSProfileArgs(
                computer_name_prefix=scale_set.name,
                admin_username=ADMIN_USER,
                linux_configuration=compute.LinuxConfigurationArgs(
                    disable_password_authentication=True,
                    ssh=compute.SshConfigurationArgs(
                        public_keys=[compute.SshPublicKeyArgs(path=f"/home/{ADMIN_USER}/.ssh/authorized_keys", key_data=self._key)]
                    ),
                ),
            ),
            network_profile=compute.VirtualMachineScaleSetNetworkProfileArgs(
                network_interface_configurations=[
                    compute.VirtualMachineScaleSetNetworkConfigurationArgs(
                        name=f"{scale_set.name}-nic",
                        primary=True,
                        enable_accelerated_networking=nic.kind == "accelerated",
                        ip_configurations=[
                            compute.VirtualMachineScaleSetIPConfigurationArgs(
                                name="ipconfig", primary=True, subnet=compute.ApiEntityReferenceArgs(id=self.subnet_ids[nic.subnet])
                            )
                        ],
                    )
                ]
            ),
            # BootDiagnostics.storageUri (ARM, pulumi_azure_native 3.29.0): "If storageUri is not specified while enabling boot
            # diagnostics, managed storage will be used" (serial console output and screenshot of a VM that does not boot).
            diagnostics_profile=compute.DiagnosticsProfileArgs(boot_diagnostics=compute.BootDiagnosticsArgs(enabled=True))
            if self._azure.boot_diagnostics
            else None,
            security_profile=compute.SecurityProfileArgs(encryption_at_host=True) if self._azure.encryption_at_host else None,
            priority=compute.VirtualMachinePriorityTypes.SPOT if self._azure.capacity == "spot" else None,
            eviction_policy=compute.VirtualMachineEvictionPolicyTypes.DELETE if self._azure.capacity == "spot" else None,
        )
        return compute.VirtualMachineScaleSet(
            f"{self._name}-{scale_set.name}",
            resource_group_name=self._rg,
            location=self._cloud.region,
            vm_scale_set_name=f"{self._name}-{scale_set.name}",
            sku=compute.SkuArgs(name=group.instance_type, tier="Standard", capacity=len(scale_set.hostnames)),
            orchestration_mode=compute.OrchestrationMode.UNIFORM,
            # One scale set = one InfiniBand partition: all VMs in one placement group, one fault domain, no extra VMs.
            single_placement_group=True,
            platform_fault_domain_count=1,
            overprovision=False,
            upgrade_policy=compute.UpgradePolicyArgs(mode=compute.UpgradeMode.MANUAL),
            proximity_placement_group=compute.SubResourceArgs(id=self.proximity_group.id) if group.placed else None,
            # A system-assigned identity, no role of ours: the node's agents (Azure Monitor, azcopy, a Key Vault read the
            # operator grants) authenticate as the VM instead of with a secret on disk (CycleCloud Workspace gives its scale
            # sets an identity too).
            identity=compute.VirtualMachineScaleSetIdentityArgs(type=compute.ResourceIdentityType.SYSTEM_ASSIGNED)
            if self._azure.managed_identity
            else None,
            virtual_machine_profile=profile,
            tags={
                **self._tags,
                "gpufabric-role": ROLE_GROUPS[group.role],
                "gpufabric-group": group.group,
                "gpufabric-ib-group": str(scale_set.ib_group),
            },
            opts=self._child,
        )

    def _lustre(self) -> storagecache.AmlFilesystem | None:
        lustre = self._azure.managed_lustre
        if self._cloud.storage is None or lustre is None:
            return None
        return storagecache.AmlFilesystem(
            f"{self._name}-amlfs",
            resource_group_name=self._rg,
            location=self._cloud.region,
            sku=storagecache.SkuNameArgs(name=lustre.sku),
            storage_capacity_ti_b=lustre.capacity_tib,
            filesystem_subnet=self.subnet_ids["storage"],
            zones=["1"],
            maintenance_window=storagecache.AmlFilesystemMaintenanceWindowArgs(
                day_of_week=storagecache.MaintenanceDayOfWeekType.SUNDAY, time_of_day_utc="02:00"
            ),
            tags=self._tags,
            opts=self._child,
        )


def _security_rule(rule: FirewallRule) -> network.SecurityRuleArgs:
    anywhere = rule.peers == ("*",)
    return network.SecurityRuleArgs(
        name=rule.name,
        priority=rule.priority,
        direction=network.SecurityRuleDirection.INBOUND if rule.direction == "ingress" else network.SecurityRuleDirection.OUTBOUND,
        access=network.SecurityRuleAccess.ALLOW if rule.action == "allow" else network.SecurityRuleAccess.DENY,
        protocol=_PROTOCOLS[rule.protocol],
        source_address_prefix="*" if anywhere else None,
        source_address_prefixes=None if anywhere else list(rule.peers),
        source_port_range="*",
        destination_address_prefix="*",
        destination_port_ranges=list(rule.ports) if rule.ports else None,
        destination_port_range=None if rule.ports else "*",
    )


def _dynamic_inventory(
    azure: AzureSpec,
    members: dict[str, dict[str, object]],
    stacks: Mapping[str, tuple[str, int]],
    nccl: Mapping[str, Mapping[str, str]],
    boards: Mapping[str, tuple[int, bool]],
    *,
    mount: Mapping[str, str] | None = None,
) -> str:
    """An ``azure.azcollection.azure_rm`` inventory source: scale-set VMs get their names only when Azure creates them.

    Hosts land in the same role groups as on-prem (``gpu_nodes`` …), in ``group_<group>`` and in ``ib_group_<n>``.
    Like the other clouds' inventories they carry ``gpufabric_target`` and, by their group tag, the fabric software
    ``roles/cloud_fabric`` installs (``gpufabric_gpu_stack``, ``gpufabric_gpu_nics``) and the NCCL settings
    ``roles/nccl_env`` writes (``gpufabric_nccl_env``).
    """
    stack = {group: s for group, (s, _) in sorted(stacks.items())}
    nics = {group: n for group, (_, n) in sorted(stacks.items())}
    gpus = {group: n for group, (n, _) in sorted(boards.items())}
    nvswitch = {group: s for group, (_, s) in sorted(boards.items())}
    source = {
        "plugin": "azure.azcollection.azure_rm",
        "include_vm_resource_groups": [azure.resource_group],
        "include_vmss_resource_groups": [azure.resource_group],
        "auth_source": "auto",
        "plain_host_names": True,
        # Nodes have private addresses only; reach them through the Bastion tunnel (docs/cloud.md, "Reaching Azure nodes").
        "hostvar_expressions": {
            "ansible_host": "private_ipv4_addresses | first",
            "gpufabric_target": "'azure'",
            "gpufabric_gpu_stack": f"{stack!r}.get(tags['gpufabric-group'], 'none')",
            "gpufabric_gpu_nics": f"{nics!r}.get(tags['gpufabric-group'], 0)",
            "gpufabric_gpus": f"{gpus!r}.get(tags['gpufabric-group'], 0)",  # roles/cloud_fabric reads the driver back
            "gpufabric_nvswitch": f"{nvswitch!r}.get(tags['gpufabric-group'], False)",
            "gpufabric_nccl_env": f"{dict(sorted((g, dict(e)) for g, e in nccl.items()))!r}.get(tags['gpufabric-group'], {{}})",
            **({"gpufabric_shared_fs": repr(dict(mount))} if mount else {}),  # roles/cloud_fabric mounts it
        },
        "keyed_groups": [
            {"prefix": "", "separator": "", "key": "tags['gpufabric-role']"},
            {"prefix": "group", "key": "tags['gpufabric-group']"},
            {"prefix": "ib_group", "key": "tags['gpufabric-ib-group']"},
        ],
    }
    return inventory_yaml(source).replace("do not edit\n", f"do not edit; scale sets: {', '.join(sorted(members))}\n", 1)
