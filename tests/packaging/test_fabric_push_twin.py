"""The collection's fabric_push playbook against the FRR twin, from the installed wheel and collection (root).

Check mode shows every switch's diff and commits nothing; a real run commits (canaries, then the rest) and records
the change; a second run changes nothing.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabric.apply.planes import PLANES
from fabric.apply.push import canary_names
from fabric.plan import ClusterPlan
from fabric.twin.lab import LabState, lab_down, lab_up
from tests.apply.conftest import lab_plan
from tests.apply.test_push_cli import definition
from tests.conftest import ROOT
from tests.packaging.conftest import Installed

pytestmark = [pytest.mark.slow, pytest.mark.twin]
CLUSTER = "gfpkg"  # namespaces of its own: never those of a developer's twin or of tests/apply (gftest-) running alongside


@pytest.fixture(scope="module")
def plan() -> ClusterPlan:
    return lab_plan(CLUSTER)


@pytest.fixture
def twin(plan: ClusterPlan, tmp_path: Path) -> Iterator[tuple[LabState, Path]]:
    state_dir = ROOT / ".gpufabric" / "tests" / f"pkg-{tmp_path.name}"  # the frr user cannot reach pytest's private temp root
    shutil.rmtree(state_dir, ignore_errors=True)  # a change record left by an interrupted run
    state_dir.mkdir(parents=True)
    state = lab_up(plan, state_dir)
    try:
        yield state, state_dir
    finally:
        lab_down(plan.name, state_dir)
        shutil.rmtree(state_dir, ignore_errors=True)


def recap(output: str) -> dict[str, int]:
    match = re.search(r"localhost\s*:\s*(.*)", output)
    assert match is not None, output
    return {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", match.group(1))}


def test_fabric_push_playbook_check_commit_then_unchanged(installed: Installed, twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    state, state_dir = twin
    cluster = definition(plan, state_dir)

    def push(*flags: str, ok: bool = True) -> tuple[dict[str, int], str]:
        done = installed.ansible("playbook", "gpufabric.fabric.fabric_push", "-i", str(cluster), "-e", f"gpufabric_state_dir={state_dir}", *flags)
        assert (done.returncode == 0) == ok, done.stdout[-4000:] + done.stderr[-4000:]
        return recap(done.stdout), done.stdout

    checked, shown = push("--check", "--diff")
    assert checked["changed"] == 1
    for switch in state.switches:
        assert f"--- before: {switch.name} (running)" in shown
        assert f"+++ after: {switch.name} (candidate)" in shown
    assert not (state_dir / "audit.jsonl").exists(), "check mode records nothing"

    _, refused = push("-e", "gpufabric_push_canaries=true", "-e", "gpufabric_rollback_to=x", ok=False)
    assert "canaries and rollback_to exclude each other" in refused
    assert not (state_dir / "audit.jsonl").exists(), "a refused mode combination touches nothing"

    canaries, _ = push("-e", "gpufabric_push_canaries=true")  # the AWX canary job template
    assert canaries["changed"] == 1
    committed, _ = push()
    assert committed["changed"] == 1
    audit = [json.loads(line) for line in (state_dir / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
    # Write-ahead: a "started" line before any switch is touched, then the "finished" line with every switch's result.
    assert [entry["event"] for entry in audit] == ["started", "finished", "started", "finished"]
    assert audit[0]["change"] == audit[1]["change"] != audit[2]["change"] == audit[3]["change"]
    assert sorted(audit[1]["devices"]) == sorted(canary_names(plan, PLANES)), "the canary run reaches only each plane's first switch"
    every = sorted(s.name for s in state.switches + state.l2_switches)  # every plane by default: OOB, storage/in-band, compute
    assert sorted(audit[2]["devices"]) == sorted(audit[3]["devices"]) == every
    assert audit[3]["commit"]
    pushed = {n for n, d in audit[1]["devices"].items() if d["committed"]} | {n for n, d in audit[3]["devices"].items() if d["committed"]}
    assert pushed == {s.name for s in state.switches}, "L2 switches booted their config"

    again, _ = push("--diff")
    assert again["changed"] == 0
    assert again["failed"] == 0
    back, _ = push("-e", f"gpufabric_rollback_to={audit[3]['change']}")  # the AWX rollback job template
    assert back["changed"] == 0, "back to the change every switch already runs"
    assert back["failed"] == 0
