"""Fabric changes on the real twin: a definition change shows exactly its diff and applies, rollback to a recorded
change, verify, and a session that dies in the middle of the rollout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabric.apply.nos import Adapter
from fabric.apply.nos.frr import FrrAdapter
from fabric.apply.push import push_and_record
from fabric.apply.rollout import RolloutOptions, open_session
from fabric.apply.session import DeviceAccess, Session
from fabric.plan import ClusterPlan
from fabric.twin.access import twin_access
from fabric.twin.lab import LabState
from tests.apply.conftest import CONVERGE_S
from tests.apply.test_push_cli import fabric
from tests.conftest import ROOT

pytestmark = pytest.mark.twin  # builds a twin: the twin lane of ./dev test, one twin at a time (docs/testing.md)

ADAPTER = FrrAdapter()


FAST = ("--post-check-hold", "1")  # the hold time has its own test (the blackhole); here it only costs time


def definition(directory: Path, name: str, **changes: Any) -> Path:
    data = yaml.safe_load((ROOT / "inventories" / "lab" / "cluster.yaml").read_text(encoding="utf-8"))
    data["name"] = name
    data["fabric"]["underlay"].update(changes.pop("underlay", {}))
    if "nodes" in changes:
        data["nodes"][0]["count"] = changes.pop("nodes")
    path = directory / f"cluster-{len(list(directory.glob('cluster-*.yaml')))}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def run_json(*args: str) -> tuple[int, dict[str, Any]]:
    """One CLI command on the compute fabric (the twin's storage/OOB switches have tests of their own: test_push_planes)."""
    done = fabric(*args, "--json", "--plane", "compute")
    return done.returncode, (json.loads(done.stdout) if done.stdout.strip() else {"stderr": done.stderr})


def test_definition_changes_show_exactly_their_diff_apply_verify_and_roll_back(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    _, state = twin
    base = definition(state, plan.name)
    code, first = run_json("push", str(base), "--state", str(state), "--commit", *FAST)
    assert code == 0, first
    code, verdict = run_json("verify", str(base), "--state", str(state), "--wait", str(CONVERGE_S))
    assert code == 0, verdict
    assert all(v["ok"] for v in verdict.values())

    # a new leaf (two more nodes): offline diff against the record, no device touched
    bigger = definition(state, plan.name, nodes=6)
    code, grown = run_json("diff", str(bigger), "--state", str(state), "--offline")
    assert code == 3
    changed = {name for name, d in grown["devices"].items() if d["changed"]}
    assert changed == {"leaf03", "spine01", "spine02"}
    assert "router bgp 65103" in grown["devices"]["leaf03"]["diff"]
    assert [line for line in grown["devices"]["spine01"]["diff"] if "neighbor" in line] == [
        "  neighbor swp3 interface peer-group FABRIC",
        "  neighbor swp3 description leaf03",
    ]

    # spine ASN change: only the spines change, it applies, the fabric converges again
    renumbered = definition(state, plan.name, underlay={"spine_asn": 65200})
    code, pending = run_json("diff", str(renumbered), "--state", str(state))
    assert code == 3
    assert {n for n, d in pending["devices"].items() if d["changed"]} == {"spine01", "spine02"}
    assert pending["devices"]["spine01"]["diff"][0] == "no router bgp 65100"
    code, applied = run_json("push", str(renumbered), "--state", str(state), "--commit", *FAST)
    assert code == 0, applied
    code, verdict = run_json("verify", str(renumbered), "--state", str(state), "--wait", str(CONVERGE_S))
    assert code == 0, verdict

    # roll back to the first change: the old ASN is back, the original definition verifies again
    code, rolled = run_json("rollback", str(base), "--state", str(state), "--to", first["change"], "--commit", *FAST)
    assert code == 0, rolled
    assert {n for n, d in rolled["devices"].items() if d["committed"]} == {"spine01", "spine02"}
    code, verdict = run_json("verify", str(base), "--state", str(state), "--wait", str(CONVERGE_S))
    assert code == 0, verdict
    code, drift = run_json("verify", str(renumbered), "--state", str(state))
    assert code == 1
    assert drift["spine01"]["drift"][0] == "no router bgp 65100"
    audit = [json.loads(line) for line in (state / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [a["rollback_to"] for a in audit if a["event"] == "finished"] == [None, None, first["change"]]


class DyingSession:
    """A real session that sends half of a change and then loses its SSH connection."""

    def __init__(self, inner: Session) -> None:
        self.inner = inner

    def show(self, command: str) -> str:
        return self.inner.show(command)

    def configure(self, lines: list[str]) -> str:
        self.inner.configure(lines[: len(lines) // 2])
        self.inner.disconnect()
        msg = "Socket is closed"
        raise OSError(msg)

    def exit_config_mode(self) -> None:
        self.inner.exit_config_mode()

    def disconnect(self) -> None:
        self.inner.disconnect()


def test_a_session_dying_mid_rollout_restores_that_switch_and_leaves_the_others_untouched(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    lab, state = twin
    logins: dict[str, int] = {}

    def connector(access: DeviceAccess, adapter: Adapter) -> Session:
        session = open_session(access, adapter)
        logins[access.name] = logins.get(access.name, 0) + 1
        if access.name == "leaf01" and logins[access.name] == 1:  # reads the backup, then dies sending the change
            return DyingSession(session)  # the recovery reconnects for real
        return session

    access = twin_access(lab)
    options = RolloutOptions(commit=True, post_check_s=CONVERGE_S, post_check_hold_s=1.0)
    change, results = push_and_record(plan, definition(state, plan.name), state, access, options, progress=lambda *_: None, connector=connector)
    by_name = {r.device: r for r in results}
    assert by_name["spine01"].committed, by_name["spine01"].error
    leaf = by_name["leaf01"]
    assert leaf.error is not None
    assert "session failed mid-change" in leaf.error
    assert "restored from the backup" in leaf.error
    assert (leaf.committed, leaf.rolled_back) == (False, True)
    assert all(by_name[n].error == "skipped: the rollout stopped at an earlier failure" for n in ("spine02", "leaf02"))
    for name in ("leaf01", "spine02", "leaf02"):
        session = open_session(access[name], ADAPTER)
        try:
            assert "router bgp" not in session.show("show running-config"), f"{name} must run its pre-change config"
        finally:
            session.disconnect()
    audit = json.loads((state / "audit.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert audit["change"] == change
    assert {n: d["committed"] for n, d in audit["devices"].items()} == {"spine01": True, "leaf01": False, "spine02": False, "leaf02": False}
    assert audit["devices"]["leaf01"]["rolled_back"] is True
    assert sorted(p.name for p in (state / "changes" / change).glob("*.applied")) == ["spine01.applied"]
