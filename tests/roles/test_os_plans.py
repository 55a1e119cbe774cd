"""What each supported OS gets, in check mode: one booted bookworm container stands in for Debian 12, Ubuntu 22.04/24.04
(with and without /etc/dgx-release: DGX OS 6/7) and Rocky 9 by replacing the gathered OS facts. Their archives cannot
be reached here, so the tests assert each role's plan and the exact files, repositories and pins check mode would
write, and that nothing was written. An unsupported OS and a DOCA release NVIDIA publishes no such directory for fail
in preflight, naming the problem."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT
from tests.roles.containers import Container, bookworm_image, booted
from tests.roles.scenario import converge, explain, failures, role_playbook, site

pytestmark = [pytest.mark.container, pytest.mark.skipif(os.geteuid() != 0, reason="containers need root (./dev test runs as root in CI)")]

CUDA = "https://developer.download.nvidia.com/compute/cuda/repos"
DOCA = "https://linux.mellanox.com/public/repo/doca"
GPU_DRIVER_GOLDEN = Path(__file__).parent / "data" / "golden" / "gpu_driver"
# NVIDIA publishes no quotable fingerprint of its RHEL key (D42D0685.pub): an EL run sets one (any, check mode fetches nothing)
EL_FINGERPRINT = "0123456789ABCDEF0123456789ABCDEF01234567"


def os_facts(distribution: str, version: str, family: str, *, arch: str = "x86_64", kernel: str = "6.8.0-45-generic") -> dict[str, str]:
    return {
        "distribution": distribution,
        "distribution_version": version,
        "distribution_major_version": version.split(".", maxsplit=1)[0],
        "os_family": family,
        "architecture": arch,
        "kernel": kernel,
    }


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Container]:
    """gpu001 of the RoCE site, no network at all: check mode must not need NVIDIA's repositories."""
    bookworm_image()
    # as on RHEL: the kernel exclude goes into dnf.conf, repositories into /etc/yum.repos.d
    files = {"/etc/dnf/dnf.conf": ("[main]\ngpgcheck=1\n", 0o644), "/etc/yum.repos.d/.keep": ("", 0o644)}
    with booted("gpu001", tmp_path_factory.mktemp("os"), private_network=True, files=files) as container:
        yield container


def plan(node: Container, tmp_path: Path, facts: Mapping[str, str], *, dgx: bool = False, **extravars: object) -> tuple[Any, Any]:
    """Run rdma_stack and gpu_driver in check mode as ``facts``' OS; return (result, events)."""
    node.run("echo 'DGX_NAME=\"DGX Server\"' > /etc/dgx-release" if dgx else "rm -f /etc/dgx-release")
    play = role_playbook(tmp_path, "rdma_stack", "gpu_driver", os_facts=facts)
    # the faked architecture is the profile's too: both roles' preflight refuses a node whose CPU differs from its profile
    extravars.setdefault("gpufabric_arch", "arm64" if facts.get("architecture") == "aarch64" else "x86_64")
    return converge(site("onprem-roce"), [node], play, tmp_path, check=True, extravars={"rdma_stack_source": "doca", **extravars})


def PLAYBOOK_BINDINGS(tmp_path: Path, **variables: str) -> Path:  # noqa: N802 - reads as the playbook it writes
    """site.yml's check-mode pre-tasks alone (playbooks/tasks/check_mode_bindings.yml), behind the container guard."""
    path = tmp_path / "play-bindings.yml"
    tasks = [
        {"name": "Never the test machine itself", "ansible.builtin.assert": {"that": "ansible_facts.virtualization_type == 'container'"}},
        {"name": "Check mode works on a stock node", "ansible.builtin.import_tasks": str(ROOT / "playbooks" / "tasks" / "check_mode_bindings.yml")},
    ]
    path.write_text(json.dumps([{"name": "bindings", "hosts": "all", "vars": variables, "tasks": tasks}]), encoding="utf-8")
    return path


def written(node: Container) -> list[str]:
    paths = ("etc/apt/sources.list.d", "etc/apt/preferences.d", "etc/yum.repos.d", "etc/apt/keyrings", "etc/gpufabric", "etc/modprobe.d")
    return sorted(str(p.relative_to(node.root)) for d in paths for p in (node.root / d).glob("gpufabric*"))


def test_ubuntu_2204_gets_docas_per_release_repository_the_cuda_repository_and_per_package_pins(node: Container, tmp_path: Path) -> None:
    result, events = plan(node, tmp_path, os_facts("Ubuntu", "22.04", "Debian", kernel="5.15.0-126-generic"))
    assert result.ok, explain(result)
    [rdma] = events.results("Plan | show it")[:1]
    assert rdma["_rdma_stack_plan"] == {
        "os": "Ubuntu 22.04",
        "dgx": False,
        "source": "doca",
        "remove_mlnx_ofed": False,
        "installed_ofed": "",
        "packages": ["doca-ofed"],
        "repository": {
            "url": f"{DOCA}/3.2.1/ubuntu22.04/x86_64/",
            "key_url": f"{DOCA}/GPG-KEY-Mellanox.pub",
            "key_fingerprint": "A024F6F0E6D6A281",
            "keyring": "/etc/apt/keyrings/gpufabric-doca.asc",
            "apt_line": f"deb [signed-by=/etc/apt/keyrings/gpufabric-doca.asc] {DOCA}/3.2.1/ubuntu22.04/x86_64/ ./",
            "pin": rdma["_rdma_stack_plan"]["repository"]["pin"],
        },
        "hold": [
            "linux-image-5.15.0-126-generic",
            "linux-headers-5.15.0-126-generic",
            "linux-modules-5.15.0-126-generic",
            "linux-modules-extra-5.15.0-126-generic",
            "linux-generic",
            "linux-image-generic",
            "linux-headers-generic",
            "linux-generic-hwe-22.04",
            "linux-image-generic-hwe-22.04",
            "linux-headers-generic-hwe-22.04",
            "linux-nvidia",
            "linux-image-nvidia",
            "linux-headers-nvidia",
        ],
        "unhold": [],
        "on_new_modules": "reboot",  # the default: NVIDIA's steps reboot after installing doca-ofed (R7)
        "firmware_update": False,  # DOCA's FW-Updater flashes nothing unless asked (RDMA-13)
    }
    pin = rdma["_rdma_stack_plan"]["repository"]["pin"]
    assert (pin["origin"], pin["priority"]) == ("linux.mellanox.com", 990)
    assert "*" not in pin["packages"]
    assert "rdma-core" in pin["packages"]
    [repo] = events.results("DOCA repository, one version")
    assert repo["changed"]
    assert repo["repo"] == rdma["_rdma_stack_plan"]["repository"]["apt_line"]
    [doca_pin] = events.results("DOCA's packages win")
    after = doca_pin["diff"][0]["after"]
    assert 'Pin: origin "linux.mellanox.com"\nPin-Priority: 990\n' in after
    assert after.splitlines()[1].startswith("Package: rdma-core ibverbs-providers ")

    [gpu] = [r for r in events.results("Plan | show it") if "_gpu_driver_plan" in r]
    # the plan the role prints on the node is the golden rendered from its files (test_gpu_driver_plans.py)
    assert gpu["_gpu_driver_plan"] == yaml.safe_load((GPU_DRIVER_GOLDEN / "ubuntu-2204-hgx-h100.yaml").read_text(encoding="utf-8"))
    assert gpu["_gpu_driver_plan"]["gpudirect"] == "dmabuf"  # open modules on 5.15: DMA-BUF, NVIDIA's recommendation
    [driver_pin] = events.results("pin the driver branch")
    assert "Pin: version 580.*\nPin-Priority: 990\n" in driver_pin["diff"][0]["after"]
    [dropin] = events.results("persistenced keeps persistence mode on")
    assert "ExecStart=\nExecStart=/usr/bin/nvidia-persistenced --user root --persistence-mode --verbose\n" in dropin["diff"][0]["after"]
    [peermem] = events.results("nvidia-peermem loaded at boot only where")
    assert peermem.get("skipped")  # DMA-BUF: no nvidia-peermem at boot
    assert written(node) == []


def test_ubuntu_2404_on_grace_gets_the_sbsa_and_arm64_sbsa_repositories(node: Container, tmp_path: Path) -> None:
    result, events = plan(node, tmp_path, os_facts("Ubuntu", "24.04", "Debian", arch="aarch64"), gpu_driver_gpudirect="peermem")
    assert result.ok, explain(result)
    rdma, gpu = (r for r in events.results("Plan | show it"))
    assert rdma["_rdma_stack_plan"]["repository"]["url"] == f"{DOCA}/3.2.1/ubuntu24.04/arm64-sbsa/"
    assert gpu["_gpu_driver_plan"]["repository"]["url"] == f"{CUDA}/ubuntu2404/sbsa/"
    assert gpu["_gpu_driver_plan"]["gpudirect"] == "peermem"  # allowed: DOCA has the peer-memory API
    [peermem] = events.results("nvidia-peermem loaded at boot only where")
    assert peermem["changed"]
    assert peermem["diff"][0]["after"].endswith("nvidia-peermem\n")


@pytest.mark.parametrize(("version", "kernel"), [("22.04", "5.15.0-1063-nvidia"), ("24.04", "6.8.0-1017-nvidia")])
def test_dgx_os_is_verified_and_never_gets_a_driver_or_doca_over_its_own_stack(node: Container, tmp_path: Path, version: str, kernel: str) -> None:
    result, events = plan(node, tmp_path, os_facts("Ubuntu", version, "Debian", kernel=kernel), dgx=True)
    assert result.ok, explain(result)
    rdma, gpu = (r for r in events.results("Plan | show it"))
    assert rdma["_rdma_stack_plan"]["source"] == "dgx"
    assert (rdma["_rdma_stack_plan"]["packages"], rdma["_rdma_stack_plan"]["repository"]) == ([], {})
    assert gpu["_gpu_driver_plan"]["dgx"] is True
    assert (gpu["_gpu_driver_plan"]["driver"], gpu["_gpu_driver_plan"]["repository"], gpu["_gpu_driver_plan"]["fabricmanager"]) == ([], {}, "")
    for task in ("DOCA repository, one version", "the CUDA repository", "Install | the driver", "nouveau never binds"):
        assert all(r.get("skipped") for r in events.results(task)), task
    [dropin] = events.results("persistenced keeps persistence mode on")  # our settings still apply
    assert dropin["changed"]
    assert written(node) == []


def test_rocky_9_gets_the_rhel9_repositories_the_driver_module_stream_and_a_dnf_kernel_exclude(node: Container, tmp_path: Path) -> None:
    result, events = plan(
        node, tmp_path, os_facts("Rocky", "9.4", "RedHat", kernel="5.14.0-427.13.1.el9_4.x86_64"), gpu_driver_key_fingerprint=EL_FINGERPRINT
    )
    assert result.ok, explain(result)
    rdma, gpu = (r for r in events.results("Plan | show it"))
    assert rdma["_rdma_stack_plan"]["repository"]["url"] == f"{DOCA}/3.2.1/rhel9/x86_64/"
    assert rdma["_rdma_stack_plan"]["repository"]["keyring"] == "/etc/pki/rpm-gpg/gpufabric-doca.asc"
    [yum] = events.results("DOCA repository, one version")
    assert yum["changed"]
    [exclude] = events.results("keep kernel packages out of upgrades")
    assert exclude["changed"]
    assert "excludepkgs=kernel,kernel-core,kernel-modules,kernel-modules-core,kernel-devel,kernel-headers" in exclude["diff"][0]["after"]
    assert gpu["_gpu_driver_plan"]["repository"]["url"] == f"{CUDA}/rhel9/x86_64/"
    assert gpu["_gpu_driver_plan"]["driver"] == ["@nvidia-driver:580-open/fm"]
    assert gpu["_gpu_driver_plan"]["repository"]["key_url"] == f"{CUDA}/rhel9/x86_64/D42D0685.pub"  # not the apt key (G3)
    assert gpu["_gpu_driver_plan"]["pin"] == {}
    assert (node.root / "etc/dnf/dnf.conf").read_text() == "[main]\ngpgcheck=1\n"
    assert written(node) == []


def test_a_planned_kernel_upgrade_releases_the_hold(node: Container, tmp_path: Path) -> None:
    result, events = plan(
        node,
        tmp_path,
        os_facts("Rocky", "9.4", "RedHat", kernel="5.14.0-427.13.1.el9_4.x86_64"),
        rdma_stack_kernel_upgrade=True,
        gpu_driver_key_fingerprint=EL_FINGERPRINT,
    )
    assert result.ok, explain(result)
    [rdma, _] = events.results("Plan | show it")
    assert rdma["_rdma_stack_plan"]["hold"] == []
    assert "kernel-core" in rdma["_rdma_stack_plan"]["unhold"]


@pytest.mark.parametrize(
    "facts",
    [
        os_facts("Ubuntu", "20.04", "Debian", kernel="5.4.0-200-generic"),
        os_facts("Rocky", "8.9", "RedHat", kernel="4.18.0-513.5.1.el8_9.x86_64"),  # EL 8: no vars/RedHat-8.yml
    ],
    ids=["ubuntu-20.04", "rocky-8.9"],
)
def test_an_unsupported_os_fails_in_preflight_naming_it_and_the_supported_ones(node: Container, tmp_path: Path, facts: dict[str, str]) -> None:
    result, _ = plan(node, tmp_path, facts)
    [(task, message)] = failures(result)["gpu001"]
    assert task == "Preflight | a supported OS and architecture"
    assert f"{facts['distribution']} {facts['distribution_version']} ({facts['os_family']}, x86_64) is not supported" in message
    assert "Supported: Debian 12, Ubuntu 22.04 (DGX OS 6), Ubuntu 24.04 (DGX OS 7), RHEL/Rocky 9" in message


def test_doca_before_32_needs_the_minor_release_directory(node: Container, tmp_path: Path) -> None:
    facts = os_facts("Debian", "12.7", "Debian", kernel="6.1.0-26-amd64")
    result, _ = plan(node, tmp_path, facts, rdma_stack_doca_version="2.9.1")
    [(task, message)] = failures(result)["gpu001"]
    assert task == "Preflight | a known source and a DOCA repository NVIDIA publishes"
    assert "set rdma_stack_doca_os_release, e.g. debian12.5" in message
    result, events = plan(node, tmp_path, facts, rdma_stack_doca_version="2.9.0", rdma_stack_doca_os_release="debian12.5")
    assert result.ok, explain(result)
    assert events.results("Plan | show it")[0]["_rdma_stack_plan"]["repository"]["url"] == f"{DOCA}/2.9.0/debian12.5/x86_64/"


NVLINK5_OSES = [
    (os_facts("Debian", "12.7", "Debian", kernel="6.1.0-26-amd64"), ["nvlsm", "libibumad3", "infiniband-diags"]),  # 580: nvlsm (G8)
    (os_facts("Ubuntu", "22.04", "Debian", kernel="5.15.0-126-generic"), ["nvlsm", "libibumad3", "infiniband-diags"]),
    (os_facts("Ubuntu", "24.04", "Debian", arch="aarch64"), ["nvlsm", "libibumad3", "infiniband-diags"]),
    (os_facts("Rocky", "9.4", "RedHat", kernel="5.14.0-427.13.1.el9_4.x86_64"), ["nvlink5-580", "libibumad", "infiniband-diags"]),
]


def test_b200_nodes_get_the_nvlink_subnet_manager_beside_fabric_manager_on_every_os(node: Container, tmp_path: Path) -> None:
    """DGX/HGX B200 (NVLink 5): nvlink5-<branch> and NVLSM's prerequisites, on every OS, pinned with the driver branch;
    fabric manager's unit starts NVLSM (no unit of its own). On DGX OS nothing is installed; a branch before 570 is refused."""
    for facts, packages in NVLINK5_OSES:
        result, events = plan(node, tmp_path, facts, gpufabric_hardware="dgx-b200", gpu_driver_key_fingerprint=EL_FINGERPRINT)
        assert result.ok, (facts["distribution"], explain(result))
        [gpu] = [r for r in events.results("Plan | show it") if "_gpu_driver_plan" in r]
        assert gpu["_gpu_driver_plan"]["nvlsm"] == packages, facts["distribution"]
        assert gpu["_gpu_driver_plan"]["fabricmanager"], facts["distribution"]
        assert gpu["_gpu_driver_plan"]["services"] == ["nvidia-persistenced.service", "nvidia-fabricmanager.service"]
        if facts["os_family"] == "Debian":
            assert "nvlsm" in gpu["_gpu_driver_plan"]["pin"]["packages"]
    result, events = plan(node, tmp_path, NVLINK5_OSES[1][0], dgx=True, gpufabric_hardware="dgx-b200")
    assert result.ok, explain(result)
    [gpu] = [r for r in events.results("Plan | show it") if "_gpu_driver_plan" in r]
    assert gpu["_gpu_driver_plan"]["nvlsm"] == []  # DGX OS ships it
    result, _ = plan(node, tmp_path, NVLINK5_OSES[1][0], gpufabric_hardware="dgx-b200", gpu_driver_branch="560")
    [(task, message)] = failures(result)["gpu001"]
    assert task == "Preflight | a supported OS, a driver branch, a GPUDirect path"
    assert "NVLink 5 hardware (dgx-b200) needs branch 570 or later" in message
    assert written(node) == []


def test_el9_refuses_to_trust_a_cuda_key_without_a_pinned_fingerprint(node: Container, tmp_path: Path) -> None:
    """G3: NVIDIA's RHEL key is D42D0685.pub and gpufabric pins no fingerprint for it; the install stops before any
    download, naming the key and the variable to set."""
    result, _ = plan(node, tmp_path, os_facts("Rocky", "9.4", "RedHat", kernel="5.14.0-427.13.1.el9_4.x86_64"))
    [(task, message)] = failures(result)["gpu001"]
    assert task == "Install | a pinned fingerprint for this OS's repository key (RHEL 9 has none by default, G3)"
    assert f"{CUDA}/rhel9/x86_64/D42D0685.pub" in message
    assert "set gpu_driver_key_fingerprint" in message
    assert written(node) == []


def test_check_mode_on_a_node_with_the_bindings_changes_nothing_for_them(node: Container, tmp_path: Path) -> None:
    """site.yml's pre-task: python3-apt is importable in the image, so check mode goes on without installing anything."""
    result, events = converge(site("onprem-roce"), [node], PLAYBOOK_BINDINGS(tmp_path), tmp_path, check=True)
    assert result.ok, explain(result)
    [probe] = events.results("Check mode | the package manager's Python bindings are importable")
    assert probe["rc"] == 0
    assert all(r.get("skipped") for r in events.results("Check mode | install them"))


def test_check_mode_installs_missing_bindings_first(node: Container, tmp_path: Path) -> None:
    """The bindings reported missing (a probe interpreter that cannot import them): check mode installs them with
    apt-get before any role needs them (here they are in the image, so apt-get succeeds offline)."""
    play = PLAYBOOK_BINDINGS(tmp_path, gpufabric_bindings_python="/bin/false")
    result, events = converge(site("onprem-roce"), [node], play, tmp_path, check=True)
    assert result.ok, explain(result)
    [install] = events.results("Check mode | install them")
    assert install["rc"] == 0
    assert install["cmd"][:3] == ["apt-get", "install", "-y"]
