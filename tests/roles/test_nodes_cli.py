"""``python -m fabric nodes``: refusal of bad input before anything runs, and the per-host verdict of a failed run.

The failed run reaches for SSH on 127.0.0.1 port 1 (refused at once): nothing leaves the machine."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.conftest import ROOT
from tests.roles.scenario import BIN, ENV


def nodes(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "python"), "-m", "fabric", "nodes", *args],
        cwd=ROOT,
        env={**ENV, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_an_invalid_definition_exits_2_with_the_report_and_runs_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "cluster.yaml"
    bad.write_text((ROOT / "inventories" / "onprem-roce" / "cluster.yaml").read_text().replace("priority: 3\n", "priority: 9\n", 1))
    done = nodes(str(bad))
    assert done.returncode == 2
    assert f"{bad}:" in done.stderr
    assert "roce.priority" in done.stderr
    assert "Gathering Facts" not in done.stderr
    assert not done.stdout


def test_a_missing_extra_inventory_is_refused_before_anything_runs() -> None:
    done = nodes("inventories/onprem-roce/cluster.yaml", "-i", "no/such/containers.yml")
    assert done.returncode == 2
    assert "no such inventory: no/such/containers.yml" in done.stderr


def test_a_cloud_definition_is_refused_with_the_way_to_run_it() -> None:
    done = nodes("inventories/aws-p5/cluster.yaml")
    assert done.returncode == 2
    assert "inventories/aws-p5/cluster.yaml:4: error: target: nodes prepares bare-metal nodes" in done.stderr
    assert "ansible_inventory" in done.stderr


def test_an_unreachable_host_fails_the_run_and_the_table_says_who_failed_and_who_never_ran() -> None:
    unreachable = ["-e", "ansible_host=127.0.0.1", "-e", "ansible_port=1", "--tags", "rdma_stack_verify"]
    done = nodes("inventories/onprem-roce/cluster.yaml", "--limit", "gpu001,gpu002", *unreachable)
    assert done.returncode == 1
    rows = {line.split("│")[1].strip(): line for line in done.stdout.splitlines() if line.startswith("│")}
    assert "Connection refused" in rows["gpu001"]
    assert [cell.strip() for cell in rows["gpu001"].split("│")[2:7]] == ["0", "0", "0", "1", "0"]
    assert "not run" in rows["gpu002"]  # serial 25 %: gpu001's batch failed beyond max_fail_percentage, so gpu002 never ran
    assert "0/2 hosts succeeded; failed: gpu001; not run" in done.stdout
    assert "gpu001           unreachable" in done.stderr  # the live progress stream

    as_json = nodes("inventories/onprem-roce/cluster.yaml", "--limit", "gpu001", *unreachable, "--json")
    assert as_json.returncode == 1
    data = json.loads(as_json.stdout)
    assert data["ok"] is False
    assert data["hosts"]["gpu001"]["unreachable"] == 1
    assert data["hosts"]["gpu001"]["failures"][0]["task"] == "Gathering Facts"


def test_without_the_ansible_project_nodes_exits_2_with_the_fix(tmp_path: Path, monkeypatch, capsys) -> None:
    """Neither a checkout nor the installed package's copy holds the playbook: exit 2 before anything runs, saying why."""
    from fabric.__main__ import main
    from fabric.nodes import runner

    monkeypatch.setattr(runner, "CHECKOUT", tmp_path / "checkout")
    monkeypatch.setattr(runner, "PACKAGED", tmp_path / "package")
    assert main(["nodes", str(ROOT / "inventories" / "onprem-roce" / "cluster.yaml")]) == 2
    err = capsys.readouterr().err
    assert f"no {tmp_path / 'checkout' / 'playbooks' / 'site.yml'}" in err.replace("\n", "")
    assert "Fix: reinstall the package" in err.replace("\n", " ")
