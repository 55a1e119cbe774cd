"""GCP GpuCluster under Pulumi mocks: GPU VPCs, RDMA VPC, NIC types, MTUs, placement, capacity, storage."""

from __future__ import annotations

from typing import Any

import yaml

from fabric.cloud._args import CloudClusterArgs
from fabric.cloud.gcp_a3 import GpuCluster
from fabric.plan import ClusterPlan
from tests.cloud.conftest import RecordingMocks, edited_plan, example_plan, register

NETWORK = "gcp:compute/network:Network"
SUBNET = "gcp:compute/subnetwork:Subnetwork"
FIREWALL = "gcp:compute/firewall:Firewall"
INSTANCE = "gcp:compute/instance:Instance"


def build(plan: ClusterPlan, captured: list[str] | None = None) -> RecordingMocks:
    def program() -> None:
        cluster = GpuCluster("c", CloudClusterArgs(plan=plan))
        if captured is not None:
            cluster.ansible_inventory.apply(captured.append)

    return register(program)


def networks(mocks: RecordingMocks) -> dict[str, dict[str, Any]]:
    return {r.name: r.inputs for r in mocks.of_type(NETWORK)}


def subnet_network(mocks: RecordingMocks) -> dict[str, str]:
    """subnet resource id → its network's resource name."""
    return {f"{r.name}-id": r.inputs["network"].removesuffix("-id") for r in mocks.of_type(SUBNET)}


def gpu_nics(mocks: RecordingMocks, host: str) -> list[dict[str, Any]]:
    return mocks.named(f"c-{host}").inputs["networkInterfaces"]


def test_a3_mega_gets_eight_gpu_vpcs_at_8244_with_a_gvnic_each() -> None:
    mocks = build(example_plan("gcp-a3mega"))
    nets = networks(mocks)
    gpu = sorted(k for k in nets if k.startswith("c-gpu-"))
    assert gpu == [f"c-gpu-{i}" for i in range(8)]
    assert {nets[k]["mtu"] for k in gpu} == {8244}
    assert all(nets[k]["autoCreateSubnetworks"] is False for k in nets)
    nics = gpu_nics(mocks, "a3m-01")
    assert [n["nicType"] for n in nics] == ["GVNIC"] * 9
    owner = subnet_network(mocks)
    assert [owner[n["subnetwork"]] for n in nics] == ["c-inband", *gpu]
    assert all("accessConfigs" not in n for n in nics), "no external IP"


def test_a3_high_gets_four_gpu_vpcs() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["nodes"][0]["instance_type"] = "a3-highgpu-8g"
        data["planes"]["compute"]["transport"] = "gpudirect-tcpx"

    mocks = build(edited_plan("gcp-a3mega", edit))
    assert sorted(k for k in networks(mocks) if k.startswith("c-gpu-")) == [f"c-gpu-{i}" for i in range(4)]
    assert len(gpu_nics(mocks, "a3m-01")) == 5


def test_a3_ultra_gets_two_gvnic_vpcs_and_one_rdma_vpc_with_eight_subnets_and_mrdma_nics() -> None:
    mocks = build(example_plan("gcp-a3ultra"))
    nets = networks(mocks)
    assert sorted(nets) == ["c-inband", "c-rdma", "c-storage"]
    assert {n["mtu"] for n in nets.values()} == {8896}
    assert nets["c-rdma"]["networkProfile"] == "projects/gpufabric-demo/global/networkProfiles/europe-west1-b-vpc-roce"
    owner = subnet_network(mocks)
    assert sorted(s for s, net in owner.items() if net == "c-rdma") == [f"c-rdma-{i}-id" for i in range(8)]
    nics = gpu_nics(mocks, "a3u-01")
    assert [n["nicType"] for n in nics] == ["GVNIC", "GVNIC"] + ["MRDMA"] * 8
    assert [owner[n["subnetwork"]] for n in nics] == ["c-inband", "c-storage"] + ["c-rdma"] * 8


def test_rdma_vpc_has_no_firewall_rules_and_every_other_vpc_has_its_internal_rule() -> None:
    mocks = build(example_plan("gcp-a3ultra"))
    rules = [r.inputs for r in mocks.of_type(FIREWALL)]
    assert not [r for r in rules if r["network"] == "c-rdma"]
    internal = {r["network"] for r in rules if r["sourceRanges"] and r["allows"] == [{"protocol": "all"}]}
    assert internal == {"c-inband", "c-storage"}
    iap = [r for r in rules if r["sourceRanges"] == ["35.235.240.0/20"]]
    assert [(r["network"], r["allows"]) for r in iap] == [("c-inband", [{"protocol": "tcp", "ports": ["22"]}])]


def test_gpu_vms_terminate_on_maintenance_and_use_dws_flex_when_asked() -> None:
    mocks = build(example_plan("gcp-a3ultra"))
    scheduling = mocks.named("c-a3u-01").inputs["scheduling"]
    assert scheduling["onHostMaintenance"] == "TERMINATE"
    assert scheduling["provisioningModel"] == "FLEX_START"
    assert scheduling["maxRunDuration"] == {"seconds": 604800}
    assert "reservationAffinity" not in mocks.named("c-a3u-01").inputs


def test_reservation_binds_gpu_vms_to_the_specific_reservation() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["gcp"]["capacity"] = {"type": "reservation", "reservation": "a3m-res/reservationBlocks/b1"}

    mocks = build(edited_plan("gcp-a3mega", edit))
    inputs = mocks.named("c-a3m-01").inputs
    assert inputs["scheduling"]["provisioningModel"] == "RESERVATION_BOUND"
    assert inputs["reservationAffinity"] == {
        "type": "SPECIFIC_RESERVATION",
        "specificReservation": {"key": "compute.googleapis.com/reservation-name", "values": ["a3m-res/reservationBlocks/b1"]},
    }
    login = [r for r in mocks.of_type(INSTANCE) if r.inputs.get("labels", {}).get("gpufabric-group") == "login"]
    assert login
    assert all("reservationAffinity" not in r.inputs for r in login)


def test_compact_placement_policy_packs_the_gpu_group() -> None:
    mocks = build(example_plan("gcp-a3mega"))
    (policy,) = mocks.of_type("gcp:compute/resourcePolicy:ResourcePolicy")
    assert policy.inputs["groupPlacementPolicy"] == {"vmCount": 8, "collocation": "COLLOCATED", "maxDistance": 2}
    assert mocks.named("c-a3m-01").inputs["resourcePolicies"] == f"{policy.name}-self-link"


def test_managed_lustre_is_peered_into_the_storage_vpc() -> None:
    mocks = build(example_plan("gcp-a3ultra"))
    (address,) = mocks.of_type("gcp:compute/globalAddress:GlobalAddress")
    assert (address.inputs["purpose"], address.inputs["network"]) == ("VPC_PEERING", "c-storage-id")
    (lustre,) = mocks.of_type("gcp:lustre/instance:Instance")
    assert lustre.inputs["network"] == "c-storage-id"
    assert lustre.inputs["perUnitStorageThroughput"] == "500"


def test_nat_serves_only_the_inband_subnet() -> None:
    mocks = build(example_plan("gcp-a3ultra"))
    (nat,) = mocks.of_type("gcp:compute/routerNat:RouterNat")
    assert [s["name"] for s in nat.inputs["subnetworks"]] == ["c-inband-id"]


def test_stack_output_is_an_ansible_inventory_of_the_created_nodes() -> None:
    captured: list[str] = []
    build(example_plan("gcp-a3ultra"), captured)
    (text,) = captured
    inventory = yaml.safe_load(text)
    hosts = inventory["all"]["children"]["gpu_nodes"]["hosts"]
    assert sorted(hosts) == ["a3u-01", "a3u-02", "a3u-03", "a3u-04"]
    first = hosts["a3u-01"]
    assert first["ansible_host"] == first["gpufabric_addresses"]["inband"]
    assert sorted(first["gpufabric_addresses"]) == sorted(["inband", "storage", *(f"rdma-{i}" for i in range(8))])
    assert inventory["all"]["vars"]["gpufabric_transport"] == "gcp-rdma"
