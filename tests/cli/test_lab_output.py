"""Console contracts: ``lab up`` off a terminal (whole SSH command lines) and with ``--json``; progress on a terminal only.

The namespaces are the one boundary replaced (``lab_up`` needs root and ip-netns); everything else is the real CLI.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from fabric import __main__ as cli
from fabric.plan.types import ClusterPlan
from fabric.twin import lab
from fabric.twin.lab import LabState, LabSwitch
from tests.conftest import ROOT

LAB = ROOT / "inventories" / "lab" / "cluster.yaml"


@pytest.fixture
def fake_up(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """``lab_up`` returning the state a real twin records, under a state path long enough to wrap at 80 columns."""
    deep = tmp_path / ("a-very-long-state-directory-name-" * 3) / "state"

    def up(plan: ClusterPlan, directory: Path) -> LabState:
        assert plan.fabric is not None
        switches = tuple(LabSwitch(s.name, f"{plan.name}-{s.name}", 2200 + i, str(directory / s.name)) for i, s in enumerate(plan.fabric.switches))
        return LabState(plan.name, str(directory), ("ns",) * len(switches), switches, str(directory / "client_key"), "")

    monkeypatch.setattr(lab, "lab_up", up)
    return deep


def test_lab_up_prints_each_ssh_command_whole_off_a_terminal(fake_up: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["lab", "up", str(LAB), "--state", str(fake_up)]) == 0
    lines = capsys.readouterr().out.splitlines()
    key = str(fake_up.resolve() / "client_key")
    ssh = [line for line in lines if "ssh -p" in line]
    assert len(ssh) == 4  # the lab example: 2 spines, 2 leaves
    assert all(line.endswith(f"-i {key} root@127.0.0.1") and len(line) > 80 for line in ssh), ssh
    assert not any("\x1b[" in line for line in lines)


def test_lab_up_json_gives_the_ssh_command_per_switch(fake_up: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["lab", "up", str(LAB), "--state", str(fake_up), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["cluster"] == "lab"
    assert sorted(data["ssh"]) == ["leaf01", "leaf02", "spine01", "spine02"]
    assert data["ssh"]["leaf01"].startswith("ssh -p 22")


def test_render_shows_progress_on_a_terminal_and_none_in_a_pipe(tmp_path: Path) -> None:
    """stderr on a pseudo-terminal gets the spinner's status lines; a pipe gets none of them."""
    command = [sys.executable, "-m", "fabric", "render", str(LAB), "-o"]
    primary, secondary = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120"}
    done = subprocess.run([*command, str(tmp_path / "tty")], cwd=ROOT, stdout=subprocess.PIPE, stderr=secondary, env=env, timeout=120, check=True)
    os.close(secondary)
    seen = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(primary)
    assert b"rendering 11 switches (compute 4, storage 2, oob 5)" in seen
    piped = subprocess.run([*command, str(tmp_path / "pipe")], cwd=ROOT, capture_output=True, text=True, env=env, timeout=120, check=True)
    assert "rendering 11 switches" not in piped.stderr
    assert done.stdout.decode().startswith("rendered")
