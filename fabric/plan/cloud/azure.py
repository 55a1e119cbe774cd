"""Azure layout: one VNet with a subnet per plane, NSGs, and scale sets that are InfiniBand groups of at most N VMs."""

from __future__ import annotations

from collections import Counter

from fabric.catalog.cloud import AZURE_VM_SIZES
from fabric.model.cloud import AzureSpec
from fabric.model.cluster import ClusterSpec
from fabric.plan.cloud.types import (
    CloudGroupPlan,
    CloudNetwork,
    CloudNic,
    CloudPlan,
    CloudStoragePlan,
    CloudSubnet,
    FirewallRule,
    Ports,
    ScaleSetPlan,
)

AMLFS_PORTS: Ports = (("tcp", "988"), ("tcp", "1019-1023"))
BASTION_SUBNET = "AzureBastionSubnet"  # the name Azure Bastion requires
DENY_PRIORITY = 4096  # the lowest priority a user rule may take: below every allow rule, above the 65000+ defaults


def split_scale_sets(group: str, hostnames: tuple[str, ...], size: int, first_ib_group: int) -> tuple[ScaleSetPlan, ...]:
    """Cut a group into scale sets of at most ``size`` VMs; each is its own InfiniBand group (partition key).

    Example:
        >>> sets = split_scale_sets("gpu", tuple(f"n{i}" for i in range(250)), 100, 1)
        >>> [(s.name, s.ib_group, len(s.hostnames)) for s in sets]
        [('gpu-0', 1, 100), ('gpu-1', 2, 100), ('gpu-2', 3, 50)]
    """
    chunks = (hostnames[i : i + size] for i in range(0, len(hostnames), size))
    return tuple(ScaleSetPlan(f"{group}-{n}", first_ib_group + n if first_ib_group else 0, chunk) for n, chunk in enumerate(chunks))


def plan_azure(spec: ClusterSpec) -> CloudPlan:
    """The Azure plan of a validated definition."""
    azure = spec.azure
    assert azure is not None
    planes = spec.planes
    subnets = (
        CloudSubnet("inband", "vnet", "inband", str(planes.inband.cidr)),
        CloudSubnet("storage", "vnet", "storage", str(planes.storage.cidr)),
        CloudSubnet(BASTION_SUBNET, "vnet", "oob", str(planes.oob.cidr), public=True),
    )
    vnet = CloudNetwork("vnet", "inband", "vnet", planes.inband.mtu, tuple(s.cidr for s in subnets), subnets)
    groups: list[CloudGroupPlan] = []
    next_ib_group = 1
    for group in spec.nodes:
        if not group.count:
            continue
        size = AZURE_VM_SIZES[group.instance_type or ""]
        fabric = group.role == "gpu" and size.ib_ports > 0 and planes.compute.transport == "azure-ib"
        sets = split_scale_sets(group.group, tuple(group.hostnames()), azure.scale_set_size, next_ib_group if fabric else 0)
        next_ib_group += len(sets) if fabric else 0
        nics = (CloudNic(0, 0, "accelerated", "inband", "inband"),)
        groups.append(
            CloudGroupPlan(group.group, group.role, size.name, tuple(group.hostnames()), nics, placed=fabric, fabric=fabric, scale_sets=sets)
        )
    storage = None
    if azure.managed_lustre is not None:
        storage = CloudStoragePlan("amlfs", "vnet", str(planes.storage.cidr), azure.managed_lustre.capacity_tib * 1024, AMLFS_PORTS)
    firewall = _nsg_rules(spec, storage is not None)
    plan_groups = tuple(groups)
    return CloudPlan(
        "azure",
        azure.location,
        azure.location,
        (vnet,),
        plan_groups,
        firewall,
        storage,
        azure,
        _notes(azure, plan_groups),
        _resources(plan_groups, storage),
    )


def _nsg_rules(spec: ClusterSpec, lustre: bool) -> tuple[FirewallRule, ...]:
    """Allow rules per plane NSG, then (by default) an explicit deny-all inbound below them.

    Without the deny, the default rule "AllowVNetInBound | 65000 | VirtualNetwork" lets every VNet (and peered) address
    reach every port (NSG overview, default security rules). The AMLFS prerequisites name the Lustre ports "988 and
    1019-1023"; the file system's own servers talk inside its subnet. Lustre servers also open connections to their
    clients (AWS FSx, limit-access-security-groups, client rules: TCP 988 / 1018-1023 from the file system's security group,
    "Allows Lustre traffic between FSx for Lustre file servers and Lustre clients"), so with the deny in place the inband
    NSG admits the same ports from the storage subnet only (audit 2026-11 N-Z5's suggested fix; Microsoft's AMLFS
    zero-trust NSG page, configure-network-security-group, could not be read there nor here: unverified against it).
    """
    planes = spec.planes
    azure = spec.azure
    assert azure is not None
    inband, storage = str(planes.inband.cidr), str(planes.storage.cidr)
    rules = [
        FirewallRule("inband", "ssh-from-bastion", "ingress", "tcp", ("22",), (str(planes.oob.cidr),), 100),
        FirewallRule("inband", "cluster-internal", "ingress", "all", (), (inband,), 110),
    ]
    if lustre:
        rules += [
            FirewallRule("storage", f"lustre-{ports}", "ingress", proto, (ports,), (inband, storage), 100 + i)
            for i, (proto, ports) in enumerate(AMLFS_PORTS)
        ]
        rules += [
            FirewallRule("inband", f"lustre-from-storage-{ports}", "ingress", proto, (ports,), (storage,), 120 + i)
            for i, (proto, ports) in enumerate(AMLFS_PORTS)
        ]
        rules.append(FirewallRule("storage", "storage-internal", "ingress", "all", (), (storage,), 120))
    if azure.deny_vnet_inbound:
        scopes = sorted({r.scope for r in rules})
        rules += [FirewallRule(scope, "deny-all-inbound", "ingress", "all", (), ("*",), DENY_PRIORITY, "deny") for scope in scopes]
    return tuple(rules)


def _notes(azure: AzureSpec, groups: tuple[CloudGroupPlan, ...]) -> tuple[str, ...]:
    notes = [
        "InfiniBand is not a VNet object: VMs reach each other over IB only inside one scale set",
        "out-of-band access: Azure Bastion with native-client tunnelling (az network bastion ssh|tunnel)",
        "NSGs end in deny-all inbound (priority 4096)"
        if azure.deny_vnet_inbound
        else "NSGs rely on the default AllowVNetInBound (deny_vnet_inbound: false)",
    ]
    if azure.encryption_at_host:
        notes.append("encryption at host on every scale set")
    if azure.boot_diagnostics or azure.managed_identity:
        kept = [
            w
            for w, on in (("boot diagnostics (managed storage)", azure.boot_diagnostics), ("system-assigned identity", azure.managed_identity))
            if on
        ]
        notes.append("every scale set: " + " and ".join(kept))
    for group in groups:
        if group.fabric and len(group.scale_sets) > 1:
            sizes = " + ".join(str(len(s.hostnames)) for s in group.scale_sets)
            notes.append(
                f"{group.group}: {len(group.hostnames)} VMs → {len(group.scale_sets)} scale sets ({sizes}), "
                "separate InfiniBand islands: no job spans them over IB"
            )
    return tuple(notes)


def _resources(groups: tuple[CloudGroupPlan, ...], storage: CloudStoragePlan | None) -> tuple[tuple[str, int], ...]:
    count: Counter[str] = Counter(
        {
            "azure-native:resources:ResourceGroup": 1,
            "azure-native:network:VirtualNetwork": 1,
            "azure-native:network:NetworkSecurityGroup": 2,
            "azure-native:network:PublicIPAddress": 2,  # NAT gateway and Bastion
            "azure-native:network:NatGateway": 1,
            "azure-native:network:BastionHost": 1,
            "azure-native:compute:ProximityPlacementGroup": 1,
            "azure-native:compute:VirtualMachineScaleSet": sum(len(g.scale_sets) for g in groups),
        }
    )
    if storage is not None:
        count["azure-native:storagecache:AmlFilesystem"] += 1
    return tuple(sorted(count.items()))
