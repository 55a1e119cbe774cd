"""A twin daemon's start: its PID as soon as the PID file holds one; a daemon that gave up, or that never writes it, is
named with the end of its log (the CI failure "sshd_….pid did not appear within 10 s" said nothing about why)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from fabric.errors import LabError
from fabric.twin.sshd import log_size
from fabric.twin.switches import PID_WAIT_S, wait_pid


def test_the_pid_is_returned_as_soon_as_the_file_holds_one(tmp_path: Path) -> None:
    pid_file = tmp_path / "d.pid"
    pid_file.write_text("", encoding="utf-8")  # created, not yet written: keep waiting
    threading.Timer(0.3, lambda: pid_file.write_text("4242\n", encoding="utf-8")).start()
    start = time.monotonic()
    assert wait_pid(pid_file, timeout_s=10) == 4242
    assert time.monotonic() - start < 5


def test_a_daemon_that_gave_up_ends_the_wait_at_once_and_its_log_says_why(tmp_path: Path) -> None:
    log = tmp_path / "sshd_leaf01.log"
    log.write_text("Bind to port 12345 on 127.0.0.1 failed: Address already in use.\nCannot bind any address.\n", encoding="utf-8")
    start = time.monotonic()
    with pytest.raises(LabError, match=r"exited without it; .*sshd_leaf01\.log ends: Bind to port 12345 .* \| Cannot bind any address\."):
        wait_pid(tmp_path / "sshd_leaf01.pid", timeout_s=PID_WAIT_S, log=log)
    assert time.monotonic() - start < 5, "a daemon that gave up is not waited for"


def test_what_an_earlier_start_logged_neither_ends_the_wait_nor_is_quoted(tmp_path: Path) -> None:
    """A healed twin starts sshd again on the same log: the dead one's "gave up" is history, not this start's verdict."""
    log = tmp_path / "sshd_leaf01.log"
    log.write_text("Cannot bind any address.\n", encoding="utf-8")
    since = log_size(log)
    pid_file = tmp_path / "sshd_leaf01.pid"
    threading.Timer(0.3, lambda: pid_file.write_text("4343\n", encoding="utf-8")).start()
    assert wait_pid(pid_file, timeout_s=10, log=log, log_from=since) == 4343
    with log.open("a", encoding="utf-8") as more:
        more.write("Server listening on 127.0.0.1 port 12345.\n")
    with pytest.raises(LabError, match=r"did not appear within 0\.2 s; .* ends: Server listening on 127\.0\.0\.1 port 12345\.$"):
        wait_pid(tmp_path / "never.pid", timeout_s=0.2, log=log, log_from=since)
    assert log_size(tmp_path / "none.log") == 0


def test_only_the_end_of_a_long_log_is_read(tmp_path: Path) -> None:
    log = tmp_path / "frr.log"
    log.write_text("Cannot bind any address.\n" + "x" * 10_000 + "\nlast line\n", encoding="utf-8")
    with pytest.raises(LabError, match=r"did not appear within 0\.1 s; .* ends: x+ \| last line$"):
        wait_pid(tmp_path / "zebra.pid", timeout_s=0.1, log=log)


def test_a_pid_file_that_never_comes_is_named_with_the_end_of_the_log(tmp_path: Path) -> None:
    log = tmp_path / "frr.log"
    log.write_text("".join(f"line {i}\n" for i in range(20)), encoding="utf-8")
    with pytest.raises(LabError, match=r"zebra\.pid did not appear within 0\.2 s; .*frr\.log ends: line 15 \| .* \| line 19$"):
        wait_pid(tmp_path / "zebra.pid", timeout_s=0.2, log=log)
    with pytest.raises(LabError, match=r"did not appear within 0\.2 s; .*empty\.log is empty$"):
        wait_pid(tmp_path / "zebra.pid", timeout_s=0.2, log=tmp_path / "empty.log")
    with pytest.raises(LabError, match=r"did not appear within 0\.2 s; see the daemon's log next to it$"):
        wait_pid(tmp_path / "zebra.pid", timeout_s=0.2)


def test_the_bound_leaves_room_for_a_busy_machine() -> None:
    assert PID_WAIT_S >= 30, "10 s was missed by sshd at load 5 (docs/testing.md)"


@pytest.mark.skipif(os.geteuid() != 0, reason="sshd starts as root (the twin needs root too)")
@pytest.mark.skipif(shutil.which("ssh-keygen") is None or not Path("/usr/sbin/sshd").exists(), reason="OpenSSH's server is not installed")
def test_sshd_whose_port_is_taken_says_what_wait_pid_looks_for(tmp_path: Path) -> None:
    """The word ``GAVE_UP`` looks for is the one this machine's sshd writes (OpenSSH 9.2 on Debian 12)."""
    Path("/run/sshd").mkdir(exist_ok=True)  # its privilege separation directory, as fabric.twin.sshd makes it
    key = tmp_path / "hostkey"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True, timeout=30)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = tmp_path / "sshd.conf"
        lines = [f"ListenAddress 127.0.0.1:{port}", f"PidFile {tmp_path / 'sshd.pid'}", f"HostKey {key}", "UsePAM no"]
        config.write_text("\n".join(lines) + "\n", encoding="utf-8")
        subprocess.run(["/usr/sbin/sshd", "-f", str(config), "-E", str(tmp_path / "sshd.log")], check=True, timeout=30)
        try:
            with pytest.raises(LabError, match="exited without it"):
                wait_pid(tmp_path / "sshd.pid", timeout_s=PID_WAIT_S, log=tmp_path / "sshd.log")
        finally:
            stop_started_from(config)


def stop_started_from(config: Path) -> None:
    """Kill every process started with ``config`` in its command line (a unique temp path). Only a wait that returned
    before sshd gave up leaves one: sshd then binds the port the moment the test lets it go, and would stay."""
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and str(config).encode() in (proc / "cmdline").read_bytes():
                os.kill(int(proc.name), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            continue
