"""AWS: an EFA GPU cluster (VPC with a subnet per plane in one zone, EFA layout, placement, capacity, FSx, SSM)."""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws

from fabric.cloud._args import CloudClusterArgs
from fabric.cloud._shared_fs import reported
from fabric.cloud._tokens import token
from fabric.cloud.aws_asg import autoscaling_key_grant, host_group, scaled_host
from fabric.cloud.aws_block import checked_block
from fabric.inventory import cloud_inventory, inventory_yaml
from fabric.model.cloud import AwsSpec
from fabric.plan.cloud.aws import SSM_ENDPOINTS
from fabric.plan.cloud.types import CloudGroupPlan, FirewallRule

SSM_POLICY = "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"
BASTION_TYPE = "t3.micro"
# The bastion boots the current Amazon Linux 2023 for its x86_64 type, not the cluster's GPU AMI (which may be arm64 or
# carry a root volume far larger than a bastion needs): AWS publishes the id as this public SSM parameter.
BASTION_AMI_PARAMETER = "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64"
FLOW_LOG_RETENTION_DAYS = 90


def _assume(service: str) -> str:
    statement = {"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


def _flow_log_policy(group_arn: str) -> str:
    """Only what the VPC Flow Logs service needs on its own log group (VPC user guide, flow-logs-cwl IAM role)."""
    actions = ["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogGroups", "logs:DescribeLogStreams"]
    statement = {"Effect": "Allow", "Action": actions, "Resource": [group_arn, f"{group_arn}:*"]}
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


def port_range(ports: tuple[str, ...]) -> tuple[int | None, int | None]:
    """``("988",)`` → (988, 988); ``("1021-1023",)`` → (1021, 1023); no ports → (None, None)."""
    if not ports:
        return None, None
    low, _, high = ports[0].partition("-")
    return int(low), int(high or low)


class EfaCluster(pulumi.ComponentResource):
    """An EFA cluster built from the AWS part of a cluster plan."""

    nodes: pulumi.Output[dict[str, dict[str, str]]]
    ansible_inventory: pulumi.Output[str]

    def __init__(self, name: str, args: CloudClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(token("aws", "EfaCluster"), name, None, opts)
        cloud = args.plan.cloud
        assert cloud is not None
        assert isinstance(cloud.settings, AwsSpec)
        self._name, self._cloud, self._aws, self._tags = name, cloud, cloud.settings, args.tags()
        self._child = pulumi.ResourceOptions(parent=self)
        self._network()
        self._hardening()
        self._security_groups()
        self._management()
        self.placement_group = self._placement_group()
        # The AMI's root device name: a block device mapping on any other name would add a volume, not size the root one.
        self.root_device = aws.ec2.get_ami_output(
            filters=[aws.ec2.GetAmiFilterArgs(name="image-id", values=[self._aws.image])], opts=pulumi.InvokeOutputOptions(parent=self)
        ).root_device_name
        self.launch_templates = {g.group: self._launch_template(g) for g in cloud.groups}
        self.instances: dict[str, aws.ec2.Instance] = {}
        self.auto_scaling_groups: dict[str, aws.autoscaling.Group] = {}
        key = self._aws.encryption.kms_key_id
        grant = autoscaling_key_grant(name, key, self._child) if self._aws.auto_scaling_group and self._aws.encryption.ebs and key else None
        self._launch_opts = self._opts(grant) if grant is not None else self._child
        for group in cloud.groups:
            self._launch(group)
        self.file_system = self._fsx()
        addresses = {host: inst.private_ip.apply(lambda ip: {"inband": ip}) for host, inst in self.instances.items()}
        launched = [scaled_host(host, asg, self) for host, asg in self.auto_scaling_groups.items()]
        self.nodes = pulumi.Output.all(pulumi.Output.all(**addresses) if addresses else pulumi.Output.from_input({}), *launched).apply(_merge)
        fsx = self.file_system
        # What a node mounts: the file system's DNS name and mount name, known only once FSx created it.
        mount = pulumi.Output.all(fsx.dns_name, fsx.mount_name).apply(lambda f: reported("fsx-lustre", f[0], f[1], "2.15")) if fsx else None
        self.ansible_inventory = pulumi.Output.all(self.nodes, mount).apply(lambda f: inventory_yaml(cloud_inventory(args.plan, f[0], f[1])))
        self.register_outputs({"nodes": self.nodes, "ansible_inventory": self.ansible_inventory, "vpc_id": self.vpc.id})

    def _opts(self, *depends: pulumi.Resource) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, depends_on=list(depends)) if depends else self._child

    def _network(self) -> None:
        n, vpc_plan = self._name, self._cloud.network("vpc")
        primary, *others = vpc_plan.cidrs
        self.vpc = aws.ec2.Vpc(
            f"{n}-vpc", cidr_block=primary, enable_dns_support=True, enable_dns_hostnames=True, tags=self._tag(f"{n}-vpc"), opts=self._child
        )
        blocks = [
            aws.ec2.VpcIpv4CidrBlockAssociation(f"{n}-cidr-{i}", vpc_id=self.vpc.id, cidr_block=c, opts=self._child) for i, c in enumerate(others, 1)
        ]
        self.subnets = {
            s.key: aws.ec2.Subnet(
                f"{n}-{s.key}",
                vpc_id=self.vpc.id,
                cidr_block=s.cidr,
                availability_zone=self._cloud.zone,
                map_public_ip_on_launch=False,
                tags=self._tag(f"{n}-{s.key}", plane=s.plane),
                opts=self._opts(*blocks),
            )
            for s in vpc_plan.subnets
        }
        igw = aws.ec2.InternetGateway(f"{n}-igw", vpc_id=self.vpc.id, tags=self._tag(f"{n}-igw"), opts=self._child)
        eip = aws.ec2.Eip(f"{n}-nat-ip", domain="vpc", tags=self._tag(f"{n}-nat-ip"), opts=self._child)
        public = next(s.key for s in vpc_plan.subnets if s.public)
        self.nat = aws.ec2.NatGateway(
            f"{n}-nat", allocation_id=eip.id, subnet_id=self.subnets[public].id, tags=self._tag(f"{n}-nat"), opts=self._opts(igw)
        )
        tables = {
            "public": [aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=igw.id)],
            "private": [aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", nat_gateway_id=self.nat.id)],
            "isolated": [],  # compute and storage planes: VPC-local routes only, never a default route
        }
        self.route_tables = {
            k: aws.ec2.RouteTable(f"{n}-rt-{k}", vpc_id=self.vpc.id, routes=routes, tags=self._tag(f"{n}-rt-{k}"), opts=self._child)
            for k, routes in tables.items()
        }
        for s in vpc_plan.subnets:
            table = "public" if s.public else "private" if s.plane == "inband" else "isolated"
            aws.ec2.RouteTableAssociation(
                f"{n}-rta-{s.key}", subnet_id=self.subnets[s.key].id, route_table_id=self.route_tables[table].id, opts=self._child
            )

    def _hardening(self) -> None:
        """VPC flow logs (all traffic, to CloudWatch Logs) and a default security group without any rule.

        ADT ``2.vpc-one-az.yaml`` creates ``FlowLogVPC`` with ``TrafficType: ALL``. pulumi-aws DefaultSecurityGroup: when
        the provider adopts the default group "it immediately removes all ingress and egress rules" and adds only the
        ones given (none here), so nothing that lands in it by mistake is reachable.
        """
        n = self._name
        if self._aws.restrict_default_security_group:
            aws.ec2.DefaultSecurityGroup(f"{n}-default-sg", vpc_id=self.vpc.id, tags=self._tag(f"{n}-default-sg"), opts=self._child)
        if not self._aws.flow_logs:
            return
        kms = self._aws.encryption.kms_key_id
        group = aws.cloudwatch.LogGroup(
            f"{n}-flow-logs", retention_in_days=FLOW_LOG_RETENTION_DAYS, kms_key_id=kms, tags=self._tags, opts=self._child
        )
        role = aws.iam.Role(f"{n}-flow-logs-role", assume_role_policy=_assume("vpc-flow-logs.amazonaws.com"), tags=self._tags, opts=self._child)
        aws.iam.RolePolicy(f"{n}-flow-logs-policy", role=role.id, policy=group.arn.apply(_flow_log_policy), opts=self._child)
        aws.ec2.FlowLog(
            f"{n}-flow-log",
            vpc_id=self.vpc.id,
            traffic_type="ALL",
            log_destination_type="cloud-watch-logs",
            log_destination=group.arn,
            iam_role_arn=role.arn,
            tags=self._tag(f"{n}-flow-log"),
            opts=self._child,
        )

    def _security_groups(self) -> None:
        n = self._name
        scopes = sorted({r.scope for r in self._cloud.firewall})
        self.security_groups = {
            scope: aws.ec2.SecurityGroup(
                f"{n}-{scope}", vpc_id=self.vpc.id, description=f"gpufabric {n} {scope}", tags=self._tag(f"{n}-{scope}"), opts=self._child
            )
            for scope in scopes
        }
        for rule in self._cloud.firewall:
            for i, peer in enumerate(rule.peers):
                self._rule(rule, i, peer)

    def _rule(self, rule: FirewallRule, index: int, peer: str) -> None:
        group = self.security_groups[rule.scope]
        low, high = port_range(rule.ports)
        referenced = group.id if peer == "self" else self.security_groups[peer[3:]].id if peer.startswith("sg:") else None
        cidr = None if referenced is not None else peer
        kind = aws.vpc.SecurityGroupIngressRule if rule.direction == "ingress" else aws.vpc.SecurityGroupEgressRule
        kind(
            f"{self._name}-{rule.scope}-{rule.name}-{index}",
            security_group_id=group.id,
            ip_protocol="-1" if rule.protocol == "all" else rule.protocol,
            from_port=low,
            to_port=high,
            referenced_security_group_id=referenced,
            cidr_ipv4=cidr,
            description=rule.name,
            opts=self._child,
        )

    def _management(self) -> None:
        n = self._name
        self.role = aws.iam.Role(f"{n}-node-role", assume_role_policy=_assume("ec2.amazonaws.com"), tags=self._tags, opts=self._child)
        aws.iam.RolePolicyAttachment(f"{n}-ssm-core", role=self.role.name, policy_arn=SSM_POLICY, opts=self._child)
        self.instance_profile = aws.iam.InstanceProfile(f"{n}-node-profile", role=self.role.name, tags=self._tags, opts=self._child)
        if self._aws.management_access == "ssm":
            for service in SSM_ENDPOINTS:
                aws.ec2.VpcEndpoint(
                    f"{n}-{service}",
                    vpc_id=self.vpc.id,
                    service_name=f"com.amazonaws.{self._cloud.region}.{service}",
                    vpc_endpoint_type="Interface",
                    subnet_ids=[self.subnets["inband"].id],
                    security_group_ids=[self.security_groups["endpoints"].id],
                    private_dns_enabled=True,
                    tags=self._tag(f"{n}-{service}"),
                    opts=self._child,
                )
            return
        image = aws.ssm.get_parameter_output(name=BASTION_AMI_PARAMETER, opts=pulumi.InvokeOutputOptions(parent=self)).value
        aws.ec2.Instance(
            f"{n}-bastion",
            ami=image,
            instance_type=BASTION_TYPE,
            subnet_id=self.subnets["oob"].id,
            associate_public_ip_address=True,
            vpc_security_group_ids=[self.security_groups["bastion"].id],
            iam_instance_profile=self.instance_profile.name,
            metadata_options=aws.ec2.InstanceMetadataOptionsArgs(http_tokens="required", http_endpoint="enabled"),
            root_block_device=aws.ec2.InstanceRootBlockDeviceArgs(
                encrypted=self._aws.encryption.ebs, kms_key_id=self._aws.encryption.kms_key_id, volume_type="gp3"
            ),
            tags=self._tag(f"{n}-bastion"),
            opts=self._child,
        )

    def _placement_group(self) -> pulumi.Input[str] | None:
        choice = self._aws.placement_group
        if choice is None or not choice.enabled or not any(g.placed for g in self._cloud.groups):
            return None
        if choice.name is not None:
            return choice.name
        group = aws.ec2.PlacementGroup(f"{self._name}-pg", strategy=choice.strategy, tags=self._tags, opts=self._child)
        return group.name

    def _launch_template(self, group: CloudGroupPlan) -> aws.ec2.LaunchTemplate:
        scaled = self._aws.auto_scaling_group  # Auto Scaling ignores launch-template subnets: name none
        nics = [
            aws.ec2.LaunchTemplateNetworkInterfaceArgs(
                network_card_index=nic.card,
                device_index=nic.device,
                interface_type=nic.kind,
                subnet_id=None if scaled else self.subnets[nic.subnet].id,
                security_groups=[self.security_groups["efa" if nic.plane == "compute" else "nodes"].id],
                associate_public_ip_address="false",
                delete_on_termination="true",
            )
            for nic in group.nics
        ]
        capacity = self._aws.capacity
        reserved = group.fabric and capacity.reservation_id is not None
        market = "capacity-block" if group.fabric and capacity.type == "capacity-block" else "spot" if capacity.type == "spot" else None
        reservation: pulumi.Input[str] | None = capacity.reservation_id
        if market == "capacity-block" and capacity.reservation_id is not None:
            reservation = checked_block(capacity.reservation_id, self)  # an ended block stops the program, named
        target = aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(capacity_reservation_id=reservation)
        name = f"{self._name}-{group.group}"
        encryption = self._aws.encryption
        root = aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
            device_name=self.root_device,
            ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                volume_size=group.root_volume_gib,
                volume_type="gp3",
                encrypted="true" if encryption.ebs else "false",
                kms_key_id=encryption.kms_key_id if encryption.ebs else None,
                delete_on_termination="true",
            ),
        )
        return aws.ec2.LaunchTemplate(
            f"{name}-lt",
            image_id=self._aws.image,
            instance_type=group.instance_type,
            block_device_mappings=[root],
            network_interfaces=nics,
            placement=aws.ec2.LaunchTemplatePlacementArgs(group_name=self.placement_group) if group.placed and self.placement_group else None,
            capacity_reservation_specification=aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(capacity_reservation_target=target)
            if reserved
            else None,
            instance_market_options=aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(market_type=market) if market else None,
            iam_instance_profile=aws.ec2.LaunchTemplateIamInstanceProfileArgs(arn=self.instance_profile.arn),
            metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(http_tokens="required", http_endpoint="enabled"),
            tag_specifications=[aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type="instance", tags=self._tag(name, group=group.group))],
            update_default_version=True,
            tags=self._tags,
            opts=self._child,
        )

    def _launch(self, group: CloudGroupPlan) -> None:
        template = self.launch_templates[group.group]
        if self._aws.auto_scaling_group:
            # Every interface lands in the group's subnet (asg-in-vpc); the plan put them all in the primary's subnet.
            # One group per host keeps each hostname on whatever instance that host's group launches (aws_asg).
            (key,) = {nic.subnet for nic in group.nics}
            subnet = self.subnets[key].id
            for host in group.hostnames:
                self.auto_scaling_groups[host] = host_group(self._name, host, template=template, subnet=subnet, opts=self._launch_opts)
            return
        for host in group.hostnames:
            self.instances[host] = aws.ec2.Instance(
                f"{self._name}-{host}",
                launch_template=aws.ec2.InstanceLaunchTemplateArgs(id=template.id, version="$Latest"),
                tags=self._tag(host, group=group.group),
                opts=self._child,
            )

    def _fsx(self) -> aws.fsx.LustreFileSystem | None:
        storage, fsx = self._cloud.storage, self._aws.fsx_lustre
        if storage is None or fsx is None:
            return None
        groups = [self.security_groups["storage"].id]
        if storage.efa:
            # "An EFA requires a security group that allows all inbound and outbound traffic to and from the security group
            # itself" (FSx cannot-create-fs): the cluster's EFA group is exactly that.
            groups.append(self.security_groups["efa"].id)
        return aws.fsx.LustreFileSystem(
            f"{self._name}-fsx",
            storage_capacity=fsx.capacity_gib,
            subnet_ids=self.subnets[storage.subnet or "storage"].id,
            security_group_ids=groups,
            deployment_type="PERSISTENT_2",
            per_unit_storage_throughput=fsx.throughput_mb_per_tib,
            file_system_type_version="2.15",
            data_compression_type="LZ4",
            kms_key_id=self._aws.encryption.kms_key_id,
            efa_enabled=True if storage.efa else None,
            # efa_enabled "is only supported when deployment_type is set to PERSISTENT_2, metadata_configuration is used".
            metadata_configuration=aws.fsx.LustreFileSystemMetadataConfigurationArgs(mode="AUTOMATIC") if storage.efa else None,
            tags=self._tag(f"{self._name}-fsx"),
            opts=self._child,
        )

    def _tag(self, name: str, **extra: str) -> dict[str, str]:
        return {**self._tags, "Name": name, **extra}


def _merge(parts: list[dict[str, dict[str, str]]]) -> dict[str, dict[str, str]]:
    return {host: found for part in parts for host, found in part.items()}
