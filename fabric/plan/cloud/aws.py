"""AWS layout: one VPC with a subnet per plane in one zone, the EFA interface layout, security groups, FSx ports."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from fabric.catalog.cloud import AWS_INSTANCE_TYPES, AwsInstanceType
from fabric.model.cloud import AwsSpec
from fabric.model.cluster import ClusterSpec
from fabric.plan.cloud.types import CloudGroupPlan, CloudNetwork, CloudNic, CloudPlan, CloudStoragePlan, CloudSubnet, FirewallRule, Ports

# FSx for Lustre guide, limit-access-security-groups / cannot-create-fs: "allow inbound traffic on ports 988 and 1018-1023",
# on the file system's group (from itself and the clients' groups) and on the clients' groups (from the file system's group).
FSX_LUSTRE_PORTS: Ports = (("tcp", "988"), ("tcp", "1018-1023"))
SSM_ENDPOINTS = ("ssm", "ssmmessages", "ec2messages")
ANYWHERE = "0.0.0.0/0"


def efa_interfaces(instance: AwsInstanceType, primary_subnet: str, fabric_subnet: str) -> tuple[CloudNic, ...]:
    """The NIC layout of one instance: ENA primary at card 0 / device 0, then one ``efa-only`` per EFA card.

    Card 0, when it supports EFA, takes its ``efa-only`` at device 1 (the primary holds device 0); every other card
    takes it at device 0. A type whose card 0 is ENA-only (p6-b300) starts its EFAs at card 1.

    Example:
        >>> nics = efa_interfaces(AWS_INSTANCE_TYPES["p4d.24xlarge"], "inband", "compute")
        >>> [(n.card, n.device, n.kind) for n in nics]
        [(0, 0, 'interface'), (0, 1, 'efa-only'), (1, 0, 'efa-only'), (2, 0, 'efa-only'), (3, 0, 'efa-only')]
    """
    primary = CloudNic(0, 0, "interface", primary_subnet, "inband")
    fabric = (CloudNic(card, 1 if card == 0 else 0, "efa-only", fabric_subnet, "compute") for card in instance.efa_cards)
    return (primary, *fabric)


def ultraserver_nodes(instance: AwsInstanceType) -> int | None:
    """Instances of one UltraServer (one NVLink domain across instances: p6e-gb200, 72 GPUs / 4 = 18), else None.

    The rules keep every UltraServer type's instances on one capacity reservation of at most this many (one
    UltraServer), so a group is one NVLink domain and, for Slurm, one topology/block block.

    Example:
        >>> ultraserver_nodes(AWS_INSTANCE_TYPES["p6e-gb200.36xlarge"]), ultraserver_nodes(AWS_INSTANCE_TYPES["p5.48xlarge"])
        (18, None)
    """
    if not instance.nvlink_domain_gpus or not instance.gpus:
        return None
    return instance.nvlink_domain_gpus // instance.gpus


def plan_aws(spec: ClusterSpec) -> CloudPlan:
    """The AWS plan of a validated definition (rules in ``fabric.model.rules.aws`` have passed)."""
    aws = spec.aws
    assert aws is not None
    planes = spec.planes
    zone = aws.availability_zones[0]
    subnets = (
        CloudSubnet("compute", "vpc", "compute", str(planes.compute.cidr)),
        CloudSubnet("storage", "vpc", "storage", str(planes.storage.cidr)),
        CloudSubnet("inband", "vpc", "inband", str(planes.inband.cidr)),
        CloudSubnet("oob", "vpc", "oob", str(planes.oob.cidr), public=True),
    )
    subnets = tuple(replace(s, flow_logs=aws.flow_logs) for s in subnets)  # one VPC flow log covers them all
    vpc = CloudNetwork("vpc", "inband", "vpc", planes.inband.mtu, tuple(s.cidr for s in (subnets[2], subnets[0], subnets[1], subnets[3])), subnets)
    efa = planes.compute.transport == "efa"
    # EC2 Auto Scaling asg-in-vpc: "Amazon EC2 Auto Scaling ignores the subnets defined in the launch template in favor of
    # what is specified in the Auto Scaling group" and creates every interface in the instance's subnet: plan it so.
    fabric_subnet = "inband" if aws.auto_scaling_group else "compute"
    groups: list[CloudGroupPlan] = []
    for group in spec.nodes:
        if not group.count:
            continue
        instance = AWS_INSTANCE_TYPES[group.instance_type or ""]
        fabric = efa and group.role == "gpu" and instance.efa_interfaces > 0
        nics = efa_interfaces(instance, "inband", fabric_subnet) if fabric else (CloudNic(0, 0, "interface", "inband", "inband"),)
        placed = fabric and aws.placement_group is not None and aws.placement_group.enabled
        root = aws.root_volume_gib or instance.root_volume_gib
        groups.append(
            CloudGroupPlan(
                group.group,
                group.role,
                instance.name,
                tuple(group.hostnames()),
                nics,
                placed,
                fabric,
                root_volume_gib=root,
                nvlink_domain_nodes=ultraserver_nodes(instance) if group.role == "gpu" else None,
            )
        )
    storage = None
    fsx = aws.fsx_lustre
    if fsx is not None:
        # EFA traffic never leaves its subnet: an EFA-enabled file system sits where the clients' EFA interfaces are.
        subnet = fabric_subnet if fsx.efa else "storage"
        cidr = str(planes.inband.cidr if subnet == "inband" else planes.compute.cidr if subnet == "compute" else planes.storage.cidr)
        storage = CloudStoragePlan("fsx-lustre", "vpc", cidr, fsx.capacity_gib, FSX_LUSTRE_PORTS, subnet=subnet, efa=fsx.efa)
    firewall = _security_groups(aws, storage is not None)
    plan_groups = tuple(groups)
    return CloudPlan(
        "aws",
        aws.region,
        zone,
        (vpc,),
        plan_groups,
        firewall,
        storage,
        aws,
        _notes(aws, plan_groups),
        _resources(aws, plan_groups, firewall, storage),
    )


def _security_groups(aws: AwsSpec, fsx: bool) -> tuple[FirewallRule, ...]:
    rules = [
        # EFA needs every protocol to and from its own group, both directions (PC EfaSecurityGroupValidator).
        FirewallRule("efa", "efa-all-in", "ingress", "all", (), ("self",)),
        FirewallRule("efa", "efa-all-out", "egress", "all", (), ("self",)),
        FirewallRule("nodes", "cluster-in", "ingress", "all", (), ("self",)),
        FirewallRule("nodes", "egress", "egress", "all", (), (ANYWHERE,)),
    ]
    if fsx:
        for proto, ports in FSX_LUSTRE_PORTS:
            rules += [
                FirewallRule("storage", f"lustre-{ports}-clients", "ingress", proto, (ports,), ("sg:nodes", "self")),
                FirewallRule("nodes", f"lustre-{ports}-servers", "ingress", proto, (ports,), ("sg:storage",)),
            ]
        rules.append(FirewallRule("storage", "lustre-out", "egress", "all", (), ("self", "sg:nodes")))
    if aws.management_access == "ssm":
        rules.append(FirewallRule("endpoints", "https-from-nodes", "ingress", "tcp", ("443",), ("sg:nodes",)))
    else:
        rules += [
            FirewallRule("bastion", "ssh-in", "ingress", "tcp", ("22",), tuple(str(n) for n in aws.bastion_ingress)),
            FirewallRule("bastion", "ssh-to-nodes", "egress", "tcp", ("22",), ("sg:nodes",)),
            FirewallRule("nodes", "ssh-from-bastion", "ingress", "tcp", ("22",), ("sg:bastion",)),
        ]
    return tuple(rules)


def _notes(aws: AwsSpec, groups: tuple[CloudGroupPlan, ...]) -> tuple[str, ...]:
    notes = [
        "no public IPv4 on cluster nodes; egress through a NAT gateway in the oob subnet",
        "compute and storage subnets have no default route",
        "management: "
        + ("SSM Session Manager through VPC endpoints, no inbound SSH" if aws.management_access == "ssm" else "SSH bastion on the oob subnet"),
    ]
    for group in groups:
        if group.fabric:
            efa = [n for n in group.nics if n.kind == "efa-only"]
            contiguous = efa[-1].card - efa[0].card + 1 == len(efa)
            cards = f"{efa[0].card}-{efa[-1].card}" if contiguous else ",".join(str(n.card) for n in efa)
            notes.append(f"{group.group}: {group.instance_type} gets 1 ENA primary + {len(efa)} efa-only on cards {cards}")
        if group.nvlink_domain_nodes:
            notes.append(
                f"{group.group}: UltraServer of {group.nvlink_domain_nodes} instances, one NVLink domain (Slurm topology/block: one block); "
                "arm64 (Grace) AMI required"
            )
    if aws.auto_scaling_group:
        notes.append(
            "auto-scaling groups: one per host (size 1), so a replaced instance keeps its host's name (tag gpufabric-host); Auto "
            "Scaling puts every interface in the group's subnet, so the EFA interfaces share the inband subnet (they take no "
            "address); the nodes output is read back from the running instances after launch"
        )
        if aws.encryption.ebs and aws.encryption.kms_key_id:
            notes.append("KMS grant: AWSServiceRoleForAutoScaling may use the customer managed key (it must exist in the account)")
    if aws.capacity.type == "capacity-block":
        length = f", {aws.capacity.duration_hours} h" if aws.capacity.duration_hours else ""
        notes.append(
            f"capacity: Capacity Block {aws.capacity.reservation_id}{length} (market type capacity-block); "
            "AWS terminates its instances 30 minutes before the block ends; destroy the stack (or its GPU groups) then, "
            "see docs/cloud.md 'When a Capacity Block ends'"
        )
    encrypted = "KMS key " + aws.encryption.kms_key_id if aws.encryption.kms_key_id else "the AWS-managed key"
    notes.append(f"root volumes gp3, {'encrypted with ' + encrypted if aws.encryption.ebs else 'NOT encrypted (encryption.ebs: false)'}")
    if aws.fsx_lustre is not None and aws.fsx_lustre.efa:
        notes.append("FSx for Lustre with EFA and GPUDirect Storage: in the EFA subnet, in the EFA security group")
    return tuple(notes)


def _resources(
    aws: AwsSpec, groups: tuple[CloudGroupPlan, ...], firewall: tuple[FirewallRule, ...], storage: CloudStoragePlan | None
) -> tuple[tuple[str, int], ...]:
    count: Counter[str] = Counter(
        {
            "aws:ec2/vpc:Vpc": 1,
            "aws:ec2/vpcIpv4CidrBlockAssociation:VpcIpv4CidrBlockAssociation": 3,
            "aws:ec2/subnet:Subnet": 4,
            "aws:ec2/internetGateway:InternetGateway": 1,
            "aws:ec2/eip:Eip": 1,
            "aws:ec2/natGateway:NatGateway": 1,
            "aws:ec2/routeTable:RouteTable": 3,
            "aws:ec2/routeTableAssociation:RouteTableAssociation": 4,
            "aws:ec2/securityGroup:SecurityGroup": len({r.scope for r in firewall}),
            "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": sum(len(r.peers) for r in firewall if r.direction == "ingress"),
            "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": sum(len(r.peers) for r in firewall if r.direction == "egress"),
            "aws:iam/role:Role": 2 if aws.flow_logs else 1,
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment": 1,
            "aws:iam/instanceProfile:InstanceProfile": 1,
            "aws:ec2/launchTemplate:LaunchTemplate": len(groups),
        }
    )
    if aws.management_access == "ssm":
        count["aws:ec2/vpcEndpoint:VpcEndpoint"] += len(SSM_ENDPOINTS)
    else:
        count["aws:ec2/instance:Instance"] += 1
    if aws.placement_group is not None and aws.placement_group.enabled and aws.placement_group.name is None and any(g.placed for g in groups):
        count["aws:ec2/placementGroup:PlacementGroup"] += 1
    for group in groups:
        # auto-scaling mode: one group per host (stable hostnames, fabric.cloud.aws_asg)
        count["aws:autoscaling/group:Group" if aws.auto_scaling_group else "aws:ec2/instance:Instance"] += len(group.hostnames)
    if aws.auto_scaling_group and aws.encryption.ebs and aws.encryption.kms_key_id:
        count["aws:kms/grant:Grant"] += 1
    if storage is not None:
        count["aws:fsx/lustreFileSystem:LustreFileSystem"] += 1
    if aws.flow_logs:
        count["aws:cloudwatch/logGroup:LogGroup"] += 1
        count["aws:iam/rolePolicy:RolePolicy"] += 1
        count["aws:ec2/flowLog:FlowLog"] += 1
    if aws.restrict_default_security_group:
        count["aws:ec2/defaultSecurityGroup:DefaultSecurityGroup"] += 1
    return tuple(sorted(count.items()))
