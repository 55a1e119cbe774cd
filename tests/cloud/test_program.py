"""The whole Pulumi program (``__main__.py``) under mocks, for every cloud example and for bad input."""

from __future__ import annotations

import logging
import runpy
from collections import Counter

import pulumi
import pytest

from tests.cloud.conftest import example_plan, register
from tests.conftest import DATA, ROOT

CLOUD_EXAMPLES = ["aws-p5", "gcp-a3mega", "gcp-a3ultra", "azure-ndv5"]


def run_program(definition: str, ssh_key: str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAtest gpufabric") -> None:
    pulumi.runtime.set_all_config({"gpufabric:cluster": definition, "gpufabric:sshPublicKey": ssh_key})
    register(lambda: runpy.run_path(str(ROOT / "__main__.py"), run_name="__main__"))


@pytest.mark.parametrize("example", CLOUD_EXAMPLES)
def test_program_builds_every_planned_resource_of_the_example(example: str) -> None:
    from tests.cloud.conftest import MOCKS

    run_program(str(ROOT / "inventories" / example / "cluster.yaml"))
    plan = example_plan(example)
    assert plan.cloud is not None
    got = Counter(r.typ for r in MOCKS.created if not r.typ.startswith("gpufabric:"))
    assert sorted(got.items()) == list(plan.cloud.resources)
    components = [r.typ for r in MOCKS.created if r.typ.startswith("gpufabric:")]
    assert components == [{"aws": "gpufabric:aws:EfaCluster", "gcp": "gpufabric:gcp:GpuCluster", "azure": "gpufabric:azure:NdCluster"}[plan.target]]


def test_invalid_definition_stops_the_program_with_the_report_and_creates_nothing() -> None:
    from tests.cloud.conftest import MOCKS

    bad = DATA / "invalid" / "aws-efa-multi-az.yaml"
    with pytest.raises(pulumi.RunError) as caught:
        run_program(str(bad))
    assert f"{bad}:6: error: aws.availability_zones: EFA traffic stays inside one subnet" in str(caught.value)
    assert MOCKS.created == []


def test_onprem_definition_is_refused_with_the_right_tool() -> None:
    with pytest.raises(pulumi.RunError, match="use ansible-playbook"):
        run_program(str(ROOT / "inventories" / "lab" / "cluster.yaml"))


def test_azure_without_ssh_key_is_refused_with_the_command_that_fixes_it() -> None:
    from tests.cloud.conftest import MOCKS

    with pytest.raises(pulumi.RunError, match="pulumi config set sshPublicKey"):
        run_program(str(ROOT / "inventories" / "azure-ndv5" / "cluster.yaml"), ssh_key="")
    assert MOCKS.created == []


def test_azure_120_nodes_are_built_as_two_scale_sets_and_the_program_warns_of_the_islands(caplog: pytest.LogCaptureFixture) -> None:
    from tests.cloud.conftest import MOCKS

    with caplog.at_level(logging.WARNING):
        run_program(str(ROOT / "inventories" / "azure-ndv5" / "cluster.yaml"))
    gpu = sorted(r.inputs["sku"]["capacity"] for r in MOCKS.of_type("azure-native:compute:VirtualMachineScaleSet") if "gpu" in r.name)
    assert gpu == [20, 100]
    warned = [r.getMessage() for r in caplog.records if "InfiniBand islands" in r.getMessage()]
    assert warned == [
        f"{ROOT / 'inventories' / 'azure-ndv5' / 'cluster.yaml'}:18: warning: nodes[0].count: 120 VMs become 2 InfiniBand islands "
        "(100 + 20): InfiniBand does not cross scale sets, so no job spans them over IB; ask Azure support to raise the limit to 300, "
        "then set scale_set_size: 120 and raised_scale_set_limit: true, or keep each job inside one island"
    ]


@pytest.mark.parametrize("name", ["gcp-a4x", "azure-ndgb200", "aws-p6e-gb200"])
def test_program_builds_the_gb200_examples(name: str) -> None:
    from fabric.model import load_cluster
    from fabric.plan import plan_cluster
    from tests.cloud.conftest import MOCKS

    path = DATA / "cloud-gb200" / f"{name}.yaml"
    run_program(str(path))
    plan = plan_cluster(load_cluster(path))
    assert plan.cloud is not None
    got = Counter(r.typ for r in MOCKS.created if not r.typ.startswith("gpufabric:"))
    assert sorted(got.items()) == list(plan.cloud.resources)
