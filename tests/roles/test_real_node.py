"""The real node's transcripts (tests/roles/data/real-node: an H200 VM, Ubuntu 24.04.3, driver 580.159.04 open module)
replayed through the roles' own verify logic: gpu_driver's nvidia-smi parsing and problem list, fabric_check's host
tuning report filter, host_tuning's verify message. What failed there is fixed here, and what was right stays right."""

from __future__ import annotations

from pathlib import Path

from tests.roles.gpu_driver_logic import verify
from tests.roles.role_logic import facts, render, role_vars, task

DATA = Path(__file__).parent / "data" / "real-node"
NOBLE = facts("Ubuntu", "24.04", "Debian", kernel="6.18.44-fc-v657-gpu", release="noble")


def output(name: str) -> str:
    """A transcript's command output: without its "$ command" line and its "rc=" line."""
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.startswith(("$ ", "rc="))) + "\n"


SMI = output("smi_query.txt")
PROC = output("proc_version.txt")


def test_the_transcripts_are_the_real_nodes() -> None:
    assert SMI == "0, 580.159.04, Enabled\n"
    assert "Open Kernel Module" in PROC
    assert 'VERSION_ID="24.04"' in output("os.txt")


def test_the_default_branch_passes_on_the_node() -> None:
    """verify-branch-default.txt failed: the default was 570, older than what the node (and DGX OS 7) runs."""
    passed, message = verify(NOBLE, SMI, PROC, gpufabric_gpus=1)
    assert passed, message
    assert message == "1 GPU(s) on driver branch 580, persistence mode on, GPUDirect dmabuf"  # as verify-branch-580.txt says


def test_branch_570_fails_naming_what_runs_and_what_was_expected() -> None:
    passed, message = verify(NOBLE, SMI, PROC, gpufabric_gpus=1, gpu_driver_branch="570")
    assert not passed
    assert "GPU 0: driver 580.159.04, persistence Enabled (expected branch 570, Enabled)" in message
    assert "GPU 0: driver 580.159.04, persistence Enabled (expected branch 570, Enabled)" in (DATA / "verify-branch-default.txt").read_text(
        encoding="utf-8"
    )


def test_the_proprietary_module_fails_dmabuf() -> None:
    passed, message = verify(NOBLE, SMI, PROC.replace("Open Kernel Module for x86_64", "x86_64 Kernel Module"), gpufabric_gpus=1)
    assert not passed
    assert "the loaded driver is not the open kernel module, which DMA-BUF needs (/proc/driver/nvidia/version)" in message


def test_on_dgx_os_7_the_running_stack_is_the_expectation_whatever_this_roles_branch() -> None:
    """G10: DGX OS 7 ships nvidia-driver-580-open; the node's stack is verified as it runs, not against gpu_driver_branch."""
    passed, message = verify(NOBLE, SMI, PROC, dgx=True, gpufabric_gpus=1, gpu_driver_branch="570")
    assert passed, message
    assert message == "1 GPU(s) on driver branch 580 (DGX OS 7, as it runs), persistence mode on, GPUDirect dmabuf"


def test_on_dgx_os_6_the_proprietary_550_server_driver_passes_through_nvidia_peermem() -> None:
    """DGX OS 6 ships nvidia-driver-550-server (proprietary) and loads nvidia-peermem (nvidia-peermem-loader); the same
    node without peermem loaded fails naming it. (smi and /proc lines in the formats of the real node, branch 550.)"""
    jammy = facts("Ubuntu", "22.04", "Debian", kernel="5.15.0-1063-nvidia", release="jammy")
    smi = "0, 550.163.01, Enabled\n1, 550.163.01, Enabled\n"
    proc = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.163.01  Release Build  (dvs-builder@U16-I3-B03-4-3)\n"
    passed, message = verify(jammy, smi, proc, dgx=True, gpufabric_gpus=2, peermem_loaded=True)
    assert passed, message
    assert message == "2 GPU(s) on driver branch 550 (DGX OS 6, as it runs), persistence mode on, GPUDirect peermem"
    passed, message = verify(jammy, smi, proc, dgx=True, gpufabric_gpus=2, peermem_loaded=False)
    assert not passed
    assert "nvidia-peermem is not loaded" in message


def test_fabric_manager_is_compared_by_upstream_version_under_both_names() -> None:
    """G-FM/G8: nvidia-fabricmanager-570 or nvidia-fabricmanager (580), revision -1 where the driver has -0ubuntu1."""
    assert verify(NOBLE, SMI, PROC, gpufabric_gpus=8, gpu_driver_expected_gpus=1, fm_packages="ii |580.159.04-1\n")[0]
    passed, message = verify(NOBLE, SMI, PROC, gpufabric_gpus=8, gpu_driver_expected_gpus=1, fm_packages="un |\nii |580.95.05-1\n")
    assert not passed
    assert "fabric manager 580.95.05-1 is not the driver 580.159.04 (it refuses to start)" in message


def test_nvidia_smi_failing_shows_its_stderr() -> None:
    passed, message = verify(
        NOBLE, "", PROC, gpufabric_gpus=1, smi_rc=9, smi_stderr="NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
    )
    assert not passed
    assert "gpu_driver on gpu001: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver." in message


def test_the_host_tuning_report_names_only_the_missing_setpci() -> None:
    """fabric_check's gpufabric_host_tuning_report over the node's host-tuning-read.sh output, with its defaults."""
    found = role_vars("fabric_check")
    found["fabric_check_host_tuning_read"] = {"stdout_lines": output("host_tuning.txt").splitlines()}
    report = render(found["fabric_check_host_tuning_report"], found)
    assert report["problems"] == ["setpci is not installed (pciutils): ACS, relaxed ordering and MaxReadReq could not be read"]


def test_host_tunings_verify_names_its_reason_when_the_script_writes_only_stderr() -> None:
    """verify-branch-580.txt: "host_tuning on gpu001: " and nothing else; the reason was on stderr."""
    check = task("host_tuning", "main.yml", "Verify | governors and ACS as planned")
    stderr = "/bin/bash: /usr/local/lib/gpufabric/host-tuning.sh: No such file or directory"
    result = {"rc": 127, "stdout": "", "stdout_lines": [], "stderr": stderr, "stderr_lines": [stderr]}
    message = render(check["ansible.builtin.assert"]["fail_msg"], {"inventory_hostname": "gpu001", "__host_tuning_verify": result})
    assert message == f"host_tuning on gpu001: {stderr}"
    assert "'host_tuning on gpu001: '" in (DATA / "verify-branch-580.txt").read_text(encoding="utf-8")
