"""The twin's processes: who each one is, whether it still runs, finding the ones it started, and stopping exactly those.

The twin stops only what it started. A process's identity is its PID, its start time (``/proc/<pid>/stat`` field 22,
clock ticks since boot: proc(5)) and its executable (``/proc/<pid>/exe``). The kernel hands a PID on once its process
is gone; PID and start time together name one process of one boot, and the executable is checked as well. ``stop``
opens a pidfd (pidfd_open(2)) first, then checks all three, then signals through the pidfd: a process that took the
PID in between can never get the signal. A command line alone proves nothing (anyone can start ``sleep 300 DIR/x``),
so ``started_from`` also asks for the twin's own executable, its exact config file under the directory, and a start
after the twin's recorded start.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, ClassVar

from pydantic import ConfigDict, Field

from fabric.errors import LabError

STOP_TIMEOUT_S = 5.0
PID_MAX = 1 << 22  # PID_MAX_LIMIT on 64-bit Linux: no PID is larger (proc(5), /proc/sys/kernel/pid_max)
TICKS_MAX = (1 << 63) - 1  # an unsigned long long in /proc/<pid>/stat; anything larger is no start time
DELETED = " (deleted)"  # what /proc/<pid>/exe reads once the binary was replaced on disk (an upgrade): the same program


@dataclass(frozen=True, slots=True)
class TwinProcess:
    """One process the twin started, as ``lab.json`` records it: its name ("leaf01/bgpd") and its identity."""

    __pydantic_config__: ClassVar[ConfigDict] = ConfigDict(strict=True)

    name: Annotated[str, Field(max_length=200)]
    pid: Annotated[int, Field(gt=1, le=PID_MAX)]  # never PID 1 (init) or 0 (the caller's process group)
    start: Annotated[int, Field(ge=0, le=TICKS_MAX)]  # /proc/<pid>/stat field 22: clock ticks after boot
    exe: Annotated[str, Field(max_length=4096)]  # the realpath of /proc/<pid>/exe when it was started


def boot_id() -> str:
    """This boot's id (``/proc/sys/kernel/random/boot_id``): start times count from boot, so they hold within one."""
    return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="utf-8").strip()


def start_ticks(pid: int) -> int | None:
    """Field 22 of ``/proc/<pid>/stat`` (after the command name, which may hold spaces and parentheses); None when gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # fields 3 (state) onwards
    return int(fields[19]) if len(fields) > 19 and fields[0] != "Z" and fields[19].isdigit() else None


def executable(pid: int) -> str | None:
    """Where ``/proc/<pid>/exe`` points (" (deleted)" dropped); None when gone, a zombie, or not ours to read."""
    try:
        target = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None
    return target.removesuffix(DELETED)


def identify(name: str, pid: int, exe: Path, not_before: int) -> TwinProcess:
    """The identity of the process the twin just started (PID from its PID file), checked to be that program.

    A PID file sits in a directory the frr user can write: the PID is taken only when it runs ``exe`` and started at
    or after ``not_before`` (this command's own start), i.e. it is the daemon this command launched.

    Raises:
        LabError: the process is gone, runs another program, or is older than this command.
    """
    start, running = start_ticks(pid), executable(pid)
    wanted = os.path.realpath(exe)
    if start is None or running is None or running != wanted or start < not_before or not 1 < pid <= PID_MAX:
        msg = f"{name}: PID {pid} is not the {wanted} just started (it runs {running or 'nothing'}); see its log in the state directory"
        raise LabError(msg)
    return TwinProcess(name, pid, start, wanted)


def is_current(process: TwinProcess) -> bool:
    """True while the PID still runs the recorded program, started at the recorded tick (not a zombie)."""
    return start_ticks(process.pid) == process.start and executable(process.pid) == process.exe


def mismatch(process: TwinProcess) -> str:
    """Why ``process`` is not the recorded one any more, for the report ("" when it is gone or still matches)."""
    start, running = start_ticks(process.pid), executable(process.pid)
    if start is None or is_current(process):
        return ""
    return (
        f"process {process.pid} ({process.name}) left alone: PID {process.pid} now runs {running or 'an unreadable program'} "
        f"started at tick {start}, the record says {process.exe} at tick {process.start} (another process took the PID)"
    )


def started_from(since: int, config: Mapping[str, re.Pattern[str]]) -> list[TwinProcess]:
    """Every process running one of the twin's executables (``config``'s keys) with its own config file under the
    twin's directory (the value matches one argument whole, its group ``switch`` naming the switch), started at or after
    tick ``since``: the twin's daemons when the record is lost. ``since`` < 0 drops the start check (only to name such
    processes in a refusal, never to stop them)."""
    found: list[TwinProcess] = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or not 1 < int(proc.name) <= PID_MAX or int(proc.name) == os.getpid():
            continue
        pid = int(proc.name)
        exe, start = executable(pid), start_ticks(pid)
        pattern = config.get(exe or "")
        if exe is None or start is None or pattern is None or start < since:
            continue
        match = next((m for a in _arguments(pid) if (m := pattern.fullmatch(a))), None)
        if match is not None:
            found.append(TwinProcess(f"{match.group('switch')}/{Path(exe).name}", pid, start, exe))
    return found


def _arguments(pid: int) -> list[str]:
    """The process's arguments; a title set with setproctitle (sshd's listener) is one string, so it is split too."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    args = [a.decode(errors="replace") for a in raw.split(b"\0") if a]
    return args + [word for a in args if " " in a for word in a.split()]


def stop(process: TwinProcess) -> bool:
    """SIGTERM, then SIGKILL after ``STOP_TIMEOUT_S``, only while the identity matches; False when nothing was signalled
    (gone, or the PID now names another process)."""
    try:
        handle: int | None = os.pidfd_open(process.pid)
    except ProcessLookupError:
        return False
    except OSError:
        handle = None  # no pidfd on this kernel (< 5.3): check, then signal by PID
    try:
        if not is_current(process):
            return False
        _signal(handle, process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while time.monotonic() < deadline:
            if not is_current(process):
                return True
            time.sleep(0.005)  # a daemon exits within ms of SIGTERM: 50 ms a poll made each of 35 stops cost a whole one
        if handle is not None or is_current(process):
            _signal(handle, process.pid, signal.SIGKILL)
        return True
    finally:
        if handle is not None:
            os.close(handle)


def _signal(handle: int | None, pid: int, sig: signal.Signals) -> None:
    try:
        if handle is None:
            os.kill(pid, sig)
        else:
            signal.pidfd_send_signal(handle, sig)
    except ProcessLookupError:
        pass


def is_alive(pid: int) -> bool:
    """Running, and not a zombie waiting for a parent (e.g. a container's PID 1) to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
