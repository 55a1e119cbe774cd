"""Issue 31, without a node: what roles/cloud_fabric plans, refuses and reads back for each provider's file system,
rendered from the role's own files (tests/roles/role_logic.py) with the variable the stacks export."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from fabric.inventory.shared_fs import shared_fs
from tests.conftest import ROOT
from tests.roles.role_logic import facts, render, role_vars, task

FSX_REPO = "deb [signed-by=/etc/apt/keyrings/gpufabric-fsx.asc] https://fsx-lustre-client-repo.s3.amazonaws.com/ubuntu jammy main"
AMLFS_REPO = "deb [arch=amd64 signed-by=/etc/apt/keyrings/gpufabric-microsoft.asc] https://packages.microsoft.com/repos/amlfs-noble/ noble main"
GOOGLE_REPO = "https://us-apt.pkg.dev/projects/lustre-client-binaries lustre-client-ubuntu-jammy main"
UBUNTU_22 = facts("Ubuntu", "22.04", "Debian", kernel="5.15.0-1073-azure", release="jammy")
UBUNTU_24 = facts("Ubuntu", "24.04", "Debian", kernel="6.8.0-1026-azure", release="noble")
ROCKY_9 = facts("Rocky", "9.4", "RedHat", kernel="5.14.0-427.13.1.el9_4.x86_64")
FSX = shared_fs("fsx-lustre", "fs-0abc.fsx.us-east-1.amazonaws.com", "x7bb3bev", "2.15")
AMLFS = shared_fs("amlfs", "10.40.4.4", "lustrefs", "2.15.7")
MANAGED = shared_fs("managed-lustre", "10.137.8.2", "lustrefs")
FILESTORE = shared_fs("filestore", "10.129.8.2", "shared")


def variables(fs: dict[str, str], os_facts: dict[str, str], **extra: Any) -> dict[str, Any]:
    return {
        **role_vars("cloud_fabric"),
        "gpufabric_target": "aws",
        "gpufabric_shared_fs": fs,
        "ansible_facts": os_facts,
        "inventory_hostname": "node01",
        **extra,
    }


def plan(fs: dict[str, str], os_facts: dict[str, str]) -> dict[str, Any]:
    text = (ROOT / "roles/cloud_fabric/templates/plan.yml.j2").read_text(encoding="utf-8")
    return yaml.safe_load(render(text, variables(fs, os_facts)))["shared_fs"]


def preflight(fs: dict[str, str], os_facts: dict[str, str]) -> tuple[bool, str]:
    check = task("cloud_fabric", "preflight.yml", "Preflight")["ansible.builtin.assert"]
    found = variables(fs, os_facts)
    return all(render("{{ " + c + " }}", found) for c in check["that"]), " ".join(render(check["fail_msg"], found).split())


@pytest.mark.parametrize(
    ("fs", "os_facts", "expected"),
    [
        (FSX, UBUNTU_22, {"source": "fs-0abc.fsx.us-east-1.amazonaws.com@tcp:/x7bb3bev", "type": "lustre", "mount_point": "/fsx",
                          "options": "noatime,flock,_netdev,x-systemd.automount,x-systemd.requires=network.service",
                          "lustre_version": "2.15", "fstab": True,
                          "repository": FSX_REPO,
                          "packages": ["lustre-client-modules-5.15.0-1073-azure"]}),
        (AMLFS, UBUNTU_24, {"source": "10.40.4.4@tcp:/lustrefs", "type": "lustre", "mount_point": "/lustre",
                            "options": "noatime,flock,_netdev,x-systemd.automount", "lustre_version": "2.15.7", "fstab": True,
                            "repository": AMLFS_REPO,
                            "packages": ["amlfs-lustre-client-2.16.1-14-gbc76088=6.8.0-1026-azure"]}),
        (MANAGED, UBUNTU_22, {"source": "10.137.8.2@tcp:/lustrefs", "type": "lustre", "mount_point": "/lustre",
                              "options": "_netdev,x-systemd.automount", "lustre_version": None, "fstab": True,
                              "repository": "deb [signed-by=/etc/apt/trusted.gpg.d/gpufabric-google-artifact-registry.asc] " + GOOGLE_REPO,
                              "packages": ["lustre-client-modules-5.15.0-1073-azure", "lustre-client-utils"]}),
        (FILESTORE, ROCKY_9, {"source": "10.129.8.2:/shared", "type": "nfs", "mount_point": "/shared",
                              "options": "hard,_netdev,x-systemd.automount", "lustre_version": None, "fstab": True,
                              "repository": "", "packages": ["nfs-utils"]}),
    ],
    ids=["fsx-ubuntu22", "amlfs-ubuntu24", "managed-lustre-ubuntu22", "filestore-rocky9"],
)  # fmt: skip
def test_each_provider_plans_its_client_source_options_and_fstab(fs: dict[str, str], os_facts: dict[str, str], expected: dict[str, Any]) -> None:
    assert plan(fs, os_facts) == {**expected, "server": fs["server"], "name": fs["name"]}
    assert preflight(fs, os_facts) == (True, "cloud_fabric on node01:")


@pytest.mark.parametrize(
    ("fs", "os_facts", "reason"),
    [
        (MANAGED, UBUNTU_24, "no managed-lustre client for Ubuntu 24.04 (kernel 6.8.0-1026-azure): the provider builds it for Ubuntu-22 only."),
        (FSX, ROCKY_9, "no fsx-lustre client for Rocky 9.4 (kernel 5.14.0-427.13.1.el9_4.x86_64): "
                       "the provider builds it for Ubuntu-22, Ubuntu-24 only."),
        ({k: v for k, v in FSX.items() if k != "source"}, UBUNTU_22, "gpufabric_shared_fs lacks source (use the inventory the cloud stack exports)."),
    ],
)  # fmt: skip
def test_a_client_the_os_has_none_of_or_a_partial_variable_is_refused_with_the_reason(
    fs: dict[str, str], os_facts: dict[str, str], reason: str
) -> None:
    ok, message = preflight(fs, os_facts)
    assert not ok
    assert reason in message


def read_back(fs: dict[str, str], found: dict[str, Any]) -> str:
    check = task("cloud_fabric", "shared_fs.yml", "Verify | shared file system read back")
    found_vars = variables(fs, UBUNTU_22, _cloud_fabric_fs_found=found, **check["vars"])
    return " ".join(str(render("{{ _cloud_fabric_fs_problem }}", found_vars)).split())


def test_the_read_back_names_a_missing_mount_a_wrong_source_and_a_missing_option() -> None:
    good = "fs-0abc.fsx.us-east-1.amazonaws.com@tcp:/x7bb3bev lustre rw,noatime,flock,lazystatfs"
    assert read_back(FSX, {"rc": 0, "stdout": good, "stderr": ""}) == ""
    assert read_back(FSX, {"rc": 1, "stdout": "", "stderr": "findmnt: nothing"}) == (
        "nothing is mounted on /fsx (findmnt rc=1, stderr: findmnt: nothing); expected fs-0abc.fsx.us-east-1.amazonaws.com@tcp:/x7bb3bev."
    )
    assert read_back(FSX, {"rc": 0, "stdout": "10.0.0.9@tcp:/other lustre rw,noatime,flock", "stderr": ""}) == (
        "/fsx is mounted from 10.0.0.9@tcp:/other, not fs-0abc.fsx.us-east-1.amazonaws.com@tcp:/x7bb3bev."
    )
    assert read_back(FSX, {"rc": 0, "stdout": good.replace(",flock", ""), "stderr": ""}) == (
        "/fsx is mounted without flock (findmnt shows rw,noatime,lazystatfs)."
    )
