"""GCP GpuCluster under Pulumi mocks: GPU VPCs, RDMA VPC, NIC types, MTUs, placement, capacity, storage."""

from __future__ import annotations

from typing import Any

import yaml

from fabric.cloud._args import CloudClusterArgs
from fabric.cloud.gcp_a3 import GpuCluster
from fabric.plan import ClusterPlan
from tests.cloud.conftest import RecordingMocks, built_once, edited_plan, example_plan, register

NETWORK = "gcp:compute/network:Network"
SUBNET = "gcp:compute/subnetwork:Subnetwork"
FIREWALL = "gcp:compute/firewall:Firewall"
INSTANCE = "gcp:compute/instance:Instance"
# Cluster Toolkit a4x-vm.yaml boots A4X from ubuntu-os-accelerator-images ubuntu-accelerator-2404-arm64-with-nvidia-580.
ARM_IMAGE = "projects/ubuntu-os-accelerator-images/global/images/family/ubuntu-accelerator-2404-arm64-with-nvidia-580"


def build(plan: ClusterPlan, captured: list[str] | None = None) -> RecordingMocks:
    def program() -> None:
        cluster = GpuCluster("c", CloudClusterArgs(plan=plan))
        if captured is not None:
            cluster.ansible_inventory.apply(captured.append)

    return register(program)


def built(example: str) -> RecordingMocks:
    """The example's component as registered, built once for the read-only tests of this module."""
    return built_once(f"{__name__}:{example}", lambda: build(example_plan(example)))


def networks(mocks: RecordingMocks) -> dict[str, dict[str, Any]]:
    return {r.name: r.inputs for r in mocks.of_type(NETWORK)}


def subnet_network(mocks: RecordingMocks) -> dict[str, str]:
    """subnet resource id → its network's resource name."""
    return {f"{r.name}-id": r.inputs["network"].removesuffix("-id") for r in mocks.of_type(SUBNET)}


def gpu_nics(mocks: RecordingMocks, host: str) -> list[dict[str, Any]]:
    return mocks.named(f"c-{host}").inputs["networkInterfaces"]


def test_a3_mega_gets_eight_gpu_vpcs_at_8244_with_a_gvnic_each() -> None:
    mocks = built("gcp-a3mega")
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
        data["gcp"]["capacity"] = {"type": "on-demand"}
        data["nodes"][0]["instance_type"] = "a3-highgpu-8g"
        data["planes"]["compute"]["transport"] = "gpudirect-tcpx"

    mocks = build(edited_plan("gcp-a3mega", edit))
    assert sorted(k for k in networks(mocks) if k.startswith("c-gpu-")) == [f"c-gpu-{i}" for i in range(4)]
    assert len(gpu_nics(mocks, "a3m-01")) == 5


def test_a3_ultra_gets_two_gvnic_vpcs_and_one_rdma_vpc_with_eight_subnets_and_mrdma_nics() -> None:
    mocks = built("gcp-a3ultra")
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
    mocks = built("gcp-a3ultra")
    rules = [r.inputs for r in mocks.of_type(FIREWALL)]
    assert not [r for r in rules if r["network"] == "c-rdma"]
    internal = {r["network"] for r in rules if r["sourceRanges"] and r["allows"] == [{"protocol": "all"}]}
    assert internal == {"c-inband", "c-storage"}
    iap = [r for r in rules if r["sourceRanges"] == ["35.235.240.0/20"]]
    assert [(r["network"], r["allows"]) for r in iap] == [("c-inband", [{"protocol": "tcp", "ports": ["22"]}])]


def test_flex_start_vms_consume_no_reservation_and_run_a_bounded_time() -> None:
    """slurm-gcp: FLEX_START, TERMINATE, instanceTerminationAction DELETE, reservation affinity NO_RESERVATION."""
    mocks = built("gcp-a3ultra")
    inputs = mocks.named("c-a3u-01").inputs
    assert inputs["scheduling"] == {
        "onHostMaintenance": "TERMINATE",
        "automaticRestart": False,
        "provisioningModel": "FLEX_START",
        "instanceTerminationAction": "DELETE",
        "maxRunDuration": {"seconds": 604800},
    }
    assert inputs["reservationAffinity"] == {"type": "NO_RESERVATION"}


SPECIFIC = {
    "type": "SPECIFIC_RESERVATION",
    "specificReservation": {"key": "compute.googleapis.com/reservation-name", "values": ["a3mega-reservation"]},
}


def test_specific_reservation_keeps_standard_vms_and_the_reservations_own_placement() -> None:
    """slurm-gcp resume.py: ordinary reservations stay STANDARD; "vanilla reservations don't support external policies"."""
    mocks = built("gcp-a3mega")
    inputs = mocks.named("c-a3m-01").inputs
    assert inputs["scheduling"]["provisioningModel"] == "STANDARD"
    assert inputs["scheduling"]["onHostMaintenance"] == "TERMINATE"
    assert inputs["reservationAffinity"] == SPECIFIC
    assert mocks.of_type("gcp:compute/resourcePolicy:ResourcePolicy") == []
    assert all("resourcePolicies" not in r.inputs for r in mocks.of_type(INSTANCE))
    login = [r for r in mocks.of_type(INSTANCE) if r.inputs.get("labels", {}).get("gpufabric-group") == "login"]
    assert login
    assert all("reservationAffinity" not in r.inputs for r in login)


def test_calendar_reservation_makes_reservation_bound_vms_without_our_placement() -> None:
    """about-reservation-bound-vms: RESERVATION_BOUND is for future reservations in calendar mode / AI Hypercomputer."""

    def edit(data: dict[str, Any]) -> None:
        data["gcp"]["capacity"]["reservation_mode"] = "calendar"

    mocks = build(edited_plan("gcp-a3mega", edit))
    inputs = mocks.named("c-a3m-01").inputs
    assert inputs["scheduling"]["provisioningModel"] == "RESERVATION_BOUND"
    assert inputs["reservationAffinity"] == SPECIFIC
    assert mocks.of_type("gcp:compute/resourcePolicy:ResourcePolicy") == []


def test_reservation_mode_none_keeps_on_demand_vms_off_every_reservation_and_places_them() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["gcp"]["capacity"] = {"type": "on-demand", "reservation_mode": "none"}
        data["gcp"]["placement"] = {"enabled": True, "max_distance": 2}

    mocks = build(edited_plan("gcp-a3mega", edit))
    inputs = mocks.named("c-a3m-01").inputs
    assert inputs["scheduling"]["provisioningModel"] == "STANDARD"
    assert inputs["reservationAffinity"] == {"type": "NO_RESERVATION"}
    (policy,) = mocks.of_type("gcp:compute/resourcePolicy:ResourcePolicy")
    assert policy.inputs["groupPlacementPolicy"] == {"vmCount": 8, "collocation": "COLLOCATED", "maxDistance": 2}
    assert inputs["resourcePolicies"] == f"{policy.name}-self-link"


def a4x_plan() -> ClusterPlan:
    def edit(data: dict[str, Any]) -> None:
        data["nodes"][0].update(instance_type="a4x-highgpu-4g", hostname="a4x-{index:02d}", count=18)
        data["gcp"]["capacity"] = {"type": "on-demand"}
        data["gcp"]["placement"] = {"enabled": True}
        data["gcp"]["image"] = ARM_IMAGE

    return edited_plan("gcp-a3ultra", edit)


def test_a4x_gets_two_gvnic_networks_four_mrdma_nics_and_a_1x72_slice_policy() -> None:
    """gpu-network-bandwidth: 4 CX-7 + 2 Titanium NICs; Cluster Toolkit a4x-vm: a4x_net_0/1 + 4 MRDMA subnets."""
    mocks = build(a4x_plan())
    nics = gpu_nics(mocks, "a4x-01")
    assert [n["nicType"] for n in nics] == ["GVNIC", "GVNIC"] + ["MRDMA"] * 4
    owner = subnet_network(mocks)
    assert [owner[n["subnetwork"]] for n in nics] == ["c-inband", "c-storage"] + ["c-rdma"] * 4
    assert {networks(mocks)[k]["mtu"] for k in ("c-inband", "c-storage", "c-rdma")} == {8896}
    (policy,) = mocks.of_type("gcp:compute/resourcePolicy:ResourcePolicy")
    assert policy.inputs["groupPlacementPolicy"] == {"collocation": "COLLOCATED", "gpuTopology": "1x72"}
    assert len(mocks.of_type(INSTANCE)) == 18
    assert all(r.inputs["resourcePolicies"] == f"{policy.name}-self-link" for r in mocks.of_type(INSTANCE))


def test_every_vm_is_a_shielded_vm_with_the_least_privilege_service_account() -> None:
    mocks = built("gcp-a3mega")
    (account,) = mocks.of_type("gcp:serviceaccount/account:Account")
    assert account.inputs["accountId"] == "c-nodes"
    roles = sorted((m.inputs["role"], m.inputs["member"]) for m in mocks.of_type("gcp:projects/iAMMember:IAMMember"))
    member = "serviceAccount:c-nodes@gpufabric-demo.iam.gserviceaccount.com"
    assert roles == [("roles/logging.logWriter", member), ("roles/monitoring.metricWriter", member)]
    for vm in mocks.of_type(INSTANCE):
        assert vm.inputs["shieldedInstanceConfig"] == {"enableVtpm": True, "enableIntegrityMonitoring": True, "enableSecureBoot": False}
        assert vm.inputs["serviceAccount"] == {
            "email": "c-nodes@gpufabric-demo.iam.gserviceaccount.com",
            "scopes": ["https://www.googleapis.com/auth/cloud-platform"],
        }


def test_apis_are_enabled_and_flow_logs_cover_every_subnet_but_the_rdma_ones() -> None:
    mocks = built("gcp-a3ultra")
    apis = sorted(s.inputs["service"] for s in mocks.of_type("gcp:projects/service:Service"))
    assert apis == sorted(
        [
            "compute.googleapis.com",
            "iam.googleapis.com",
            "iap.googleapis.com",
            "logging.googleapis.com",
            "lustre.googleapis.com",
            "monitoring.googleapis.com",
            "oslogin.googleapis.com",
            "servicenetworking.googleapis.com",
        ]
    )
    assert all(s.inputs["disableOnDestroy"] is False for s in mocks.of_type("gcp:projects/service:Service"))
    logged = {r.name: "logConfig" in r.inputs for r in mocks.of_type(SUBNET)}
    assert {k for k, v in logged.items() if v} == {"c-inband", "c-storage"}
    assert {k for k, v in logged.items() if not v} == {f"c-rdma-{i}" for i in range(8)}
    (inband,) = [r for r in mocks.of_type(SUBNET) if r.name == "c-inband"]
    assert inband.inputs["logConfig"] == {
        "aggregationInterval": "INTERVAL_5_SEC",
        "flowSampling": 0.5,
        "metadata": "INCLUDE_ALL_METADATA",
    }


def test_gcp_hardening_opt_outs_and_secure_boot_option() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["gcp"].update(flow_logs=False, service_account=False, enable_apis=False, shielded_vm={"secure_boot": True})

    mocks = build(edited_plan("gcp-a3mega", edit))
    assert mocks.of_type("gcp:projects/service:Service") == []
    assert mocks.of_type("gcp:serviceaccount/account:Account") == []
    assert all("logConfig" not in r.inputs for r in mocks.of_type(SUBNET))
    vm = mocks.named("c-a3m-01").inputs
    assert "serviceAccount" not in vm
    assert vm["shieldedInstanceConfig"]["enableSecureBoot"] is True


def test_managed_lustre_is_peered_into_the_storage_vpc() -> None:
    mocks = built("gcp-a3ultra")
    (address,) = mocks.of_type("gcp:compute/globalAddress:GlobalAddress")
    assert (address.inputs["purpose"], address.inputs["network"]) == ("VPC_PEERING", "c-storage-id")
    (lustre,) = mocks.of_type("gcp:lustre/instance:Instance")
    assert lustre.inputs["network"] == "c-storage-id"
    assert lustre.inputs["perUnitStorageThroughput"] == "500"


def test_nat_serves_only_the_inband_subnet() -> None:
    mocks = built("gcp-a3ultra")
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


def a4x_reserved(mode: str | None = None) -> ClusterPlan:
    def edit(data: dict[str, Any]) -> None:
        data["nodes"][0].update(instance_type="a4x-highgpu-4g", hostname="a4x-{index:02d}", count=18)
        data["gcp"].update(image=ARM_IMAGE, placement={"enabled": True})
        data["gcp"]["capacity"] = {"type": "reservation", "reservation": "a4x-res/reservationBlocks/b1"}
        if mode is not None:
            data["gcp"]["capacity"]["reservation_mode"] = mode

    return edited_plan("gcp-a3ultra", edit)


def test_a4x_on_a_reservation_is_reservation_bound_and_keeps_its_1x72_slice_policy() -> None:
    """GCP placement-policy-and-workload-policy: for A4X "you must apply a compact placement policy or a workload policy";
    Cluster Toolkit a4x-vm.yaml sets reservation_name and placement_policy {COLLOCATED, gpu_topology 1x72} together and keeps
    RESERVATION_BOUND whenever a reservation is used (create-reservation-bound-vm: "A4X, A4, or A3 Ultra VMs")."""
    mocks = build(a4x_reserved())
    (policy,) = mocks.of_type("gcp:compute/resourcePolicy:ResourcePolicy")
    assert policy.inputs["groupPlacementPolicy"] == {"collocation": "COLLOCATED", "gpuTopology": "1x72"}
    inputs = mocks.named("c-a4x-01").inputs
    assert inputs["resourcePolicies"] == f"{policy.name}-self-link"
    assert inputs["reservationAffinity"]["specificReservation"]["values"] == ["a4x-res/reservationBlocks/b1"]
    assert inputs["scheduling"]["provisioningModel"] == "RESERVATION_BOUND"
    assert inputs["bootDisk"]["initializeParams"]["image"] == ARM_IMAGE


def test_a3_ultra_reservation_without_a_mode_is_reservation_bound() -> None:
    """Cluster Toolkit a3ultra-vm-deployment.yaml: "if you have a reservation, keep RESERVATION_BOUND"."""

    def edit(data: dict[str, Any]) -> None:
        data["gcp"].update(capacity={"type": "reservation", "reservation": "a3u-res"}, placement={"enabled": False})

    mocks = build(edited_plan("gcp-a3ultra", edit))
    assert mocks.named("c-a3u-01").inputs["scheduling"]["provisioningModel"] == "RESERVATION_BOUND"


def test_a3_mega_reservation_without_a_mode_stays_standard() -> None:
    """A3 Mega is not sold as reservation-bound capacity: an ordinary (specific) reservation keeps STANDARD VMs."""
    assert built("gcp-a3mega").named("c-a3m-01").inputs["scheduling"]["provisioningModel"] == "STANDARD"


def test_service_account_enables_the_iam_api_and_operators_get_iap_and_os_login() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["gcp"]["operators"] = ["user:ops@example.com", "group:hpc-admins@example.com"]

    mocks = build(edited_plan("gcp-a3mega", edit))
    apis = {s.inputs["service"] for s in mocks.of_type("gcp:projects/service:Service")}
    assert "iam.googleapis.com" in apis
    grants = sorted((m.inputs["role"], m.inputs["member"]) for m in mocks.of_type("gcp:projects/iAMMember:IAMMember"))
    for member in ("user:ops@example.com", "group:hpc-admins@example.com"):
        for role in ("roles/iap.tunnelResourceAccessor", "roles/compute.osAdminLogin", "roles/iam.serviceAccountUser"):
            assert (role, member) in grants
    assert len(grants) == 2 + 6


def test_no_service_account_no_iam_api() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["gcp"]["service_account"] = False

    mocks = build(edited_plan("gcp-a3mega", edit))
    apis = {s.inputs["service"] for s in mocks.of_type("gcp:projects/service:Service")}
    assert "iam.googleapis.com" not in apis
    assert "compute.googleapis.com" in apis
