"""Each NOS adapter's transaction replayed against a device transcript at the transport boundary (no device here).

A transcript lists, in order, every command the adapter must send and the device's reply; the replay fails on any
command out of order, any command not in the transcript, and any transcript step left unsent.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabric.apply.nos import ADAPTERS
from fabric.apply.transaction import bgp_no_regression, transaction
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.render import render_configs
from tests.conftest import ROOT

TRANSCRIPTS = sorted((ROOT / "tests" / "data" / "transcripts").glob("*.yaml"))


class DeviceError(Exception):
    """What netmiko raises when a config line matches the error pattern (ConfigInvalidException)."""


@dataclass
class Replay:
    """A Session that plays a recorded device."""

    steps: list[dict[str, Any]]
    sent: list[str] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)  # kept apart: the adapter may catch the AssertionError

    def _next(self, kind: str, sent: object) -> dict[str, Any]:
        try:
            assert self.steps, f"the adapter sent {kind} {sent!r} after the transcript ended"
            step = self.steps.pop(0)
            assert kind in step, (
                f"expected {next(k for k in step if k != 'reply')} {step.get('show') or step.get('configure')!r}, got {kind} {sent!r}"
            )
            assert step[kind] == sent, f"{kind}: expected {step[kind]!r}, got {sent!r}"
        except AssertionError as exc:
            self.mismatches.append(str(exc))
            raise
        self.sent.append(str(sent))
        return step

    def show(self, command: str) -> str:
        return str(self._next("show", command).get("reply", ""))

    def configure(self, lines: list[str]) -> str:
        step = self._next("configure", lines)
        self.sent[-1] = "\n".join(lines)
        if "raises" in step:
            raise DeviceError(step["raises"])
        return str(step.get("reply", ""))

    def exit_config_mode(self) -> None:
        return None

    def disconnect(self) -> None:
        return None


def _is_read(sent: str) -> bool:
    return sent.startswith(("show ", "nv config show", "sudo vtysh -c 'show"))


def load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[p.stem for p in TRANSCRIPTS])
def test_transaction_follows_the_device_transcript(path: Path) -> None:
    script = load(path)
    adapter = ADAPTERS[script["nos"]]
    session = Replay(list(script["steps"]))
    candidate = adapter.candidate(script["files"]) if "files" in script else script["candidate"]
    previous = adapter.candidate(script["previous_files"]) if "previous_files" in script else script.get("previous", "")
    backup = adapter.running(session)
    check = bgp_no_regression(adapter, adapter.bgp_sessions(session), script.get("peers", 0), timeout_s=0)
    result = transaction(adapter, session, candidate, backup, change=script["change"], commit=True, post_check=check, previous=previous)
    assert not session.mismatches, session.mismatches[0]
    assert not session.steps, f"transcript steps never sent: {session.steps[:2]}"
    changes = [line for sent in session.sent if not _is_read(sent) for line in sent.splitlines()]
    touched = [(word, line) for word in script.get("untouchable", []) for line in changes if word.lower() in line.lower()]
    assert not touched, f"the change touches what gpufabric does not own: {touched}"
    expect = script["expect"]
    assert (result.changed, result.committed, result.rolled_back) == (expect["changed"], expect["committed"], expect["rolled_back"])
    if expect["error"] is None:
        assert result.error is None
    else:
        assert result.error is not None
        assert re.search(expect["error"], result.error, re.DOTALL), result.error


@pytest.mark.parametrize("nos", ["eos", "nxos", "cumulus", "sonic"])
def test_dry_run_sends_nothing_but_reads(nos: str) -> None:
    path = next(p for p in TRANSCRIPTS if p.stem.startswith(nos))
    script = load(path)
    adapter = ADAPTERS[nos]
    session = Replay(list(itertools.takewhile(lambda s: "bgp" not in s.get("show", ""), script["steps"])))  # the running-config reads
    candidate = adapter.candidate(script["files"]) if "files" in script else script["candidate"]
    result = transaction(adapter, session, candidate, adapter.running(session), change=script["change"], commit=False)
    assert not session.mismatches, session.mismatches[0]
    assert (result.changed, result.committed, session.steps) == (True, False, [])  # any other command fails the replay


CASES = {
    "eos": "tests/data/render/eos/cluster.yaml",
    "nxos": "tests/data/render/nxos/cluster.yaml",
    "cumulus": "tests/data/render/cumulus/cluster.yaml",
    "sonic": "tests/data/render/sonic/cluster.yaml",
    "frr": "inventories/lab/cluster.yaml",
}


@pytest.mark.parametrize("nos", sorted(CASES))
def test_rendered_candidate_diffs_fully_against_nothing_and_not_at_all_against_itself(nos: str) -> None:
    plan = plan_cluster(load_cluster(ROOT / CASES[nos]))
    files = render_configs(plan)
    assert plan.fabric is not None
    switch = plan.fabric.leaves[0]
    own = {k.split("/")[-1]: v for k, v in files.items() if k.startswith(f"switches/{switch.name}/")}
    adapter = ADAPTERS[nos]
    candidate = adapter.candidate(own)
    empty = adapter.candidate({"frr.conf": "", "config_db.json": "{}", "nvue.sh": "", "startup-config": "", "running-config": ""})
    assert len(adapter.diff(empty, candidate)) > 10
    assert adapter.diff(candidate, candidate) == []


def test_sonic_patch_leaves_tables_the_definition_does_not_manage() -> None:
    adapter = ADAPTERS["sonic"]
    running = adapter.candidate({"config_db.json": json.dumps({"FEATURE": {"bgp": {"state": "enabled"}}, "PORT": {}}), "frr.conf": ""})
    candidate = adapter.candidate({"config_db.json": json.dumps({"PORT": {"Ethernet0": {"description": "n1", "mtu": "9216"}}}), "frr.conf": ""})
    assert adapter.diff(running, candidate) == ['{"op": "add", "path": "/PORT/Ethernet0", "value": {"description": "n1", "mtu": "9216"}}']
