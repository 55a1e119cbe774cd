"""AWS EfaCluster under Pulumi mocks: the resources a user relies on, as registered."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from fabric.cloud._args import CloudClusterArgs
from fabric.cloud.aws_efa import EfaCluster
from fabric.plan import ClusterPlan
from tests.cloud.conftest import RecordingMocks, Registered, edited_plan, example_plan, register, registered_urns

LT = "aws:ec2/launchTemplate:LaunchTemplate"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"


def build(plan: ClusterPlan) -> RecordingMocks:
    return register(lambda: EfaCluster("c", CloudClusterArgs(plan=plan)))


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
    mocks = build(example_plan("aws-p5"))
    for kind in (INGRESS, EGRESS):
        rules = [r.inputs for r in mocks.of_type(kind) if r.inputs["securityGroupId"] == "c-efa-id"]
        assert rules == [
            {"securityGroupId": "c-efa-id", "ipProtocol": "-1", "referencedSecurityGroupId": "c-efa-id", "description": rules[0]["description"]}
        ]
    efa_nics = [n for n in gpu_template(mocks).inputs["networkInterfaces"] if n["interfaceType"] == "efa-only"]
    assert all(n["securityGroups"] == ["c-efa-id"] for n in efa_nics)


def test_no_public_ip_anywhere_on_cluster_nodes() -> None:
    mocks = build(example_plan("aws-p5"))
    for template in mocks.of_type(LT):
        assert all(n["associatePublicIpAddress"] == "false" for n in template.inputs["networkInterfaces"])
    assert all(s.inputs["mapPublicIpOnLaunch"] is False for s in mocks.of_type("aws:ec2/subnet:Subnet"))
    assert all("associatePublicIpAddress" not in i.inputs for i in mocks.of_type("aws:ec2/instance:Instance"))


def test_only_the_inband_plane_routes_to_the_internet() -> None:
    mocks = build(example_plan("aws-p5"))
    table_of = {r.inputs["subnetId"]: r.inputs["routeTableId"] for r in mocks.of_type("aws:ec2/routeTableAssociation:RouteTableAssociation")}
    routes = {r.name + "-id": r.inputs.get("routes", []) for r in mocks.of_type("aws:ec2/routeTable:RouteTable")}
    assert routes[table_of["c-compute-id"]] == []
    assert routes[table_of["c-storage-id"]] == []
    assert [r["natGatewayId"] for r in routes[table_of["c-inband-id"]]] == ["c-nat-id"]
    assert [r["gatewayId"] for r in routes[table_of["c-oob-id"]]] == ["c-igw-id"]


def test_capacity_block_sets_market_type_and_reservation_without_placement_group() -> None:
    mocks = build(example_plan("aws-p5"))
    template = gpu_template(mocks).inputs
    assert template["instanceMarketOptions"] == {"marketType": "capacity-block"}
    target = template["capacityReservationSpecification"]["capacityReservationTarget"]
    assert target == {"capacityReservationId": "cr-0123456789abcdef0"}
    assert "placement" not in template
    assert mocks.of_type("aws:ec2/placementGroup:PlacementGroup") == []
    login = mocks.named("c-login-lt").inputs
    assert "instanceMarketOptions" not in login, "only the GPU group consumes the Capacity Block"


def test_on_demand_efa_cluster_gets_a_cluster_placement_group() -> None:
    mocks = build(with_type("p5.48xlarge", capacity={"type": "on-demand"}, placement_group={"enabled": True}))
    (group,) = mocks.of_type("aws:ec2/placementGroup:PlacementGroup")
    assert group.inputs["strategy"] == "cluster"
    assert gpu_template(mocks).inputs["placement"] == {"groupName": "c-pg"}
    assert "placement" not in mocks.named("c-login-lt").inputs


def test_fsx_lustre_sits_on_the_storage_plane_with_its_ports_open_to_the_nodes() -> None:
    mocks = build(example_plan("aws-p5"))
    (fsx,) = mocks.of_type("aws:fsx/lustreFileSystem:LustreFileSystem")
    assert fsx.inputs["subnetIds"] == "c-storage-id"
    assert fsx.inputs["deploymentType"] == "PERSISTENT_2"
    opened = {
        (r.inputs["fromPort"], r.inputs["toPort"])
        for r in mocks.of_type(INGRESS)
        if r.inputs["securityGroupId"] == "c-storage-id" and r.inputs.get("referencedSecurityGroupId") == "c-nodes-id"
    }
    assert opened == {(988, 988), (1021, 1023)}


def test_ssm_replaces_inbound_ssh() -> None:
    mocks = build(example_plan("aws-p5"))
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


def test_auto_scaling_group_launches_the_gpu_nodes_from_the_template() -> None:
    mocks = build(with_type("p5.48xlarge", auto_scaling_group=True))
    groups = {g.name: g.inputs for g in mocks.of_type("aws:autoscaling/group:Group")}
    assert groups["c-gpu-asg"]["desiredCapacity"] == 16
    assert groups["c-gpu-asg"]["launchTemplate"]["id"] == "c-gpu-lt-id"
    assert mocks.of_type("aws:ec2/instance:Instance") == []
