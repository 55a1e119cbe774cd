"""The change record of a fabric, written ahead of every device change: a lock, per-change backups, outcomes, audit.

    <state>/push.lock                         held for the whole push; names its holder (pid, host, start)
    <state>/changes/<id>/change.json          who, when, the definition (path, sha256, git revision), commit, rollback_to
    <state>/changes/<id>/definition.yaml      the definition as pushed
    <state>/changes/<id>/<device>.backup      running config before the change (whole)
    <state>/changes/<id>/<device>.before      the owned part of it (what a rollback to this change puts back)
    <state>/changes/<id>/<device>.diff        the remediation sent
    <state>/changes/<id>/<device>.applied     the candidate, once the device committed it
    <state>/changes/<id>/outcomes.jsonl       one line per device, appended as it happens (not reached, interrupted, …)
    <state>/audit.jsonl                       a "started" line before any device is touched, a "finished" line after

Write-ahead: the change directory, the definition, every backup and the "started" line are written and fsynced before
the first device is touched; if any of that fails, no device is touched. Directories are 0700, files 0600, and no
file is opened through a symbolic link (``O_NOFOLLOW``: a planted ``audit.jsonl`` link is an error, not a write).
Access data (keys, passwords) is never recorded.
What people and logs read (diffs, outcomes, drain details, the audit log) is masked through ``fabric.apply.shown``;
the backups (``.backup``, ``.before``) keep the device's config verbatim, because a rollback sends them back.
"""

from __future__ import annotations

import fcntl
import getpass
import hashlib
import json
import os
import socket
from collections.abc import Generator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fabric.apply.revision import definition_revision
from fabric.apply.shown import shown_result, shown_text
from fabric.apply.transaction import PushResult
from fabric.errors import LockedError, PushError, RecordError


def _mkdir(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.chmod(0o700)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_file(path: Path, text: str, *, append: bool = False) -> None:
    """Write (or append) ``text``, mode 0600, and fsync it before returning."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_APPEND if append else os.O_TRUNC)  # never through a link
    fd = os.open(path, flags, 0o600)
    try:
        data = text.encode()
        while data:
            data = data[os.write(fd, data) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    if not append:
        _fsync_dir(path.parent)


@contextmanager
def push_lock(state: Path) -> Generator[None]:
    """Hold ``<state>/push.lock`` exclusively, or raise LockedError at once naming the holder (never wait)."""
    state.mkdir(parents=True, exist_ok=True)
    path = state / "push.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            holder = path.read_text(encoding="utf-8").strip() or "unknown holder"
            msg = f"another push holds {path} ({holder}); wait for it to finish (pushes to one fabric never overlap)"
            raise LockedError(msg) from exc
        holder = f"pid {os.getpid()} on {socket.gethostname()} since {datetime.now(UTC).isoformat(timespec='seconds')}"
        os.ftruncate(fd, 0)
        os.pwrite(fd, holder.encode() + b"\n", 0)
        yield
        os.ftruncate(fd, 0)
    finally:
        os.close(fd)


def new_change_id(now: datetime | None = None) -> str:
    """``20261121T063000123456Z``-style id, sortable by time."""
    return (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%S%fZ")


class ChangeRecord:
    """One change's record; every write is fsynced, and every failure is a RecordError."""

    def __init__(self, state: Path, change: str) -> None:
        self.state = state
        self.change = change
        self.folder = state / "changes" / change

    def _write(self, path: Path, text: str, *, append: bool = False) -> None:
        try:
            write_file(path, text, append=append)
        except OSError as exc:
            msg = f"cannot write the change record {path}: {exc.strerror or exc}; fix the state directory ({self.state}) and retry"
            raise RecordError(msg) from exc

    def begin(self, definition: Path, *, commit: bool, rollback_to: str | None) -> dict[str, Any]:
        """Create the change directory and write the change's header and definition."""
        try:
            _mkdir(self.state / "changes")
            _mkdir(self.folder)
            data = definition.read_bytes()
        except OSError as exc:
            msg = f"cannot create the change record {self.folder}: {exc.strerror or exc}; fix the state directory and retry"
            raise RecordError(msg) from exc
        header: dict[str, Any] = {
            "change": self.change,
            "who": getpass.getuser(),
            "when": datetime.now(UTC).isoformat(timespec="seconds"),
            "definition": str(definition),
            "definition_sha256": hashlib.sha256(data).hexdigest(),
            "definition_revision": definition_revision(definition),
            "commit": commit,
            "rollback_to": rollback_to,
        }
        self._write(self.folder / "definition.yaml", data.decode(errors="replace"))
        self._write(self.folder / "change.json", json.dumps(header, indent=1, sort_keys=True) + "\n")
        return header

    def backup(self, device: str, running: str, owned: str) -> None:
        """The device's running config (whole, and its owned part) before anything is sent to it."""
        self._write(self.folder / f"{device}.backup", running)
        self._write(self.folder / f"{device}.before", owned)

    def started(self, header: dict[str, Any], devices: list[str]) -> None:
        """The audit's "started" line: from here on devices may be touched."""
        self._audit({**header, "event": "started", "devices": devices})

    def outcome(self, result: PushResult, applied: str | None) -> None:
        """One device's outcome, appended as it happens (with its diff and, when committed, its applied config)."""
        shown = shown_result(result)
        if result.diff:  # masked: the record is read by people; the backup stays verbatim for rollback
            self._write(self.folder / f"{result.device}.diff", "\n".join(shown["diff"]) + "\n")
        if applied is not None:
            self._write(self.folder / f"{result.device}.applied", applied)
        line = {"device": result.device, "outcome": outcome(result), **_flags(result), "when": datetime.now(UTC).isoformat(timespec="seconds")}
        self._write(self.folder / "outcomes.jsonl", json.dumps(line, sort_keys=True) + "\n", append=True)

    def drain(self, device: str, event: str, detail: str = "") -> None:
        """A drain step of ``push --drain`` (draining, drained, undrained, undrain failed), appended as it happens: a
        switch with "draining" and no "undrained" after it may still be drained."""
        line = {"device": device, "event": event, "detail": shown_text(detail), "when": datetime.now(UTC).isoformat(timespec="seconds")}
        self._write(self.folder / "drain.jsonl", json.dumps(line, sort_keys=True) + "\n", append=True)

    def finished(self, header: dict[str, Any], results: list[PushResult], *, interrupted: bool) -> dict[str, Any]:
        """The audit's "finished" line with every device's result."""
        diff_text = "\n".join(f"{r.device}\n" + "\n".join(r.diff) for r in sorted(results, key=lambda r: r.device))
        entry = {
            **header,
            "event": "interrupted" if interrupted else "finished",
            "when": datetime.now(UTC).isoformat(timespec="seconds"),
            "diff_sha256": hashlib.sha256(diff_text.encode()).hexdigest(),
            "devices": {r.device: {"outcome": outcome(r), **_flags(r)} for r in results},
        }
        self._audit(entry)
        return entry

    def _audit(self, entry: dict[str, Any]) -> None:
        self._write(self.state / "audit.jsonl", json.dumps(entry, sort_keys=True) + "\n", append=True)


def _flags(result: PushResult) -> dict[str, Any]:
    """The result's flags and error as shown (a device's error output may quote a rejected secret line)."""
    return {key: value for key, value in shown_result(result).items() if key != "diff"}


def outcome(result: PushResult) -> str:
    """One word for a device's result (``not reached`` when nothing was sent to it)."""
    if result.error:
        if not result.reached:
            return "not reached"
        return "rolled back" if result.rolled_back else "failed"
    return "committed" if result.committed else "pending" if result.changed else "unchanged"


def recorded_changes(state: Path) -> list[str]:
    """The change ids with a record, oldest first."""
    folder = state / "changes"
    return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


def _committed(folder: Path) -> set[str]:
    path = folder / "outcomes.jsonl"
    if not path.exists():
        return set()
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {line["device"] for line in lines if line.get("committed")}


def recorded_state(state: Path, until: str | None = None) -> dict[str, str]:
    """Device → the owned config it ran after change ``until`` (default: the latest), from the newest record at or
    before it: the applied candidate where the change committed, else the owned part of its backup. A device the
    record never reached has no entry.

    Raises PushError when ``until`` names no recorded change.
    """
    changes = recorded_changes(state)
    if until is not None and until not in changes:
        known = ", ".join(changes[-5:]) or "none"
        msg = f"no recorded change {until!r} under {state / 'changes'} (latest: {known})"
        raise PushError(msg)
    configs: dict[str, str] = {}
    for change in changes:
        folder = state / "changes" / change
        committed = _committed(folder)
        befores = {p.stem: p for p in folder.glob("*.before")}
        legacy = {p.stem: p for p in folder.glob("*.backup") if p.stem not in befores}  # records written before .before
        for device, path in sorted({**legacy, **befores}.items()):
            applied = folder / f"{device}.applied"
            source = applied if applied.exists() and (device in committed or device in legacy) else path
            configs[device] = source.read_text(encoding="utf-8")
        if change == until:
            break
    return configs


def record_device(state: Path, change: str, result: PushResult, applied: str | None) -> None:
    """Record one device's outcome outside a push (tools, tests): its backup (as its owned part too) and the outcome."""
    log = ChangeRecord(state, change)
    try:
        _mkdir(state / "changes")
        _mkdir(log.folder)
    except OSError as exc:
        msg = f"cannot create the change record {log.folder}: {exc.strerror or exc}"
        raise RecordError(msg) from exc
    log.backup(result.device, result.backup, result.backup)
    log.outcome(result, applied)


def append_audit(
    state: Path, change: str, definition: Path, results: list[PushResult], *, commit: bool, rollback_to: str | None = None
) -> dict[str, Any]:
    """Append a change's "finished" line to ``audit.jsonl`` outside a push (tools, tests) and return it."""
    log = ChangeRecord(state, change)
    header = log.begin(definition, commit=commit, rollback_to=rollback_to)
    return log.finished(header, results, interrupted=False)
