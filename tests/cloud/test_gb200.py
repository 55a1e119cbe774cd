"""GB200-class examples (``tests/data/cloud-gb200/``) plan, build under mocks and export their NVLink domains.

AWS: one P6e-GB200 UltraServer (18 x ``p6e-gb200.36xlarge``) on its Capacity Block; the card layout is flagged
unverified in its catalog file (no AWS page with its card table was readable).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabric.catalog.cloud import AWS_INSTANCE_TYPES, AZURE_VM_SIZES, GCP_MACHINE_TYPES
from fabric.catalog.cloud_model import CLOUD_DATA, AwsInstanceTypeSpec, load_aws
from fabric.catalog.cloud_refused import REFUSED_TYPES
from fabric.cloud import build_cloud_cluster
from fabric.errors import InputError
from fabric.export.slurm import export_slurm
from fabric.model import ClusterSpec, load_cluster
from fabric.plan import ClusterPlan, check_and_plan, plan_cluster
from tests.cloud.conftest import register
from tests.cloud.contract import args_class, contract_problems
from tests.conftest import DATA

GB200 = DATA / "cloud-gb200"
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAtest gpufabric"


def gb200_plan(name: str) -> ClusterPlan:
    return plan_cluster(load_cluster(GB200 / f"{name}.yaml"))


def edited(name: str, change: dict[str, Any]) -> ClusterSpec:
    data = yaml.safe_load((GB200 / f"{name}.yaml").read_text(encoding="utf-8"))
    data[name.split("-", maxsplit=1)[0]].update(change)
    return ClusterSpec.model_validate(data)


@pytest.mark.parametrize("name", ["gcp-a4x", "azure-ndgb200", "aws-p6e-gb200"])
def test_gb200_example_builds_every_planned_resource_and_passes_the_sdk_contract(name: str) -> None:
    plan = gb200_plan(name)
    assert plan.cloud is not None
    mocks = register(lambda: build_cloud_cluster(plan, ssh_public_key=KEY))
    resources = [r for r in mocks.created if not r.typ.startswith("gpufabric:")]
    assert sorted(Counter(r.typ for r in resources).items()) == list(plan.cloud.resources)
    assert [p for r in resources for p in contract_problems(args_class(r.typ), r.inputs, f"{r.typ} {r.name}")] == []


def test_gcp_a4x_groups_are_reservation_bound_1x72_slices_and_slurm_blocks() -> None:
    plan = gb200_plan("gcp-a4x")
    mocks = register(lambda: build_cloud_cluster(plan, ssh_public_key=KEY))
    policies = mocks.of_type("gcp:compute/resourcePolicy:ResourcePolicy")
    assert sorted(p.name for p in policies) == ["gcp-a4x-nvl1-compact", "gcp-a4x-nvl2-compact"]
    assert all(p.inputs["groupPlacementPolicy"] == {"collocation": "COLLOCATED", "gpuTopology": "1x72"} for p in policies)
    vms = mocks.of_type("gcp:compute/instance:Instance")
    assert len(vms) == 36
    assert {v.inputs["scheduling"]["provisioningModel"] for v in vms} == {"RESERVATION_BOUND"}
    assert {v.inputs["resourcePolicies"] for v in vms if v.name.startswith("gcp-a4x-a4x-a")} == {"gcp-a4x-nvl1-compact-self-link"}
    blocks = export_slurm(plan)["slurm/topology-block.conf"].splitlines()
    assert "BlockName=nvl1-nvl01 Nodes=a4x-a[01-18]" in blocks
    assert "BlockName=nvl2-nvl01 Nodes=a4x-b[01-18]" in blocks
    assert "BlockSizes=18,36" in blocks


def test_unplaced_a4x_has_no_slurm_block_of_ours() -> None:
    """Without our 1x72 policy nothing says which VMs share a rack: no block is invented (the rules refuse it anyway)."""
    findings, plan = check_and_plan(edited("gcp-a4x", {"placement": {"enabled": False}}))
    assert plan is None
    assert any(f.dotted_path == "gcp.placement.enabled" for f in findings)


def test_azure_gb200_is_one_infiniband_group_of_arm_vms_and_no_block_is_guessed() -> None:
    plan = gb200_plan("azure-ndgb200")
    assert plan.cloud is not None
    (gpu,) = [g for g in plan.cloud.groups if g.fabric]
    assert [(s.ib_group, len(s.hostnames)) for s in gpu.scale_sets] == [(1, 18)]
    assert "slurm/topology-block.conf" not in export_slurm(plan), "Azure does not say which VMs of a scale set share a rack"


def test_azure_gb200_refuses_an_x86_image_and_warns_on_an_unmarked_one() -> None:
    with pytest.raises(InputError) as caught:
        plan_cluster(edited("azure-ndgb200", {"image": {"offer": "ubuntu-hpc", "sku": "2204-x86_64"}}))
    assert [f.dotted_path for f in caught.value.errors] == ["azure.image.sku"]
    findings, plan = check_and_plan(edited("azure-ndgb200", {"image": {"offer": "ubuntu-hpc", "sku": "2404"}}))
    assert plan is not None
    assert [(f.dotted_path, f.severity) for f in findings if "arm64" in f.message] == [("azure.image.sku", "warning")]


def aws_edited(change: dict[str, Any], nodes: list[dict[str, Any]] | None = None) -> ClusterSpec:
    data = yaml.safe_load((GB200 / "aws-p6e-gb200.yaml").read_text(encoding="utf-8"))
    data["aws"].update(change)
    if nodes is not None:
        data["nodes"] = nodes
    return ClusterSpec.model_validate(data)


def test_aws_p6e_gb200_launch_template_has_ena_primary_and_efa_only_cards_and_one_block() -> None:
    plan = gb200_plan("aws-p6e-gb200")
    mocks = register(lambda: build_cloud_cluster(plan, ssh_public_key=KEY))
    (template,) = [t for t in mocks.of_type("aws:ec2/launchTemplate:LaunchTemplate") if t.name == "aws-p6e-gb200-nvl1-lt"]
    nics = [(n["networkCardIndex"], n["deviceIndex"], n["interfaceType"]) for n in template.inputs["networkInterfaces"]]
    assert nics == [(0, 0, "interface"), *((card, 0, "efa-only") for card in range(1, 16, 2))]
    assert template.inputs["instanceMarketOptions"]["marketType"] == "capacity-block"
    assert len([i for i in mocks.of_type("aws:ec2/instance:Instance") if i.name.startswith("aws-p6e-gb200-gb200-")]) == 18
    blocks = export_slurm(plan)["slurm/topology-block.conf"].splitlines()
    assert "BlockName=nvl1-nvl01 Nodes=gb200-[01-18]" in blocks
    assert "BlockSizes=18" in blocks
    assert not any("login" in line for line in blocks)


def test_aws_instance_types_without_an_ultraserver_get_no_block() -> None:
    """Negative control: p5 instances are each their own NVLink domain, so no topology/block file."""
    plan = plan_cluster(aws_edited({}, [{"group": "gpu", "role": "gpu", "count": 18, "hostname": "p5-{index:02d}", "instance_type": "p5.48xlarge"}]))
    assert "slurm/topology-block.conf" not in export_slurm(plan)


@pytest.mark.parametrize("kind", ["on-demand", "spot"])
def test_aws_p6e_gb200_outside_a_reservation_is_refused(kind: str) -> None:
    findings, plan = check_and_plan(aws_edited({"capacity": {"type": kind}}))
    assert plan is None
    assert [f.dotted_path for f in findings if "UltraServer" in f.message] == ["aws.capacity.type"]


def test_aws_p6e_gb200_more_than_one_ultraserver_or_a_split_one_is_refused() -> None:
    gpu = {"group": "nvl1", "role": "gpu", "hostname": "gb200-{index:02d}", "instance_type": "p6e-gb200.36xlarge"}
    findings, plan = check_and_plan(aws_edited({}, [{**gpu, "count": 19}]))
    assert plan is None
    assert [f.dotted_path for f in findings if "UltraServer" in f.message] == ["nodes[0].count"]
    halves = [{**gpu, "count": 9}, {**gpu, "group": "nvl2", "count": 9, "hostname": "gb200-b{index:02d}", "id_offset": 100}]
    findings, plan = check_and_plan(aws_edited({}, halves))
    assert plan is None
    assert [f.dotted_path for f in findings if "UltraServer" in f.message] == ["nodes[1].group"]
    findings, plan = check_and_plan(aws_edited({}, [{**gpu, "count": 18}]))
    assert plan is not None, [f.message for f in findings]


def test_aws_catalog_refuses_an_nvlink_domain_that_is_not_whole_instances(tmp_path: Path) -> None:
    source = (CLOUD_DATA / "aws" / "p6e-gb200.36xlarge.yaml").read_text(encoding="utf-8")
    assert load_aws_dir(tmp_path, source)["p6e-gb200.36xlarge"].nvlink_domain_gpus == 72
    with pytest.raises(InputError) as caught:
        load_aws_dir(tmp_path, source.replace("nvlink_domain_gpus: 72", "nvlink_domain_gpus: 70"))
    assert "nvlink_domain_gpus 70" in str(caught.value)


def load_aws_dir(directory: Path, text: str) -> dict[str, AwsInstanceTypeSpec]:
    (directory / "p6e-gb200.36xlarge.yaml").write_text(text, encoding="utf-8")
    return load_aws(directory)


@pytest.mark.parametrize(
    ("name", "key", "refused", "why"),
    [
        ("azure-ndgb200", "Standard_ND128isr_NDR_GB200_v6", "Standard_ND128isr_GB300_v6", "size page"),
        ("gcp-a4x", "a4x-highgpu-4g", "a4x-maxgpu-4g-metal", "IPv6-only subnet"),
    ],
)
def test_gb300_class_types_are_refused_with_their_reason_not_as_unknown(name: str, key: str, refused: str, why: str) -> None:
    text = (GB200 / f"{name}.yaml").read_text(encoding="utf-8")
    findings, plan = check_and_plan(ClusterSpec.model_validate(yaml.safe_load(text.replace(key, refused))))
    assert plan is None
    messages = [f.message for f in findings if f.dotted_path.endswith("instance_type")]
    assert messages, "the refused type must be named"
    assert all("not supported yet" in m and why in m for m in messages)
    findings, _ = check_and_plan(ClusterSpec.model_validate(yaml.safe_load(text.replace(key, refused + "-typo"))))
    assert any(m.message.startswith("unknown") for m in findings), "negative control: a name not on the list stays unknown"


def test_refused_types_are_not_in_the_catalog() -> None:
    catalogs = {"aws": AWS_INSTANCE_TYPES, "gcp": GCP_MACHINE_TYPES, "azure": AZURE_VM_SIZES}
    assert all(name not in catalogs[cloud] for cloud, names in REFUSED_TYPES.items() for name in names)
