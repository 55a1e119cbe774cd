"""gpu_driver run without rdma_stack in the play takes the RDMA stack the definition gives the node (doca on RoCE
groups, as rdma_stack would), never a silent inbox: planned in check mode on the test machine (facts replaced, only the
preflight and plan tasks run, nothing is written)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.roles.scenario import site
from tests.roles.test_bond_files import plan_run

pytestmark = pytest.mark.slow  # one ansible-playbook run per test

# Linux 5.10: below DMA-BUF's 5.12, so GPUDirect RDMA can only be nvidia-peermem, which needs DOCA's peer-memory API
DEBIAN_12_ON_5_10 = {
    "distribution": "Debian",
    "distribution_version": "12.7",
    "distribution_major_version": "12",
    "os_family": "Debian",
    "architecture": "x86_64",
    "kernel": "5.10.0-32-amd64",
}


def gpu_plan(tmp_path: Path, example: str, host: str, **hostvars: object) -> tuple[Any, dict[str, Any], list[str]]:
    """The run, the plan gpu_driver shows, and the messages of failed tasks."""
    result, events = plan_run(tmp_path, site(example), host, DEBIAN_12_ON_5_10, role="gpu_driver", hostvars=hostvars, tags="gpu_driver_plan_only")
    shown = [e["event_data"]["res"] for e in events if e.get("event") == "runner_on_ok" and e["event_data"].get("task") == "Plan | show it"]
    failed = [str(e["event_data"]["res"].get("msg", "")) for e in events if e.get("event") == "runner_on_failed"]
    return result, shown[0]["_gpu_driver_plan"] if shown else {}, failed


def test_a_roce_node_planned_by_gpu_driver_alone_gets_docas_peermem_not_inbox(tmp_path: Path) -> None:
    result, plan, _ = gpu_plan(tmp_path, "onprem-roce", "gpu001")
    assert result.ok, result.output_tail
    assert plan["gpudirect"] == "peermem"  # gpufabric_rdma_stack: doca (RoCE compute ports); inbox would give 'none'


def test_an_inbox_node_asked_for_peermem_is_refused_with_the_reason(tmp_path: Path) -> None:
    result, _, failed = gpu_plan(tmp_path, "onprem-ib", "dgx01", gpu_driver_gpudirect="peermem")  # IB site: inbox by default
    assert not result.ok
    [message] = failed
    assert "GPUDirect peermem is not possible here: nvidia-peermem needs DOCA/MLNX_OFED" in message
