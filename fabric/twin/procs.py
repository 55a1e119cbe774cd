"""The twin's processes: whether one is alive, which ones run from a twin's directory, and stopping them by PID.

A process is stopped only when its command line names the twin's directory (``started_here``): a stale PID file must
never kill someone else's process.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

STOP_TIMEOUT_S = 5.0


def read_text(path: Path) -> str:
    """The file's text, or "" when it cannot be read (a PID file removed under us)."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def processes_under(directory: Path) -> set[int]:
    """Every process whose command line names ``directory`` (FRR daemons and sshd of this twin)."""
    found: set[int] = set()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) != os.getpid() and started_here(int(proc.name), directory):
            found.add(int(proc.name))
    return found


def started_here(pid: int, directory: Path) -> bool:
    """True when the process runs from this twin's files (a stale PID file must never kill someone else's process)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False
    return any(arg == str(directory) or arg.startswith(f"{directory}/") for arg in cmdline.split())


def stop(pid: int) -> bool:
    """SIGTERM, then SIGKILL after ``STOP_TIMEOUT_S``; False when the process was already gone."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline:
        if not is_alive(pid):
            return True
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    return True


def is_alive(pid: int) -> bool:
    """Running, and not a zombie waiting for a parent (e.g. a container's PID 1) to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
