"""Issue 31: each stack exports what a node needs to mount its file system (``gpufabric_shared_fs``), read back from
the created resource (Pulumi mocks answer as the providers do: tests/cloud/conftest.py)."""

from __future__ import annotations

import ast
from typing import Any

import pulumi
import pytest
import yaml

from fabric.cloud._args import CloudClusterArgs
from fabric.cloud._shared_fs import reported
from fabric.cloud.aws_efa import EfaCluster
from fabric.cloud.azure_nd import NdCluster
from fabric.cloud.gcp_a3 import GpuCluster
from fabric.inventory.shared_fs import shared_fs
from tests.cloud.conftest import example_plan, register

COMPONENTS: dict[str, Any] = {"aws": EfaCluster, "gcp": GpuCluster, "azure": NdCluster}


def exported(example: str) -> dict[str, Any]:
    plan = example_plan(example)
    captured: list[str] = []

    def program() -> None:
        args = CloudClusterArgs(plan=plan, ssh_public_key="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAtest gpufabric")
        cluster: Any = COMPONENTS[plan.target]("c", args)
        pulumi.Output.from_input(cluster.ansible_inventory).apply(captured.append)

    register(program)
    (text,) = captured
    return yaml.safe_load(text)


@pytest.mark.parametrize(
    ("example", "expected"),
    [
        ("aws-p5", {"kind": "fsx-lustre", "type": "lustre", "server": "fs-c-fsx.fsx.mock.amazonaws.com", "name": "mockmnt",
                    "source": "fs-c-fsx.fsx.mock.amazonaws.com@tcp:/mockmnt", "mount_point": "/fsx", "lustre_version": "2.15"}),
        ("gcp-a3ultra", {"kind": "managed-lustre", "type": "lustre", "server": "10.9.40.2", "name": "lustrefs",
                         "source": "10.9.40.2@tcp:/lustrefs", "mount_point": "/lustre"}),
        ("gcp-a3mega", {"kind": "filestore", "type": "nfs", "server": "10.9.40.2", "name": "shared",
                        "source": "10.9.40.2:/shared", "mount_point": "/shared"}),
    ],
)  # fmt: skip
def test_the_stack_exports_the_file_system_it_created_as_one_cluster_variable(example: str, expected: dict[str, str]) -> None:
    assert exported(example)["all"]["vars"]["gpufabric_shared_fs"] == expected


def test_azure_exports_the_amlfs_mgs_address_and_lustre_version_to_every_host() -> None:
    expression = exported("azure-ndv5")["hostvar_expressions"]["gpufabric_shared_fs"]
    assert ast.literal_eval(expression) == {
        "kind": "amlfs", "type": "lustre", "server": "10.3.40.4", "name": "lustrefs",
        "source": "10.3.40.4@tcp:/lustrefs", "mount_point": "/lustre", "lustre_version": "2.15.7",
    }  # fmt: skip


def test_a_file_system_the_provider_reported_no_address_for_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="amlfs: the provider reported no server address"):
        shared_fs("amlfs", "", "lustrefs")


def test_a_stack_whose_provider_reported_no_address_exports_no_variable_and_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    warned: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *_, **__: warned.append(message))
    assert reported("fsx-lustre", None, None, "2.15") is None
    assert warned == [
        "fsx-lustre: the provider reported no address or name (server=None, name=None); the inventory has no gpufabric_shared_fs "
        "and nodes mount nothing. Fix: run `pulumi up` again once the file system is available."
    ]
