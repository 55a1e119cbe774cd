"""``render``'s plan.json: encoded while the workers render the switches (issue 36), straight into its staged file, moved
into the output directory only after every switch has rendered."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TextIO

import pytest

from fabric.__main__ import main
from fabric.cli import render_workers as parallel
from fabric.plan import serialize
from fabric.plan.serialize import plan_to_json
from fabric.plan.types import ClusterPlan
from tests.render.conftest import definition, plan_of

CASE = "render/cumulus-3tier"


@pytest.mark.parametrize("jobs", [1, 2])
def test_plan_json_is_encoded_before_the_render_waits_for_the_switches(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], jobs: int
) -> None:
    """The parent encodes plan.json while the workers render, instead of after them (it used to wait idle, then encode)."""
    monkeypatch.setattr(parallel, "MIN_SWITCHES", 1)
    events: list[str] = []
    encode, rendered = serialize.write_plan_json, parallel.SwitchWorkers.rendered

    def encoding(plan: ClusterPlan, out: TextIO) -> None:
        events.append("plan.json encoded")
        encode(plan, out)

    def waiting(self: parallel.SwitchWorkers) -> int:
        events.append("switches awaited")
        assert not (tmp_path / "out").exists(), "nothing is written before every switch has rendered"
        return rendered(self)

    monkeypatch.setattr(serialize, "write_plan_json", encoding)
    monkeypatch.setattr(parallel.SwitchWorkers, "rendered", waiting)
    assert main(["render", str(definition(CASE)), "-o", str(tmp_path / "out"), "--jobs", str(jobs)]) == 0
    capsys.readouterr()
    assert events == ["plan.json encoded", "switches awaited"]


def test_plan_json_is_the_plan_and_its_digest_the_written_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", str(definition(CASE)), "-o", str(tmp_path / "out"), "--json"]) == 0
    written = (tmp_path / "out" / "plan.json").read_bytes()
    assert written == plan_to_json(plan_of(CASE)).encode()
    assert json.loads(capsys.readouterr().out)["files"]["plan.json"] == hashlib.sha256(written).hexdigest()
