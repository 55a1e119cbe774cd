"""Contract per provider: every resource each example (and variant) registers passes the provider SDK's typed args.

See ``tests/cloud/contract.py`` for what is checked: argument names, nested types, required arguments, and closed
value lists (Azure Native enums; AWS/GCP documented value lists).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from fabric.cloud import build_cloud_cluster
from fabric.model import load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from tests.cloud.conftest import edited_plan, example_plan, register
from tests.cloud.contract import args_class, contract_problems
from tests.conftest import DATA

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAtest gpufabric"


def _edit(name: str, change: Callable[[dict[str, Any]], None]) -> Callable[[], ClusterPlan]:
    return lambda: edited_plan(name, change)


def _aws_everything(data: dict[str, Any]) -> None:
    data["aws"].update(
        auto_scaling_group=True,
        management_access="bastion",
        bastion_ingress=["192.0.2.0/24"],
        encryption={"kms_key_id": "arn:aws:kms:us-east-1:123456789012:key/abcd-1234"},
    )
    data["aws"]["fsx_lustre"]["efa"] = True


def _gcp_calendar(data: dict[str, Any]) -> None:
    data["gcp"]["capacity"]["reservation_mode"] = "calendar"


def _gcp_a4x(data: dict[str, Any]) -> None:
    data["nodes"][0].update(instance_type="a4x-highgpu-4g", hostname="a4x-{index:02d}", count=2)
    # Grace (Arm) hosts: the arm64 image family Cluster Toolkit a4x-vm.yaml boots; a reservation-bound 1x72 slice.
    data["gcp"].update(
        image="projects/ubuntu-os-accelerator-images/global/images/family/ubuntu-accelerator-2404-arm64-with-nvidia-580",
        capacity={"type": "reservation", "reservation": "a4x-res/reservationBlocks/b1"},
        placement={"enabled": True},
        operators=["user:ops@example.com"],
    )


def _gcp_spot(data: dict[str, Any]) -> None:
    data["gcp"]["capacity"] = {"type": "spot", "max_run_duration_s": 3600}
    data["gcp"]["placement"] = {"enabled": True, "max_distance": 3}
    data["gcp"]["shielded_vm"] = {"secure_boot": True}


def _azure_options(data: dict[str, Any]) -> None:
    data["azure"].update(encryption_at_host=True, capacity="spot")


CASES: dict[str, Callable[[], ClusterPlan]] = {
    "aws-p5": lambda: example_plan("aws-p5"),
    "aws-asg-bastion-fsx-efa-kms": _edit("aws-p5", _aws_everything),
    "gcp-a3mega-specific": lambda: example_plan("gcp-a3mega"),
    "gcp-a3mega-calendar": _edit("gcp-a3mega", _gcp_calendar),
    "gcp-a3ultra-flex": lambda: example_plan("gcp-a3ultra"),
    "gcp-a4x": _edit("gcp-a3ultra", _gcp_a4x),
    "gcp-spot-secure-boot": _edit("gcp-a3ultra", _gcp_spot),
    "azure-ndv5": lambda: example_plan("azure-ndv5"),
    "azure-spot-encryption-at-host": _edit("azure-ndv5", _azure_options),
    # GB200 class (tests/data/cloud-gb200/): A4X 2 x 1x72 slices on a reservation; ND GB200 v6; one P6e-GB200 UltraServer.
    "gcp-gb200-a4x": lambda: plan_cluster(load_cluster(DATA / "cloud-gb200" / "gcp-a4x.yaml")),
    "azure-gb200-ndv6": lambda: plan_cluster(load_cluster(DATA / "cloud-gb200" / "azure-ndgb200.yaml")),
    "aws-gb200-p6e": lambda: plan_cluster(load_cluster(DATA / "cloud-gb200" / "aws-p6e-gb200.yaml")),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_registered_resource_is_accepted_by_the_provider_sdk(case: str) -> None:
    plan = CASES[case]()
    mocks = register(lambda: build_cloud_cluster(plan, ssh_public_key=KEY))
    resources = [r for r in mocks.created if not r.typ.startswith("gpufabric:")]
    assert resources
    problems = [p for r in resources for p in contract_problems(args_class(r.typ), r.inputs, f"{r.typ} {r.name}")]
    assert problems == []


@pytest.mark.parametrize(
    ("token", "inputs", "problem"),
    [
        (
            "aws:ec2/launchTemplate:LaunchTemplate",
            {"networkInterfaces": [{"networkCardIndex": 0, "efaOnly": True}]},
            "lt.networkInterfaces[0].efaOnly: not an argument of LaunchTemplateNetworkInterfaceArgs",
        ),
        ("aws:fsx/lustreFileSystem:LustreFileSystem", {"deploymentType": "PERSISTENT_2"}, "lt.subnetIds: required by LustreFileSystemArgs"),
        (
            "aws:fsx/lustreFileSystem:LustreFileSystem",
            {"subnetIds": "s", "metadataConfiguration": {"mode": "AUTO"}},
            "lt.metadataConfiguration.mode: 'AUTO' is not one of AUTOMATIC, USER_PROVISIONED",
        ),
        (
            "gcp:compute/instance:Instance",
            {"machineType": "a3", "zone": "z", "bootDisk": {}, "networkInterfaces": [], "scheduling": {"provisioningModel": "RESERVED"}},
            "lt.scheduling.provisioningModel: 'RESERVED' is not one of STANDARD, SPOT, FLEX_START, RESERVATION_BOUND",
        ),
        (
            "azure-native:compute:VirtualMachineScaleSet",
            {"resourceGroupName": "rg", "orchestrationMode": "Uniformish"},
            "lt.orchestrationMode: 'Uniformish' is not one of Flexible, Uniform (OrchestrationMode)",
        ),
        ("azure-native:network:BastionHost", {"resourceGroupName": "rg", "enableTunneling": "yes"}, "lt.enableTunneling: a string where"),
    ],
    ids=["unknown-nested-argument", "missing-required", "aws-documented-values", "gcp-documented-values", "azure-enum", "wrong-type"],
)
def test_the_contract_check_catches_what_a_provider_would_reject(token: str, inputs: dict[str, Any], problem: str) -> None:
    found = contract_problems(args_class(token), inputs, "lt")
    assert [p for p in found if p.startswith(problem)], found
