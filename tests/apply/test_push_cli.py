"""diff / push from the command line against the twin: exit codes a pipeline gates on, the change record, the lock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fabric.apply.record import push_lock
from fabric.plan import ClusterPlan
from fabric.twin.lab import LabState
from tests.conftest import ROOT

pytestmark = pytest.mark.twin  # builds a twin: the twin lane of ./dev test, one twin at a time (docs/testing.md)

FAST = ("--post-check-hold", "1")  # the hold time has its own test (the blackhole); here it only costs time


def fabric(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "fabric", *args], cwd=ROOT, capture_output=True, text=True, timeout=180, check=False, env=env)


def definition(plan: ClusterPlan, directory: Path) -> Path:
    data = yaml.safe_load((ROOT / "inventories" / "lab" / "cluster.yaml").read_text(encoding="utf-8"))
    data["name"] = plan.name
    path = directory / "cluster.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_diff_push_diff_exit_codes_and_the_change_record(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    _, state = twin
    cluster = definition(plan, state)
    pending = fabric("diff", str(cluster), "--state", str(state), "--json")
    assert pending.returncode == 3, pending.stderr
    devices = json.loads(pending.stdout)["devices"]
    compute = ["spine01", "spine02", "leaf01", "leaf02"]
    l2 = ["oob-su1", "oob-su2", "oob-su3", "oob-su4", "oob-mgmt", "stor-a", "stor-b"]
    assert list(devices) == l2 + compute, "every plane by default, in push order: OOB, storage/in-band, compute last"
    assert all(devices[n]["changed"] and not devices[n]["committed"] for n in compute)
    assert not [n for n in l2 if devices[n]["changed"]], "the storage/OOB switches booted their rendered config (ZTP)"
    dry = fabric("push", str(cluster), "--state", str(state))
    assert dry.returncode == 0, dry.stderr
    assert "changes pending" in dry.stdout
    pushed = fabric("push", str(cluster), "--state", str(state), "--commit", "--json", *FAST)
    assert pushed.returncode == 0, pushed.stderr
    result = json.loads(pushed.stdout)
    assert [n for n, d in result["devices"].items() if d["committed"]] == compute
    clean = fabric("diff", str(cluster), "--state", str(state))
    assert clean.returncode == 0, clean.stdout + clean.stderr
    audit = [json.loads(line) for line in (state / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [a["event"] for a in audit] == ["started", "finished", "started", "finished"]
    audit = [a for a in audit if a["event"] == "finished"]
    assert [(a["commit"], sorted(a["devices"])) for a in audit] == [(False, sorted(l2 + compute)), (True, sorted(l2 + compute))]
    assert audit[1]["change"] == result["change"]
    change = state / "changes" / result["change"]
    assert (change / "leaf01.applied").read_text(encoding="utf-8").startswith("! leaf01")
    assert "router bgp" not in (change / "leaf01.backup").read_text(encoding="utf-8")
    key = Path(twin[0].client_key).read_text(encoding="utf-8")
    assert not [
        p for p in state.rglob("*") if p.is_file() and p.suffix in {".jsonl", ".applied", ".backup", ".diff"} and key in p.read_text(encoding="utf-8")
    ]


def test_a_second_concurrent_push_is_refused_by_the_lock(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    _, state = twin
    cluster = definition(plan, state)
    with push_lock(state):
        refused = fabric("push", str(cluster), "--state", str(state), "--commit", *FAST)
    assert refused.returncode == 1
    assert "another push holds" in refused.stderr
    assert not (state / "audit.jsonl").exists(), "a refused push records nothing and touches nothing"
