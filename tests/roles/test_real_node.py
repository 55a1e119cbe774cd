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


SESSION = DATA / "2026-11-27"


def test_the_session_run_gave_each_verdict_with_its_reason() -> None:
    """ci/real-node/run.sh on the node with main's roles: each run's last line is its rc, each failure names why."""
    rc = {p.stem: p.read_text(encoding="utf-8").rstrip().splitlines()[-1] for p in SESSION.glob("*.txt") if p.stem != "node"}
    assert rc["verify-gpu_driver_verify"] == "rc=0"
    assert all(v == "rc=2" for k, v in rc.items() if k != "verify-gpu_driver_verify"), rc
    text = {p.stem: p.read_text(encoding="utf-8") for p in SESSION.glob("*.txt")}
    assert "1 GPU(s) on driver branch 580, persistence mode on, GPUDirect dmabuf" in text["verify-gpu_driver_verify"]
    assert "(expected branch 570, Enabled)" in text["verify-gpu_driver-branch-570"]
    assert "check mode needs python3-apt, which is missing, and installing it failed" in text["site-check"]
    assert "Fix: install it on the node" in text["site-check"]
    assert "host_tuning on gpu001: /bin/bash: /usr/local/sbin/gpufabric-host-tuning: No" in text["verify-host_tuning_verify"]


def test_the_rdma_stack_verify_names_the_missing_tools() -> None:
    """That run's rdma_stack failure said only "non-zero return code" (`which ibv_devinfo ibstat`, rc 1, nothing on
    stdout, on a node with inbox rdma-core libraries but no tools): the assert now names both tools and the fix."""
    assert "msg: non-zero return code" in (SESSION / "verify-rdma_stack_verify.txt").read_text(encoding="utf-8")
    check = task("rdma_stack", "verify.yml", "Verify | the verbs tools are installed")
    variables = {
        "inventory_hostname": "gpu001",
        "__rdma_stack_tools": {"rc": 1, "stdout": "", "stderr": ""},
        "_rdma_stack_plan": {"source": "inbox"},
    }
    assert check["ansible.builtin.assert"]["that"] == "__rdma_stack_tools.rc == 0"
    message = render(check["ansible.builtin.assert"]["fail_msg"], variables)
    assert "ibv_devinfo and ibstat" in message
    assert "not found (which: rc 1)" in message
    found = render(
        check["ansible.builtin.assert"]["fail_msg"], variables | {"__rdma_stack_tools": {"rc": 1, "stdout": "/usr/bin/ibv_devinfo\n", "stderr": ""}}
    )
    assert "rdma_stack on gpu001: ibstat" in found
