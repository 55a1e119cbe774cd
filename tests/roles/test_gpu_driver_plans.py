"""The packages, repositories and keys gpu_driver plans on each OS, rendered from the role's own plan task and its
per-branch name table (roles/gpu_driver/vars/main.yml), one golden file per OS under data/golden/gpu_driver/. Check
mode on a booted node prints the same plan (test_os_plans.py); here every OS and branch is fast and needs no root."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import check_golden
from tests.roles.gpu_driver_logic import plan, preflight_ok
from tests.roles.role_logic import facts, render, role_vars

GOLDEN = Path(__file__).parent / "data" / "golden" / "gpu_driver"
OPEN_580 = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (dvs-builder@U22-I3-AF03-09-1)\n"

CASES = {
    # DGX H100 on DGX OS 6 (Ubuntu 22.04): nvidia-driver-550-server, proprietary, so nvidia-peermem; nothing installed
    "dgx-os-6": (facts("Ubuntu", "22.04", "Debian", kernel="5.15.0-1063-nvidia", release="jammy"), {"dgx": True, "gpufabric_hardware": "dgx-h100"}),
    # DGX B200 on DGX OS 7 (Ubuntu 24.04), the running module read from /proc: open, so DMA-BUF
    "dgx-os-7": (
        facts("Ubuntu", "24.04", "Debian", kernel="6.8.0-1017-nvidia", release="noble"),
        {"dgx": True, "proc_version": OPEN_580, "gpufabric_hardware": "dgx-b200"},
    ),
    "ubuntu-2204-hgx-h100": (facts("Ubuntu", "22.04", "Debian", kernel="5.15.0-126-generic", release="jammy"), {"gpufabric_hardware": "hgx-h100"}),
    "ubuntu-2404-hgx-b200": (facts("Ubuntu", "24.04", "Debian", kernel="6.8.0-45-generic", release="noble"), {"gpufabric_hardware": "hgx-b200"}),
    "ubuntu-2204-hgx-h100-branch-570": (
        facts("Ubuntu", "22.04", "Debian", kernel="5.15.0-126-generic", release="jammy"),
        {"gpufabric_hardware": "hgx-h100", "gpu_driver_branch": "570"},
    ),
    "rhel-9-hgx-b200": (facts("Rocky", "9.4", "RedHat", kernel="5.14.0-427.13.1.el9_4.x86_64"), {"gpufabric_hardware": "hgx-b200"}),
    "debian-12-hgx-h100": (facts("Debian", "12.7", "Debian", kernel="6.1.0-26-amd64", release="bookworm"), {"gpufabric_hardware": "hgx-h100"}),
}


def planned(case: str) -> dict[str, object]:
    os_facts, options = CASES[case]
    return plan(os_facts, gpufabric_gpus=8, gpufabric_rdma_stack="doca", **options)


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_os_plan_matches_its_golden(case: str, update_golden: bool) -> None:
    text = yaml.safe_dump(planned(case), sort_keys=False, width=200)
    check_golden(GOLDEN / f"{case}.yaml", text, update_golden)


def test_dgx_os_installs_nothing_and_takes_its_own_stack_as_the_expectation() -> None:
    for case, open_modules, gpudirect in [("dgx-os-6", False, "peermem"), ("dgx-os-7", True, "dmabuf")]:
        got = planned(case)
        assert (got["driver"], got["repository"], got["pinning"], got["fabricmanager"], got["nvlsm"]) == ([], {}, [], "", []), case
        assert got["gpudirect"] == gpudirect, case
        assert isinstance(got["dgx_os"], dict)
        assert got["dgx_os"]["open_kernel_modules"] is open_modules
    assert planned("dgx-os-6")["dgx_os"]["packages"][0] == "nvidia-driver-550-server"  # type: ignore[index]
    assert planned("dgx-os-7")["dgx_os"]["packages"][0] == "nvidia-driver-580-open"  # type: ignore[index]
    # DGX OS 7 with a proprietary module loaded (its /proc says so): nvidia-peermem, whatever the release ships
    os_facts, options = CASES["dgx-os-7"]
    proprietary = plan(
        os_facts, gpufabric_gpus=8, **{**options, "proc_version": OPEN_580.replace("Open Kernel Module for x86_64", "x86_64 Kernel Module")}
    )
    assert proprietary["gpudirect"] == "peermem"


@pytest.mark.parametrize(
    ("branch", "fabricmanager", "nvlsm", "pinning", "driver"),
    [
        ("570", "nvidia-fabricmanager-570", "nvlink5-570", [], "nvidia-open-570"),
        ("575", "nvidia-fabricmanager-575", "nvlink5-575", [], "nvidia-open-575"),
        ("580", "nvidia-fabricmanager", "nvlsm", ["nvidia-driver-pinning-580"], "nvidia-open"),
        ("590", "nvidia-fabricmanager", "nvlsm", ["nvidia-driver-pinning-590"], "nvidia-open"),
    ],
)
def test_apt_names_per_branch(branch: str, fabricmanager: str, nvlsm: str, pinning: list[str], driver: str) -> None:
    """G8: from 580 fabric manager, NSCQ and NVLSM lose the branch suffix and NVIDIA's pinning package holds the branch."""
    got = plan(CASES["ubuntu-2404-hgx-b200"][0], gpufabric_gpus=8, gpufabric_hardware="hgx-b200", gpu_driver_branch=branch)
    assert got["driver"] == [driver]
    assert got["fabricmanager"] == f"{fabricmanager}=<the driver upstream version>-*"
    assert got["nvlsm"] == [nvlsm, "libibumad3", "infiniband-diags"]
    assert got["pinning"] == pinning
    assert got["pin"]["version"] == f"{branch}.*"  # type: ignore[index]
    assert fabricmanager in got["pin"]["packages"]  # type: ignore[index]


def test_el9_uses_the_module_stream_and_its_own_key_not_the_apt_one() -> None:
    """G3: NVIDIA's RHEL repositories sign with D42D0685.pub; no fingerprint is pinned (the install refuses without one)."""
    got = planned("rhel-9-hgx-b200")
    assert got["driver"] == ["@nvidia-driver:580-open/fm"]
    assert got["repository"]["key_url"].endswith("/rhel9/x86_64/D42D0685.pub")  # type: ignore[index]
    assert got["repository"]["key_fingerprint"] == ""  # type: ignore[index]
    pinned = plan(CASES["rhel-9-hgx-b200"][0], gpufabric_gpus=8, gpu_driver_key_fingerprint="0123456789abcdef0123456789ABCDEF01234567")
    assert pinned["repository"]["key_fingerprint"] == "0123456789ABCDEF0123456789ABCDEF01234567"  # type: ignore[index]


def test_debian_gets_contrib_from_its_release() -> None:
    assert planned("debian-12-hgx-h100")["components"] == ["deb http://deb.debian.org/debian bookworm contrib"]
    assert planned("ubuntu-2404-hgx-b200")["components"] == []


@pytest.mark.parametrize(
    ("installed", "spec"),
    [
        ("570.133.20-0ubuntu1", "nvidia-fabricmanager-570=570.133.20-*"),  # Ubuntu's CUDA repo: the driver's revision (R-cuda-ver)
        ("570.148.08-1ubuntu1", "nvidia-fabricmanager-570=570.148.08-*"),
        ("570.172.08-1", "nvidia-fabricmanager-570=570.172.08-*"),  # Debian 12: both -1
        ("1:570.172.08-1", "nvidia-fabricmanager-570=570.172.08-*"),
    ],
)
def test_fabric_manager_follows_the_drivers_upstream_version_not_its_revision(installed: str, spec: str) -> None:
    """G-FM: fabric manager is 570.133.20-1 where the driver is 570.133.20-0ubuntu1; the pin takes any revision."""
    found = role_vars("gpu_driver")
    found["_gpu_driver_plan"] = planned("ubuntu-2204-hgx-h100-branch-570")
    found["__gpu_driver_version"] = {"stdout": installed}
    assert render(found["_gpu_driver_fm_spec"], found) == spec


def test_preflight_takes_a_branch_the_table_names() -> None:
    noble = CASES["ubuntu-2404-hgx-b200"][0]
    assert preflight_ok(noble, gpufabric_gpus=8)
    assert preflight_ok(noble, gpufabric_gpus=8, gpu_driver_branch="550")
    assert not preflight_ok(noble, gpufabric_gpus=8, gpu_driver_branch="520")  # before the table's first row
    assert not preflight_ok(noble, gpufabric_gpus=8, gpu_driver_branch="58")


def test_the_default_branch_is_580() -> None:
    assert role_vars("gpu_driver")["gpu_driver_branch"] == "580"
