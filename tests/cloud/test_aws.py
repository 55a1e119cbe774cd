"""AWS EfaCluster under Pulumi mocks: the resources a user relies on, as registered."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from fabric.cloud._args import CloudClusterArgs
from fabric.cloud.aws_efa import EfaCluster
from fabric.plan import ClusterPlan
from tests.cloud.conftest import (
    BASTION_AMI,
    MOCKS,
    ROOT_DEVICE,
    RecordingMocks,
    Registered,
    built_once,
    edited_plan,
    example_plan,
    register,
    registered_urns,
)

LT = "aws:ec2/launchTemplate:LaunchTemplate"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"


def build(plan: ClusterPlan) -> RecordingMocks:
    return register(lambda: EfaCluster("c", CloudClusterArgs(plan=plan)))


def built(example: str) -> RecordingMocks:
    """The example's component as registered, built once for the read-only tests of this module."""
    return built_once(f"{__name__}:{example}", lambda: build(example_plan(example)))


def with_type(instance_type: str, **aws: Any) -> ClusterPlan:
    def edit(data: dict[str, Any]) -> None:
        data["nodes"][0]["instance_type"] = instance_type
        data["aws"].update(aws)

    return edited_plan("aws-p5", edit)


def gpu_template(mocks: RecordingMocks) -> Registered:
    return mocks.named("c-gpu-lt")


def test_registers_exactly_the_planned_resources_all_parented_to_the_component() -> None:
    plan = example_plan("aws-p5")
    mocks = build(plan)
    got = Counter(r.typ for r in mocks.created if not r.typ.startswith("gpufabric:"))
    assert plan.cloud is not None
    assert sorted(got.items()) == list(plan.cloud.resources)
    children = [u for u in registered_urns() if not u.endswith("$gpufabric:aws:EfaCluster::c")]
    assert children
    assert all("::gpufabric:aws:EfaCluster$" in u for u in children)


# (type, efa-only interfaces, first EFA card): the current AWS layout per instance type.
LAYOUTS = [
    ("p4d.24xlarge", 4, 0),
    ("p4de.24xlarge", 4, 0),
    ("p5.48xlarge", 32, 0),
    ("p5e.48xlarge", 32, 0),
    ("p5en.48xlarge", 16, 0),
    ("p6-b200.48xlarge", 8, 0),
    ("p6-b300.48xlarge", 16, 1),
]


@pytest.mark.parametrize(("instance_type", "efa", "first_card"), LAYOUTS, ids=[t for t, _, _ in LAYOUTS])
def test_launch_template_follows_the_efa_layout_of_the_type(instance_type: str, efa: int, first_card: int) -> None:
    nics = gpu_template(build(with_type(instance_type))).inputs["networkInterfaces"]
    primary, *fabric = nics
    assert (primary["networkCardIndex"], primary["deviceIndex"], primary["interfaceType"]) == (0, 0, "interface")
    assert [n["interfaceType"] for n in fabric] == ["efa-only"] * efa
    cards = [n["networkCardIndex"] for n in fabric]
    assert cards == list(range(first_card, first_card + efa))
    devices = {n["networkCardIndex"]: n["deviceIndex"] for n in fabric}
    assert devices.pop(0, 1) == 1, "card 0 holds the primary at device 0, so its efa-only sits at device 1"
    assert set(devices.values()) <= {0}
    assert all(n["subnetId"] == "c-compute-id" for n in fabric)
    assert primary["subnetId"] == "c-inband-id"


def test_efa_security_group_allows_everything_to_and_from_itself() -> None:
    mocks = built("aws-p5")
    for kind in (INGRESS, EGRESS):
        rules = [r.inputs for r in mocks.of_type(kind) if r.inputs["securityGroupId"] == "c-efa-id"]
        assert rules == [
            {"securityGroupId": "c-efa-id", "ipProtocol": "-1", "referencedSecurityGroupId": "c-efa-id", "description": rules[0]["description"]}
        ]
    efa_nics = [n for n in gpu_template(mocks).inputs["networkInterfaces"] if n["interfaceType"] == "efa-only"]
    assert all(n["securityGroups"] == ["c-efa-id"] for n in efa_nics)


def test_no_public_ip_anywhere_on_cluster_nodes() -> None:
    mocks = built("aws-p5")
    for template in mocks.of_type(LT):
        assert all(n["associatePublicIpAddress"] == "false" for n in template.inputs["networkInterfaces"])
    assert all(s.inputs["mapPublicIpOnLaunch"] is False for s in mocks.of_type("aws:ec2/subnet:Subnet"))
    assert all("associatePublicIpAddress" not in i.inputs for i in mocks.of_type("aws:ec2/instance:Instance"))


def test_only_the_inband_plane_routes_to_the_internet() -> None:
    mocks = built("aws-p5")
    table_of = {r.inputs["subnetId"]: r.inputs["routeTableId"] for r in mocks.of_type("aws:ec2/routeTableAssociation:RouteTableAssociation")}
    routes = {r.name + "-id": r.inputs.get("routes", []) for r in mocks.of_type("aws:ec2/routeTable:RouteTable")}
    assert routes[table_of["c-compute-id"]] == []
    assert routes[table_of["c-storage-id"]] == []
    assert [r["natGatewayId"] for r in routes[table_of["c-inband-id"]]] == ["c-nat-id"]
    assert [r["gatewayId"] for r in routes[table_of["c-oob-id"]]] == ["c-igw-id"]


def test_capacity_block_sets_market_type_and_reservation_without_placement_group() -> None:
    mocks = built("aws-p5")
    template = gpu_template(mocks).inputs
    assert template["instanceMarketOptions"] == {"marketType": "capacity-block"}
    target = template["capacityReservationSpecification"]["capacityReservationTarget"]
    assert target == {"capacityReservationId": "cr-0123456789abcdef0"}
    assert "placement" not in template
    assert mocks.of_type("aws:ec2/placementGroup:PlacementGroup") == []
    login = mocks.named("c-login-lt").inputs
    assert "instanceMarketOptions" not in login, "only the GPU group consumes the Capacity Block"


def test_the_capacity_block_is_read_from_aws_before_anything_launches_on_it() -> None:
    mocks = built("aws-p5")
    blocks = [c for c in mocks.calls if c.token == "aws:ec2/getCapacityBlockReservation:getCapacityBlockReservation"]
    assert [c.args["id"] for c in blocks] == ["cr-0123456789abcdef0"]


@pytest.mark.parametrize("state", ["expired", "cancelled", "failed", "payment-failed"])
def test_an_ended_capacity_block_stops_the_program_naming_it_and_the_fix(state: str) -> None:
    """EC2: "When a Capacity Block expires, all instances in the Capacity Block are terminated"; the next pulumi up
    must not try to launch on it again (audit 2026-11, Capacity Block end)."""
    MOCKS.block_state = state
    with pytest.raises(Exception, match=f"Capacity Block cr-0123456789abcdef0 is {state} .*set the GPU group's count: 0"):
        build(example_plan("aws-p5"))


@pytest.mark.parametrize("state", ["active", "scheduled", "payment-pending"])
def test_a_live_or_coming_capacity_block_builds(state: str) -> None:
    MOCKS.block_state = state
    mocks = build(example_plan("aws-p5"))
    assert len(mocks.of_type("aws:ec2/instance:Instance")) > 0


def test_on_demand_efa_cluster_gets_a_cluster_placement_group() -> None:
    mocks = build(with_type("p5.48xlarge", capacity={"type": "on-demand"}, placement_group={"enabled": True}))
    (group,) = mocks.of_type("aws:ec2/placementGroup:PlacementGroup")
    assert group.inputs["strategy"] == "cluster"
    assert gpu_template(mocks).inputs["placement"] == {"groupName": "c-pg"}
    assert "placement" not in mocks.named("c-login-lt").inputs


def opened_ports(mocks: RecordingMocks, group: str, peer: str) -> set[tuple[int, int]]:
    """(from, to) tcp port ranges that security group ``group`` accepts from group ``peer``."""
    return {
        (int(r.inputs["fromPort"]), int(r.inputs["toPort"]))
        for r in mocks.of_type(INGRESS)
        if r.inputs["securityGroupId"] == group and r.inputs.get("referencedSecurityGroupId") == peer and r.inputs["ipProtocol"] == "tcp"
    }


def test_fsx_lustre_opens_988_and_1018_1023_on_both_sides() -> None:
    """FSx limit-access-security-groups: 988 and 1018-1023 from the file system's own group and the clients' groups,
    and the same ports on the clients' groups from the file system's group."""
    mocks = built("aws-p5")
    (fsx,) = mocks.of_type("aws:fsx/lustreFileSystem:LustreFileSystem")
    assert fsx.inputs["subnetIds"] == "c-storage-id"
    assert fsx.inputs["securityGroupIds"] == ["c-storage-id"]
    assert fsx.inputs["deploymentType"] == "PERSISTENT_2"
    assert "efaEnabled" not in fsx.inputs
    lustre = {(988, 988), (1018, 1023)}
    assert opened_ports(mocks, "c-storage-id", "c-nodes-id") == lustre, "file system from the clients"
    assert opened_ports(mocks, "c-storage-id", "c-storage-id") == lustre, "file system from itself"
    assert opened_ports(mocks, "c-nodes-id", "c-storage-id") == lustre, "clients from the file system"


def test_fsx_with_efa_joins_the_efa_subnet_and_security_group() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["aws"]["fsx_lustre"]["efa"] = True

    mocks = build(edited_plan("aws-p5", edit))
    (fsx,) = mocks.of_type("aws:fsx/lustreFileSystem:LustreFileSystem")
    assert fsx.inputs["subnetIds"] == "c-compute-id", "EFA traffic stays in the subnet of the clients' EFA interfaces"
    assert fsx.inputs["securityGroupIds"] == ["c-storage-id", "c-efa-id"]
    assert fsx.inputs["efaEnabled"] is True
    assert fsx.inputs["metadataConfiguration"] == {"mode": "AUTOMATIC"}
    assert fsx.inputs["deploymentType"] == "PERSISTENT_2"


def test_ssm_replaces_inbound_ssh() -> None:
    mocks = built("aws-p5")
    services = sorted(e.inputs["serviceName"] for e in mocks.of_type("aws:ec2/vpcEndpoint:VpcEndpoint"))
    assert services == ["com.amazonaws.us-east-1.ec2messages", "com.amazonaws.us-east-1.ssm", "com.amazonaws.us-east-1.ssmmessages"]
    assert mocks.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")[0].inputs["policyArn"].endswith("AmazonSSMManagedInstanceCore")
    assert not [r for r in mocks.of_type(INGRESS) if r.inputs.get("fromPort") == 22]


def test_bastion_access_opens_ssh_only_from_the_given_prefixes() -> None:
    mocks = build(with_type("p5.48xlarge", management_access="bastion", bastion_ingress=["192.0.2.0/24"]))
    ssh = [r.inputs for r in mocks.of_type(INGRESS) if r.inputs.get("fromPort") == 22]
    assert {(r["securityGroupId"], r.get("cidrIpv4"), r.get("referencedSecurityGroupId")) for r in ssh} == {
        ("c-bastion-id", "192.0.2.0/24", None),
        ("c-nodes-id", None, "c-bastion-id"),
    }
    (bastion,) = [i for i in mocks.of_type("aws:ec2/instance:Instance") if i.name == "c-bastion"]
    assert bastion.inputs["subnetId"] == "c-oob-id"
    assert bastion.inputs["rootBlockDevice"] == {"encrypted": True, "volumeType": "gp3"}
    assert bastion.inputs["ami"] == BASTION_AMI, "Amazon Linux 2023 x86_64, not the GPU image"
    (param,) = [c.args["name"] for c in mocks.calls if c.token == "aws:ssm/getParameter:getParameter"]
    assert param == "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64"


def test_auto_scaling_group_puts_every_interface_in_its_planned_subnet() -> None:
    """asg-in-vpc: Auto Scaling creates each interface in the group's subnet and ignores launch-template subnets."""
    plan = with_type("p5.48xlarge", auto_scaling_group=True)
    assert plan.cloud is not None
    captured: list[dict[str, Any]] = []
    mocks = register(lambda: EfaCluster("c", CloudClusterArgs(plan=plan)).nodes.apply(captured.append))
    groups = {g.name: g.inputs for g in mocks.of_type("aws:autoscaling/group:Group")}
    hosts = [h for g in plan.cloud.groups for h in g.hostnames]
    assert sorted(groups) == sorted(f"c-{h}-asg" for h in hosts), "one auto-scaling group per planned host"
    for group in plan.cloud.groups:
        planned = {f"c-{nic.subnet}-id" for nic in group.nics}
        for host in group.hostnames:
            asg = groups[f"c-{host}-asg"]
            assert (asg["desiredCapacity"], asg["minSize"], asg["maxSize"]) == (1, 1, 1)
            assert asg["launchTemplate"]["id"] == f"c-{group.group}-lt-id"
            assert asg["waitForCapacityTimeout"] == "30m", "the nodes are read back once the group is at capacity"
            assert asg["vpcZoneIdentifiers"] == sorted(planned), "one subnet holds every interface"
            assert asg["tags"] == [{"key": "gpufabric-host", "value": host, "propagateAtLaunch": True}]
        nics = mocks.named(f"c-{group.group}-lt").inputs["networkInterfaces"]
        assert len(nics) == len(group.nics)
        assert all("subnetId" not in n for n in nics), "a template subnet would be ignored, so none is named"
    assert len([n for n in mocks.named("c-gpu-lt").inputs["networkInterfaces"] if n["interfaceType"] == "efa-only"]) == 32
    assert [i.name for i in mocks.of_type("aws:ec2/instance:Instance")] == [], "no per-host instances in ASG mode"
    lookups = [c.args["instanceTags"] for c in mocks.calls if c.token == "aws:ec2/getInstances:getInstances"]
    assert sorted(lookups, key=str) == sorted(({"aws:autoscaling:groupName": f"c-{h}-asg"} for h in hosts), key=str)
    (nodes,) = captured
    assert len(nodes) == 17
    assert nodes["p5-01"]["inband"].startswith("10.0.81.")
    assert mocks.of_type("aws:kms/grant:Grant") == [], "no grant without a customer managed key"


def test_a_replaced_instance_keeps_its_hosts_name_and_moves_no_other_name() -> None:
    """ASG replaces an unhealthy instance with a new one (new id): only that host's instance changes, names stay put."""
    plan = with_type("p5.48xlarge", auto_scaling_group=True)
    first: list[dict[str, Any]] = []
    register(lambda: EfaCluster("c", CloudClusterArgs(plan=plan)).nodes.apply(first.append))
    second: list[dict[str, Any]] = []
    MOCKS.replaced["c-p5-09-asg"] = "i-00000000"  # the new instance sorts before every other id
    register(lambda: EfaCluster("c", CloudClusterArgs(plan=plan)).nodes.apply(second.append))
    (before,), (after,) = first, second
    changed = {host for host in before if before[host]["instance_id"] != after[host]["instance_id"]}
    assert changed == {"p5-09"}
    assert after["p5-09"]["instance_id"] == "i-00000000"


def test_auto_scaling_with_a_customer_key_grants_the_service_linked_role() -> None:
    """EC2 Auto Scaling key-policy-requirements-EBS-encryption: the service-linked role's permissions "do not include access
    to your customer managed keys"; the grant lets AWSServiceRoleForAutoScaling launch instances with encrypted volumes."""
    key = "arn:aws:kms:us-east-1:123456789012:key/abcd-1234"
    plan = with_type("p5.48xlarge", auto_scaling_group=True, encryption={"kms_key_id": key})
    mocks = build(plan)
    (grant,) = mocks.of_type("aws:kms/grant:Grant")
    assert grant.inputs["keyId"] == key
    assert grant.inputs["granteePrincipal"] == (
        "arn:aws:iam::123456789012:role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling"
    )
    assert sorted(grant.inputs["operations"]) == sorted(
        ["Encrypt", "Decrypt", "ReEncryptFrom", "ReEncryptTo", "GenerateDataKey", "GenerateDataKeyWithoutPlaintext", "DescribeKey", "CreateGrant"]
    )
    assert plan.cloud is not None
    assert sorted(Counter(r.typ for r in mocks.created if not r.typ.startswith("gpufabric:")).items()) == list(plan.cloud.resources)


def test_root_volumes_are_encrypted_gp3_sized_per_type_on_the_ami_root_device() -> None:
    mocks = built("aws-p5")
    (ami,) = [c for c in mocks.calls if c.token == "aws:ec2/getAmi:getAmi"]
    assert ami.args["filters"] == [{"name": "image-id", "values": ["ami-0123456789abcdef0"]}]
    sizes = {}
    for template in mocks.of_type(LT):
        (root,) = template.inputs["blockDeviceMappings"]
        assert root["deviceName"] == ROOT_DEVICE
        ebs = root["ebs"]
        assert (ebs["encrypted"], ebs["volumeType"], ebs["deleteOnTermination"]) == ("true", "gp3", "true")
        assert "kmsKeyId" not in ebs, "the AWS-managed key unless one is given"
        sizes[template.name] = ebs["volumeSize"]
    assert sizes == {"c-gpu-lt": 512, "c-login-lt": 100}


def test_customer_kms_key_encrypts_ebs_fsx_and_flow_logs() -> None:
    key = "arn:aws:kms:us-east-1:123456789012:key/abcd-1234"

    def edit(data: dict[str, Any]) -> None:
        data["aws"]["encryption"] = {"kms_key_id": key}
        data["aws"]["root_volume_gib"] = 1024

    mocks = build(edited_plan("aws-p5", edit))
    for template in mocks.of_type(LT):
        assert template.inputs["blockDeviceMappings"][0]["ebs"]["kmsKeyId"] == key
        assert template.inputs["blockDeviceMappings"][0]["ebs"]["volumeSize"] == 1024
    assert mocks.of_type("aws:fsx/lustreFileSystem:LustreFileSystem")[0].inputs["kmsKeyId"] == key
    assert mocks.of_type("aws:cloudwatch/logGroup:LogGroup")[0].inputs["kmsKeyId"] == key


def test_vpc_flow_logs_capture_all_traffic_and_the_default_security_group_is_emptied() -> None:
    mocks = built("aws-p5")
    (flow,) = mocks.of_type("aws:ec2/flowLog:FlowLog")
    assert (flow.inputs["vpcId"], flow.inputs["trafficType"], flow.inputs["logDestinationType"]) == ("c-vpc-id", "ALL", "cloud-watch-logs")
    assert flow.inputs["logDestination"] == "arn:mock:c-flow-logs"
    role = mocks.named("c-flow-logs-role").inputs["assumeRolePolicy"]
    assert "vpc-flow-logs.amazonaws.com" in role
    policy = mocks.named("c-flow-logs-policy").inputs["policy"]
    assert '"Resource": ["arn:mock:c-flow-logs", "arn:mock:c-flow-logs:*"]' in policy
    (default,) = mocks.of_type("aws:ec2/defaultSecurityGroup:DefaultSecurityGroup")
    assert default.inputs["vpcId"] == "c-vpc-id"
    assert "ingress" not in default.inputs
    assert "egress" not in default.inputs


def test_hardening_opt_outs_are_honoured() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["aws"].update(flow_logs=False, restrict_default_security_group=False, encryption={"ebs": False})

    mocks = build(edited_plan("aws-p5", edit))
    assert mocks.of_type("aws:ec2/flowLog:FlowLog") == []
    assert mocks.of_type("aws:ec2/defaultSecurityGroup:DefaultSecurityGroup") == []
    assert {t.inputs["blockDeviceMappings"][0]["ebs"]["encrypted"] for t in mocks.of_type(LT)} == {"false"}
