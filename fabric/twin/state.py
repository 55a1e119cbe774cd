"""The twin's state directory and its record: the twin acts only on a directory it created, and trusts only its own record.

``lab up`` creates the state directory, or takes an empty one, and writes the marker ``.gpufabric-twin`` into it: a
random token, this boot's id and the tick from which the twin's processes start. It refuses a directory that holds
anything else: it never adopts one silently. ``lab down`` and the heal refuse (exit 2, nothing stopped, nothing
removed) a directory without a valid marker, a symlink, one owned by another user or writable by others, and ``/``,
top-level and home directories (``--state ~``, ``--state /usr``). ``lab.json`` carries the marker's token and is
trusted only with it, and only when it passes ``load_state``: strict types, bounded numbers, every path inside the
directory, every namespace ``<cluster>-…``, every executable one the twin runs.
"""

from __future__ import annotations

import os
import pwd
import re
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, ClassVar

from pydantic import ConfigDict, Field, TypeAdapter

from fabric.errors import Finding, InputError, LabError
from fabric.twin.lldp import LLDPD
from fabric.twin.procs import TwinProcess, boot_id, start_ticks
from fabric.twin.sshd import SSHD
from fabric.twin.switches import FRR_BIN, FRR_DAEMONS

MARKER = ".gpufabric-twin"
RECORD_MAX_BYTES = 4 << 20  # a twin of thousands of switches records far less
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


def twin_executables() -> dict[str, str]:
    """Each program the twin starts as a daemon (realpath) → the daemon's name: FRR's daemons, sshd and lldpd."""
    return {os.path.realpath(FRR_BIN / d): d for d in FRR_DAEMONS} | {os.path.realpath(SSHD): "sshd", os.path.realpath(LLDPD): "lldpd"}


@dataclass(frozen=True, slots=True)
class LabSwitch:
    """How to reach one twin switch."""

    __pydantic_config__: ClassVar[ConfigDict] = ConfigDict(strict=True)

    name: str
    namespace: str
    ssh_port: Annotated[int, Field(ge=1, le=65535)]
    run_dir: str
    nos: str = "frr"  # "frr": FRR's vtysh; "cumulus": an L2 switch behind the NVUE stand-in (fabric.twin.nvue_standin)
    rehearses: str = ""  # the definition's NOS when the twin runs its routing config in FRR ("sonic"), else ""


@dataclass(frozen=True, slots=True)
class LabState:
    """What ``up`` created and ``down`` removes; saved as ``lab.json`` in the state directory."""

    __pydantic_config__: ClassVar[ConfigDict] = ConfigDict(strict=True)

    cluster: str
    directory: str
    namespaces: tuple[str, ...]
    switches: tuple[LabSwitch, ...]
    client_key: str
    known_hosts: str
    processes: tuple[TwinProcess, ...] = ()  # each with its identity; what ``status`` names when one dies
    station: str = ""  # the management station's address, which each switch's management ACL is checked for
    l2_switches: tuple[LabSwitch, ...] = ()  # the storage / in-band / OOB switches (NVUE stand-in), pushed like the others
    token: str = ""  # the marker's token: a record without it is not this directory's
    boot: str = ""  # the boot the processes' start times count from

    @property
    def pids(self) -> tuple[int, ...]:
        """The recorded processes' PIDs."""
        return tuple(p.pid for p in self.processes)

    def switch(self, name: str) -> LabSwitch:
        """The twin switch called ``name`` (compute or L2)."""
        return next(s for s in self.switches + self.l2_switches if s.name == name)


@dataclass(frozen=True, slots=True)
class Marker:
    """What ``.gpufabric-twin`` holds: the directory is the twin's, and its processes started at tick ``since`` of ``boot``."""

    __pydantic_config__: ClassVar[ConfigDict] = ConfigDict(strict=True)

    token: Annotated[str, Field(pattern=r"^[0-9a-f]{32}$")]
    boot: Annotated[str, Field(max_length=64)]
    since: Annotated[int, Field(ge=0, le=(1 << 63) - 1)]


_STATE: TypeAdapter[LabState] = TypeAdapter(LabState)
_MARKER: TypeAdapter[Marker] = TypeAdapter(Marker)


def _refusal(directory: Path, problem: str) -> InputError:
    """A state directory refused (exit 2): nothing is stopped, nothing removed."""
    fix = "give --state a new or empty directory for a twin, or the directory 'lab up' made"
    return InputError([Finding((), f"{problem}; nothing was stopped or removed; {fix}", file=str(directory))], str(directory))


def _checked(directory: Path) -> Path:
    """The resolved directory, after the checks every use makes: not a symlink, not ``/``, a top-level or a home
    directory; when it exists, a directory of this user that others cannot write."""
    if directory.is_symlink():
        raise _refusal(directory, "the state directory is a symbolic link; name the directory itself")
    resolved = directory.resolve()
    if len(resolved.parts) <= 2:
        raise _refusal(directory, f"{resolved} is / or a top-level directory, never a twin's")
    homes = {Path(p.pw_dir).resolve() for p in pwd.getpwall() if p.pw_dir} | {Path.home().resolve()}
    if any(resolved == h or resolved in h.parents for h in homes):
        raise _refusal(directory, f"{resolved} is a home directory or holds one, never a twin's")
    if resolved.exists():
        info = resolved.stat()
        if not stat.S_ISDIR(info.st_mode):
            raise _refusal(directory, f"{resolved} is not a directory")
        if info.st_uid != os.geteuid():
            raise _refusal(directory, f"{resolved} belongs to user {info.st_uid}, not to this user ({os.geteuid()})")
        if info.st_mode & stat.S_IWOTH:
            raise _refusal(directory, f"{resolved} is writable by every user")
    return resolved


def claim(directory: Path, running: Callable[[], list[int]]) -> Marker:
    """``lab up``: the marker of ``directory``, creating the directory (or taking an empty one) and its marker.

    Raises:
        InputError: the directory fails the checks, or holds files and no marker (``running``: PIDs to name).
    """
    resolved = _checked(directory)
    if not resolved.exists():
        resolved.mkdir(parents=True, mode=0o755)
    if os.path.lexists(resolved / MARKER):
        return owned(directory, running)
    if any(resolved.iterdir()):
        raise _refusal(directory, f"{resolved} holds files but no {MARKER}: the twin did not create it{_naming(running)}")
    return write_marker(resolved, secrets.token_hex(16))


def owned(directory: Path, running: Callable[[], list[int]]) -> Marker:
    """``lab down`` and the heal: the marker of a directory the twin created.

    Raises:
        InputError: no valid marker, or the directory fails the checks (``running``: PIDs to name in the message).
    """
    resolved = _checked(directory)
    path = resolved / MARKER
    try:
        info = path.lstat()
    except FileNotFoundError:
        raise _refusal(directory, f"{resolved} has no {MARKER}: the twin did not create it{_naming(running)}") from None
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022 or info.st_size > 4096:
        raise _refusal(directory, f"{path} is not a file of this user that only it can write")
    try:
        return _MARKER.validate_json(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise _refusal(directory, f"{path} is unreadable or corrupt ({str(exc).splitlines()[0]})") from exc


def _naming(running: Callable[[], list[int]]) -> str:
    pids = running()
    if not pids:
        return ""
    return f" (processes {', '.join(map(str, pids))} run the twin's daemons from its files: stop them yourself if they are yours)"


def write_marker(directory: Path, token: str) -> Marker:
    """Write the marker with ``token``, this boot and this command's start tick (each process the twin starts from
    here on starts later); atomically, never through a link."""
    marker = Marker(token, boot_id(), start_ticks(os.getpid()) or 0)
    write_atomically(directory / MARKER, _MARKER.dump_json(marker) + b"\n")
    return marker


def write_atomically(path: Path, data: bytes) -> None:
    """A reader sees the old file or the new one, never half of one; a link at the temporary name is not followed."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    tmp.replace(path)


def save_state(state: LabState, directory: Path) -> None:
    """Write ``lab.json`` atomically."""
    write_atomically(directory / "lab.json", _STATE.dump_json(state, indent=1) + b"\n")


def load_state(directory: Path) -> LabState | None:
    """The recorded twin under ``directory``, if any.

    Raises:
        LabError: ``lab.json`` is unreadable, corrupt or hostile (``lab down`` ignores it and stops only what it can
            prove the twin started).
    """
    directory = directory.resolve()
    path = directory / "lab.json"
    if not os.path.lexists(path):
        return None
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > RECORD_MAX_BYTES:
            raise ValueError(f"not a regular file under {RECORD_MAX_BYTES} bytes")
        state = _STATE.validate_json(path.read_bytes())
        problem = _problem(state, directory)
        if problem:
            raise ValueError(problem)
    except (OSError, ValueError) as exc:
        msg = f"{path} is corrupt ({str(exc).splitlines()[0]}); run 'python -m fabric lab down' and 'lab up' again"
        raise LabError(msg) from exc
    return state


def _problem(state: LabState, directory: Path) -> str:
    """What makes a well-typed record one this twin never wrote ("" when nothing)."""
    inside = [*(s.run_dir for s in state.switches + state.l2_switches), *(p for p in (state.client_key, state.known_hosts) if p)]
    outside = [p for p in inside if not Path(p).is_absolute() or ".." in Path(p).parts or directory not in Path(p).parents]
    switches = {s.name for s in state.switches + state.l2_switches} | {
        n[len(state.cluster) + 1 :] for n in state.namespaces
    }  # lldpd runs on nodes too
    names = [*state.namespaces, *(s.namespace for s in state.switches + state.l2_switches)]
    daemons = twin_executables()
    checks = {
        f"it records the directory {state.directory!r}": state.directory != str(directory),
        f"paths outside the directory: {', '.join(map(repr, outside))}": bool(outside),
        "a namespace not named <cluster>-<device>": not NAME.fullmatch(state.cluster)
        or not all(n.startswith(f"{state.cluster}-") and NAME.fullmatch(n[len(state.cluster) + 1 :]) for n in names),
        "a process that is not one of the twin's daemons": not all(
            daemons.get(p.exe) and p.name == f"{p.name.split('/')[0]}/{daemons[p.exe]}" and p.name.split("/")[0] in switches for p in state.processes
        ),
        "a process recorded twice": len({p.pid for p in state.processes}) != len(state.processes),
    }
    return next((problem for problem, bad in checks.items() if bad), "")
