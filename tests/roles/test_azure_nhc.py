"""Audit 2026-11 M8 (Azure node health checks) on a booted node: cloud_fabric runs the Azure node health checks the Azure
HPC image ships (``/opt/azurehpc/test/azurehpc-health-checks/run-health-checks.sh``) on an ND node, passes on its
"exit code: 0." log line, fails naming the failed check, and refuses a node whose image has no checks.

The script here stands in for AzNHC (its GPU/InfiniBand checks need the hardware): it takes the same ``-o LOG -v``
arguments and writes the same closing line azhpc-images' own validation greps for."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.roles.containers import booted
from tests.roles.scenario import changed, explain, failures
from tests.roles.test_cloud_fabric import UBUNTU_2204, plan_of, run

pytestmark = [pytest.mark.container, pytest.mark.skipif(os.geteuid() != 0, reason="containers need root (./dev test runs as root in CI)")]

HOST = "ndgb-01"
NHC = "/opt/azurehpc/test/azurehpc-health-checks/run-health-checks.sh"
FAIL_FLAG = "/etc/gpufabric-test-nhc-fails"
STAND_IN = f"""#!/bin/sh
log=/dev/null
while [ $# -gt 0 ]; do [ "$1" = -o ] && log=$2; shift; done
if [ -e {FAIL_FLAG} ]; then
  echo "ERROR:  nhc:  Health check failed:  check_gpu_count: Expected 4 GPUs, found 3" > "$log"
  echo "Health checks completed with exit code: 1." >> "$log"
  exit 1
fi
echo "Running health checks" > "$log"
echo "Health checks completed with exit code: 0." >> "$log"
"""


def azure_inventory(workdir: Path) -> Path:
    """An ND GB200 v6 node as the azure_rm inventory gives it (hostvar_expressions)."""
    node = {"gpufabric_target": "azure", "gpufabric_gpu_stack": "nd-ib", "gpufabric_gpu_nics": 4}
    path = workdir / "azure.json"
    path.write_text(json.dumps({"all": {"children": {"gpu_nodes": {"hosts": {HOST: node}}}}}), encoding="utf-8")
    return path


def test_azure_nd_node_runs_the_images_health_checks_and_fails_named_on_a_failed_check(tmp_path: Path) -> None:
    files = {NHC: (STAND_IN, 0o755), "/opt/microsoft/ndv5-topo.xml": ("<system/>\n", 0o644)}
    inventory = azure_inventory(tmp_path)
    with booted(HOST, tmp_path, private_network=True, files=files) as node:
        planned, events = run(inventory, node, tmp_path, UBUNTU_2204, check=True)
        assert planned.ok, explain(planned)
        assert plan_of(events)["health_checks"] == [NHC, "-o", "/var/log/gpufabric-aznhc.log", "-v"]

        healthy, _ = run(inventory, node, tmp_path, UBUNTU_2204, check=False)
        assert healthy.ok, explain(healthy)
        assert "exit code: 0." in node.read("/var/log/gpufabric-aznhc.log")
        again, _ = run(inventory, node, tmp_path, UBUNTU_2204, check=False)
        assert again.ok, explain(again)
        assert changed(again) == {HOST: 0}, "the checks read the node and change nothing"

        node.run(f"touch {FAIL_FLAG}")
        sick, _ = run(inventory, node, tmp_path, UBUNTU_2204, check=False)
        [(task, message)] = failures(sick)[HOST]
        assert task == "Verify | every Azure node health check passed"
        assert "Azure node health checks failed (run-health-checks.sh rc=1)" in message
        assert "check_gpu_count: Expected 4 GPUs, found 3" in message

        skipped, _ = run(inventory, node, tmp_path, UBUNTU_2204, check=False, cloud_fabric_azure_nhc=False)
        assert skipped.ok, explain(skipped)

        node.run(f"rm {NHC}")
        missing, _ = run(inventory, node, tmp_path, UBUNTU_2204, check=False)
        [(task, message)] = failures(missing)[HOST]
        assert task == "Verify | refuse a node without the health checks"
        assert f"{NHC} is missing" in message
