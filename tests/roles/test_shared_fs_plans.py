"""Issue 31, without a node: what roles/cloud_fabric plans, refuses and reads back for each provider's file system,
rendered from the role's own files (tests/roles/role_logic.py) with the variable the stacks export."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabric.inventory.shared_fs import shared_fs
from tests.conftest import ROOT
from tests.roles.role_logic import facts, render, role_vars, task

FSX_REPO = "deb [signed-by=/etc/apt/keyrings/gpufabric-fsx.asc] https://fsx-lustre-client-repo.s3.amazonaws.com/ubuntu jammy main"
AMLFS_REPO = "deb [signed-by=/etc/apt/keyrings/gpufabric-microsoft.asc] https://packages.microsoft.com/repos/amlfs-noble/ noble main"
AMLFS_JAMMY = "deb [arch=amd64 signed-by=/etc/apt/keyrings/gpufabric-microsoft.asc] https://packages.microsoft.com/repos/amlfs-jammy/ jammy main"
GOOGLE_REPO = "https://us-apt.pkg.dev/projects/lustre-client-binaries lustre-client-ubuntu-jammy main"
UBUNTU_22 = facts("Ubuntu", "22.04", "Debian", kernel="5.15.0-1073-azure", release="jammy")
UBUNTU_24 = facts("Ubuntu", "24.04", "Debian", kernel="6.8.0-1026-azure", release="noble")
ROCKY_9 = facts("Rocky", "9.4", "RedHat", kernel="5.14.0-427.13.1.el9_4.x86_64")
ROCKY_92 = facts("Rocky", "9.2", "RedHat", kernel="5.14.0-284.30.1.el9_2.x86_64")
RHEL_8 = facts("RedHat", "8.10", "RedHat", kernel="4.18.0-553.22.1.el8_10.x86_64")
ALMA_9 = facts("AlmaLinux", "9.5", "RedHat", kernel="5.14.0-503.14.1.el9_5.x86_64")
AL2023 = facts("Amazon", "2023", "RedHat", kernel="6.1.115-126.197.amzn2023.x86_64")
DEBIAN_12 = facts("Debian", "12", "Debian", kernel="6.1.0-26-cloud-amd64", release="bookworm")
FSX_DEB_KEY = {"url": "https://fsx-lustre-client-repo-public-keys.s3.amazonaws.com/fsx-ubuntu-public-key.asc", "fingerprints": "unpinned"}
FSX_RPM_KEY = {"url": "https://fsx-lustre-client-repo-public-keys.s3.amazonaws.com/fsx-rpm-public-key.asc", "fingerprints": "unpinned"}
MICROSOFT = "BC528686B50D79E339D3721CEB3E94ADBE1229CF"  # learn.microsoft.com/linux/packages
MICROSOFT_KEY = {"url": "https://packages.microsoft.com/keys/microsoft.asc", "fingerprints": [MICROSOFT]}
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
    check = task("cloud_fabric", "preflight.yml", "Preflight | a provider")["ansible.builtin.assert"]
    found = variables(fs, os_facts)
    return all(render("{{ " + c + " }}", found) for c in check["that"]), " ".join(render(check["fail_msg"], found).split())


@pytest.mark.parametrize(
    ("fs", "os_facts", "expected"),
    [
        (FSX, UBUNTU_22, {"source": "fs-0abc.fsx.us-east-1.amazonaws.com@tcp:/x7bb3bev", "type": "lustre", "mount_point": "/fsx",
                          "options": "noatime,flock,_netdev,x-systemd.automount,x-systemd.requires=network.service",
                          "lustre_version": "2.15", "fstab": True,
                          "repository": FSX_REPO, "key": FSX_DEB_KEY,
                          "packages": ["lustre-client-modules-5.15.0-1073-azure"]}),
        # AWS: RHEL/Rocky from AWS's yum repository at the release of the running kernel; AL2023 from its own repositories
        (FSX, ROCKY_9, {"source": "fs-0abc.fsx.us-east-1.amazonaws.com@tcp:/x7bb3bev", "type": "lustre", "mount_point": "/fsx",
                        "options": "noatime,flock,_netdev,x-systemd.automount,x-systemd.requires=network.service",
                        "lustre_version": "2.15", "fstab": True, "key": FSX_RPM_KEY,
                        "repository": "https://fsx-lustre-client-repo.s3.amazonaws.com/el/9.4/$basearch",
                        "packages": ["kmod-lustre-client", "lustre-client"]}),
        (FSX, RHEL_8, {"source": "fs-0abc.fsx.us-east-1.amazonaws.com@tcp:/x7bb3bev", "type": "lustre", "mount_point": "/fsx",
                       "options": "noatime,flock,_netdev,x-systemd.automount,x-systemd.requires=network.service",
                       "lustre_version": "2.15", "fstab": True, "key": FSX_RPM_KEY,
                       "repository": "https://fsx-lustre-client-repo.s3.amazonaws.com/el/8/$basearch",
                       "packages": ["kmod-lustre-client", "lustre-client"]}),
        (FSX, AL2023, {"source": "fs-0abc.fsx.us-east-1.amazonaws.com@tcp:/x7bb3bev", "type": "lustre", "mount_point": "/fsx",
                       "options": "noatime,flock,_netdev,x-systemd.automount,x-systemd.requires=network.service",
                       "lustre_version": "2.15", "fstab": True, "key": None, "repository": "", "packages": ["lustre-client"]}),
        # Azure: 22.04 and RHEL/Alma take the 2.15 build, 24.04 the 2.16 one; the Microsoft key is pinned
        (AMLFS, UBUNTU_22, {"source": "10.40.4.4@tcp:/lustrefs", "type": "lustre", "mount_point": "/lustre",
                            "options": "noatime,flock,_netdev,x-systemd.automount", "lustre_version": "2.15.7", "fstab": True,
                            "repository": AMLFS_JAMMY, "key": MICROSOFT_KEY,
                            "packages": ["amlfs-lustre-client-2.15.6-39-g3e00a10=5.15.0-1073-azure"]}),
        (AMLFS, ALMA_9, {"source": "10.40.4.4@tcp:/lustrefs", "type": "lustre", "mount_point": "/lustre",
                         "options": "noatime,flock,_netdev,x-systemd.automount", "lustre_version": "2.15.7", "fstab": True,
                         "repository": "https://packages.microsoft.com/yumrepos/amlfs-el9", "key": MICROSOFT_KEY,
                         "packages": ["amlfs-lustre-client-2.15.6_39_g3e00a10-5.14.0.503.14.1.el9.5-1"]}),
        (AMLFS, UBUNTU_24, {"source": "10.40.4.4@tcp:/lustrefs", "type": "lustre", "mount_point": "/lustre",
                            "options": "noatime,flock,_netdev,x-systemd.automount", "lustre_version": "2.15.7", "fstab": True,
                            "repository": AMLFS_REPO, "key": MICROSOFT_KEY,
                            "packages": ["amlfs-lustre-client-2.16.1-14-gbc76088=6.8.0-1026-azure"]}),
        (MANAGED, UBUNTU_22, {"source": "10.137.8.2@tcp:/lustrefs", "type": "lustre", "mount_point": "/lustre",
                              "options": "_netdev,x-systemd.automount", "lustre_version": None, "fstab": True,
                              "repository": "deb [signed-by=/etc/apt/trusted.gpg.d/gpufabric-google-artifact-registry.asc] " + GOOGLE_REPO,
                              "key": None,
                              "packages": ["lustre-client-modules-5.15.0-1073-azure", "lustre-client-utils"]}),
        (FILESTORE, ROCKY_9, {"source": "10.129.8.2:/shared", "type": "nfs", "mount_point": "/shared",
                              "options": "hard,_netdev,x-systemd.automount", "lustre_version": None, "fstab": True,
                              "repository": "", "key": None, "packages": ["nfs-utils"]}),
    ],
    ids=["fsx-ubuntu22", "fsx-rocky94", "fsx-rhel810", "fsx-al2023", "amlfs-ubuntu22", "amlfs-alma95", "amlfs-ubuntu24",
         "managed-lustre-ubuntu22", "filestore-rocky9"],
)  # fmt: skip
def test_each_provider_plans_its_client_source_options_and_fstab(fs: dict[str, str], os_facts: dict[str, str], expected: dict[str, Any]) -> None:
    assert plan(fs, os_facts) == {**expected, "server": fs["server"], "name": fs["name"]}
    assert preflight(fs, os_facts) == (True, "cloud_fabric on node01:")


@pytest.mark.parametrize(
    ("fs", "os_facts", "reason"),
    [
        (MANAGED, UBUNTU_24, "no managed-lustre client for Ubuntu 24.04 (kernel 6.8.0-1026-azure): the provider builds it for Ubuntu-22 only."),
        (FSX, DEBIAN_12, "no fsx-lustre client for Debian 12 (kernel 6.1.0-26-cloud-amd64): "
                         "the provider builds it for Ubuntu-22, Ubuntu-24, Amazon-2023, RedHat-8, RedHat-9, Rocky-8, Rocky-9 only."),
        ({k: v for k, v in FSX.items() if k != "source"}, UBUNTU_22, "gpufabric_shared_fs lacks source (use the inventory the cloud stack exports)."),
    ],
)  # fmt: skip
def test_a_client_the_os_has_none_of_or_a_partial_variable_is_refused_with_the_reason(
    fs: dict[str, str], os_facts: dict[str, str], reason: str
) -> None:
    ok, message = preflight(fs, os_facts)
    assert not ok
    assert reason in message


def kernel_preflight(fs: dict[str, str], os_facts: dict[str, str]) -> tuple[bool, str]:
    check = task("cloud_fabric", "preflight.yml", "Preflight | the provider builds its client for this kernel")["ansible.builtin.assert"]
    found = variables(fs, os_facts)
    return bool(render("{{ " + check["that"] + " }}", found)), " ".join(render(check["fail_msg"], found).split())


def test_fsx_on_a_rhel_kernel_aws_builds_no_client_for_is_refused_naming_the_kernels() -> None:
    assert kernel_preflight(FSX, ROCKY_9)[0]
    assert kernel_preflight(AMLFS, ROCKY_92)[0], "only FSx's repository is per kernel"
    ok, message = kernel_preflight(FSX, ROCKY_92)
    assert not ok
    assert "no fsx-lustre client for kernel 5.14.0-284.30.1.el9_2.x86_64 (Rocky 9.2): AWS builds its Red Hat / Rocky client" in message
    assert "5.14.0-427*, 5.14.0-362*" in message


def architecture_preflight(fs: dict[str, str], os_facts: dict[str, str]) -> tuple[bool, str]:
    check = task("cloud_fabric", "preflight.yml", "Preflight | the provider builds its client for this architecture")["ansible.builtin.assert"]
    found = variables(fs, os_facts)
    return bool(render("{{ " + check["that"] + " }}", found)), " ".join(render(check["fail_msg"], found).split())


def test_amlfs_on_arm64_is_built_for_ubuntu_24_04_only() -> None:
    """Microsoft's matrix: only Ubuntu 24.04 ships arm64 AMLFS clients (ND GB200 v6 is arm64): its repository line names
    no architecture; 22.04 on arm64 is refused, named."""
    arm_24 = {**UBUNTU_24, "architecture": "aarch64"}
    assert architecture_preflight(AMLFS, arm_24)[0]
    assert plan(AMLFS, arm_24)["repository"] == AMLFS_REPO
    ok, message = architecture_preflight(AMLFS, {**UBUNTU_22, "architecture": "aarch64"})
    assert not ok
    assert "no amlfs client for aarch64 on Ubuntu 22.04: the provider builds it for x86_64 only there" in message
    assert architecture_preflight(AMLFS, UBUNTU_22)[0]
    assert architecture_preflight(FSX, {**UBUNTU_22, "architecture": "aarch64"})[0], "FSx builds Graviton clients too"


def key_problems(fs: dict[str, str], os_facts: dict[str, str], served: bytes) -> list[str]:
    check = task("cloud_fabric", "shared_fs.yml", "Shared file system | every key in the file is one of its pinned fingerprints")
    found = variables(fs, os_facts, _cloud_fabric_fs_key={"content": base64.b64encode(served).decode()})
    return list(render(check["vars"]["_problems"], found))


def test_microsofts_key_is_trusted_only_with_its_pinned_fingerprint() -> None:
    """A key file that is not Microsoft's (here the tests' own key) is refused, naming what it holds; pinned, it passes."""
    other = (Path(__file__).parent / "data" / "test-key.asc").read_bytes()
    [problem] = key_problems(AMLFS, ALMA_9, other)
    assert "3DDC1D98307B802BAB1029A8693EFF6594C2D8DE" in problem
    assert "https://packages.microsoft.com/keys/microsoft.asc" in problem
    pinned = {**variables(AMLFS, ALMA_9)["cloud_fabric_fs_clients"]}
    pinned["amlfs"]["AlmaLinux-9"] = {
        **pinned["amlfs"]["AlmaLinux-9"],
        "key": {**MICROSOFT_KEY, "dest": "/k.asc", "fingerprints": ["3DDC1D98307B802BAB1029A8693EFF6594C2D8DE"]},
    }
    check = task("cloud_fabric", "shared_fs.yml", "Shared file system | every key in the file is one of its pinned fingerprints")
    found = variables(AMLFS, ALMA_9, cloud_fabric_fs_clients=pinned, _cloud_fabric_fs_key={"content": base64.b64encode(other).decode()})
    assert list(render(check["vars"]["_problems"], found)) == []


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
