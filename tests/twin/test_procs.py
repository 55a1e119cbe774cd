"""The twin stops only what it started (issue 30): a process that merely names the state directory survives ``lab down``,
and a recorded PID whose start time or executable no longer matches is never signalled.

No twin is built here: the state directory is claimed as ``lab up`` claims it, and the record is written by hand, so
these run in seconds (root only for reading other users' ``/proc/<pid>/exe``, as ``lab down`` runs).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabric.twin import state as state_module
from fabric.twin.lab import LabState, LabSwitch, lab_down
from fabric.twin.procs import TwinProcess, executable, identify, is_alive, is_current, start_ticks, stop
from fabric.twin.state import claim, save_state


def bystander(*names: Path) -> subprocess.Popen[bytes]:
    """A process the twin did not start whose command line names ``names`` (as a twin daemon's would)."""
    return subprocess.Popen(["sh", "-c", "sleep 300", "sh", *map(str, names)])


@pytest.fixture
def claimed(tmp_path: Path) -> Path:
    directory = tmp_path / "twin"
    claim(directory, list)
    return directory


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "300"])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def test_a_process_that_names_the_state_directory_survives_down(claimed: Path) -> None:
    """It names the exact files a twin daemon is started with, and the directory itself: still not the twin's."""
    (claimed / "frr" / "leaf01").mkdir(parents=True)
    process = bystander(claimed, claimed / "frr" / "leaf01" / "frr.conf", claimed / "ssh" / "sshd_leaf01.conf")
    try:
        (claimed / "frr" / "leaf01" / "zebra.pid").write_text(str(process.pid), encoding="utf-8")  # a planted PID file too
        down = lab_down("lab", claimed)
        assert process.poll() is None, "a process the twin did not start was stopped"
        assert down.removed == []
    finally:
        process.kill()
        process.wait()


def test_a_recorded_pid_is_stopped_only_while_its_start_time_and_executable_match(
    claimed: Path, sleeper: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """PID reuse, simulated by editing the record: a start time one tick off, or another executable, is left alone and
    reported; the same record with the true identity is stopped (so the check is what spares it)."""
    sleep_exe = os.path.realpath(executable(sleeper.pid) or "")
    python_exe = os.path.realpath(sys.executable)
    monkeypatch.setattr(state_module, "twin_executables", lambda: {sleep_exe: "sleep", python_exe: "sleep"})  # stand-ins for daemons
    start = start_ticks(sleeper.pid)
    assert start is not None
    marker = claim(claimed, list)

    def down_with(process: TwinProcess) -> list[str]:
        switch = LabSwitch("leaf01", "lab-leaf01", 2200, str(claimed / "frr" / "leaf01"))
        record = LabState("lab", str(claimed), ("lab-leaf01",), (switch,), "", "", (process,), token=marker.token, boot=marker.boot)
        save_state(record, claimed)
        down = lab_down("lab", claimed)
        assert not [r for r in down.removed if r.startswith("namespace")]
        return down.left

    for reused in (TwinProcess("leaf01/sleep", sleeper.pid, start + 1, sleep_exe), TwinProcess("leaf01/sleep", sleeper.pid, start, python_exe)):
        left = down_with(reused)
        assert sleeper.poll() is None, f"{reused} does not match the running process and was signalled"
        assert [line for line in left if f"process {sleeper.pid} (leaf01/sleep) left alone" in line], left
    down_with(TwinProcess("leaf01/sleep", sleeper.pid, start, sleep_exe))
    assert sleeper.wait(timeout=10) != 0, "the true identity is the twin's: stopped"


def test_stop_checks_the_identity_and_identify_takes_only_the_program_just_started(sleeper: subprocess.Popen[bytes]) -> None:
    start = start_ticks(sleeper.pid)
    exe = executable(sleeper.pid)
    assert start is not None
    assert exe is not None
    assert is_current(TwinProcess("x/sleep", sleeper.pid, start, exe))
    assert not stop(TwinProcess("x/sleep", sleeper.pid, start - 1, exe))
    assert not stop(TwinProcess("x/sleep", os.getpid(), start, exe)), "this very process under a recorded identity"
    assert sleeper.poll() is None
    with pytest.raises(Exception, match="is not the"):
        identify("x/zebra", sleeper.pid, Path("/usr/lib/frr/zebra"), 0)  # a PID file naming a process of another program
    with pytest.raises(Exception, match="is not the"):
        identify("x/sleep", sleeper.pid, Path(exe), start + 1)  # older than the command that launched the daemon
    with pytest.raises(Exception, match="is not the"):
        identify("x/init", 1, Path(executable(1) or "/sbin/init"), 0)
    assert identify("x/sleep", sleeper.pid, Path(exe), start) == TwinProcess("x/sleep", sleeper.pid, start, os.path.realpath(exe))
    assert stop(TwinProcess("x/sleep", sleeper.pid, start, exe))
    sleeper.wait(timeout=10)
    assert not is_alive(sleeper.pid)
