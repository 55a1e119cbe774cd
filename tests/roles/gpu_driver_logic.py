"""gpu_driver's plan and verify, rendered from the role's own files (tests/roles/role_logic.py) for a given OS, node
and set of registered results: shared by the plan goldens and the real-node replay."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from tests.roles.role_logic import render, role_vars, task

OS_FILES = {("Ubuntu", "22"): "Ubuntu-22.yml", ("Ubuntu", "24"): "Ubuntu-24.yml", ("Debian", "12"): "Debian-12.yml", ("Rocky", "9"): "RedHat-9.yml"}


def variables(os_facts: Mapping[str, str], *, dgx: bool = False, proc_version: str = "", **extravars: Any) -> dict[str, Any]:
    """What the plan task sees: role files, facts, the DGX stat and /proc read of preflight, inventory values."""
    os_file = OS_FILES[(os_facts["distribution"], os_facts["distribution_major_version"])]
    found = role_vars("gpu_driver", os_file)
    found.update(
        {
            "ansible_facts": dict(os_facts),
            "inventory_hostname": "gpu001",
            "ansible_check_mode": False,
            "__gpu_driver_dgx": {"stat": {"exists": dgx}},
            "__gpu_driver_running": {"content": base64.b64encode(proc_version.encode()).decode()} if proc_version else {"skipped": True},
        }
    )
    found.update(extravars)
    return found


def plan(os_facts: Mapping[str, str], *, dgx: bool = False, proc_version: str = "", **extravars: Any) -> dict[str, Any]:
    """``_gpu_driver_plan`` as the role's plan task sets it."""
    found = variables(os_facts, dgx=dgx, proc_version=proc_version, **extravars)
    step = task("gpu_driver", "plan.yml", "Plan | what this node gets")
    found.update(step["vars"])
    return render(step["ansible.builtin.set_fact"]["_gpu_driver_plan"], found)


def preflight_ok(os_facts: Mapping[str, str], **extravars: Any) -> bool:
    """Whether the role's preflight assert holds."""
    found = variables(os_facts, **extravars)
    step = task("gpu_driver", "preflight.yml", "Preflight | a supported OS, a driver branch")
    return all(render("{{ " + condition + " }}", found) for condition in step["ansible.builtin.assert"]["that"])


def verify(
    os_facts: Mapping[str, str],
    smi: str,
    proc_version: str,
    *,
    dgx: bool = False,
    peermem_loaded: bool = False,
    fm_packages: str = "",
    smi_rc: int = 0,
    smi_stderr: str = "",
    **extravars: Any,
) -> tuple[bool, str]:
    """The verify assert on these results: (passed, its message: success_msg or fail_msg)."""
    found = variables(os_facts, dgx=dgx, proc_version=proc_version, **extravars)
    step = task("gpu_driver", "plan.yml", "Plan | what this node gets")
    planned = render(step["ansible.builtin.set_fact"]["_gpu_driver_plan"], {**found, **step["vars"]})
    found.update(
        {
            "_gpu_driver_plan": planned,
            "__gpu_driver_smi": {"rc": smi_rc, "stdout": smi, "stdout_lines": smi.splitlines(), "stderr": smi_stderr},
            "__gpu_driver_proc_version": {"content": base64.b64encode(proc_version.encode()).decode()},
            "__gpu_driver_peermem_now": {"stat": {"exists": peermem_loaded}},
            "__gpu_driver_fm_version": {"rc": 0 if fm_packages else 1, "stdout": fm_packages, "stdout_lines": fm_packages.splitlines()}
            if fm_packages
            else {"skipped": True},
        }
    )
    check = task("gpu_driver", "verify.yml", "Verify | the GPUs, the driver, fabric manager")
    found.update(check["vars"])
    module = check["ansible.builtin.assert"]
    passed = all(render("{{ " + condition + " }}", found) for condition in module["that"])
    return passed, " ".join(str(render(module["success_msg" if passed else "fail_msg"], found)).split())
