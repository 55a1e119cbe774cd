"""The change record of a fabric: a lock, per-change backups and applied configs, and an append-only audit log.

    <state>/push.lock                        held for the whole push (a second push is refused)
    <state>/changes/<id>/<device>.backup     running config before the change
    <state>/changes/<id>/<device>.applied    what the device runs after it (only when committed)
    <state>/changes/<id>/<device>.diff       the remediation sent
    <state>/audit.jsonl                      one JSON line per push: who, when, definition digest, per-device result

Never holds a secret: configs carry none, and access data (keys, passwords) is not recorded.
"""

from __future__ import annotations

import fcntl
import getpass
import hashlib
import json
from collections.abc import Generator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from fabric.apply.secrets import ANY_NOS, mask_lines, mask_secrets
from fabric.apply.transaction import PushResult
from fabric.errors import PushError


class LockedError(PushError):
    """Another push to the same fabric is running."""


@contextmanager
def push_lock(state: Path) -> Generator[None]:
    """Hold ``<state>/push.lock`` exclusively, or raise LockedError at once (never wait behind another push)."""
    state.mkdir(parents=True, exist_ok=True)
    handle: IO[str] = (state / "push.lock").open("a+", encoding="utf-8")
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            msg = f"another push holds {state / 'push.lock'}; wait for it to finish (pushes to one fabric never overlap)"
            raise LockedError(msg) from exc
        yield
    finally:
        handle.close()


def new_change_id(now: datetime | None = None) -> str:
    """``20261121T063000Z``-style id, sortable by time."""
    return (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%S%fZ")


def record_device(state: Path, change: str, result: PushResult, applied: str | None) -> None:
    """Keep one device's backup, diff and (when committed) applied config under the change."""
    folder = state / "changes" / change
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{result.device}.backup").write_text(result.backup, encoding="utf-8")
    diff = mask_lines(ANY_NOS, result.diff)  # the record is read by people; the backup stays verbatim for rollback
    (folder / f"{result.device}.diff").write_text("\n".join(diff) + ("\n" if diff else ""), encoding="utf-8")
    if applied is not None:
        (folder / f"{result.device}.applied").write_text(applied, encoding="utf-8")


def append_audit(
    state: Path, change: str, definition: Path, results: list[PushResult], *, commit: bool, rollback_to: str | None = None
) -> dict[str, object]:
    """Append one line to ``audit.jsonl`` and return it."""
    diff_text = "\n".join(f"{r.device}\n" + "\n".join(r.diff) for r in sorted(results, key=lambda r: r.device))
    entry: dict[str, object] = {
        "change": change,
        "who": getpass.getuser(),
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "definition": str(definition),
        "definition_sha256": hashlib.sha256(definition.read_bytes()).hexdigest(),
        "diff_sha256": hashlib.sha256(diff_text.encode()).hexdigest(),
        "commit": commit,
        "rollback_to": rollback_to,
        "devices": {
            r.device: {
                "changed": r.changed,
                "committed": r.committed,
                "rolled_back": r.rolled_back,
                "error": r.error and mask_secrets(ANY_NOS, r.error),
            }
            for r in results
        },
    }
    with (state / "audit.jsonl").open("a", encoding="utf-8") as log:
        log.write(json.dumps(entry, sort_keys=True) + "\n")
    return entry


def recorded_changes(state: Path) -> list[str]:
    """The change ids with a record, oldest first."""
    folder = state / "changes"
    return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


def recorded_config(state: Path, change: str, device: str) -> str | None:
    """What ``device`` ran after ``change`` (its applied config, else its backup if the change did not commit there)."""
    folder = state / "changes" / change
    for suffix in ("applied", "backup"):
        path = folder / f"{device}.{suffix}"
        if path.exists():
            return path.read_text(encoding="utf-8")
    return None


def recorded_state(state: Path, until: str | None = None) -> dict[str, str]:
    """Device → the config it ran after change ``until`` (default: the latest), from the newest record at or before it.

    Raises PushError when ``until`` names no recorded change.
    """
    changes = recorded_changes(state)
    if until is not None and until not in changes:
        known = ", ".join(changes[-5:]) or "none"
        msg = f"no recorded change {until!r} under {state / 'changes'} (latest: {known})"
        raise PushError(msg)
    configs: dict[str, str] = {}
    for change in changes:
        for path in sorted((state / "changes" / change).glob("*.backup")):
            config = recorded_config(state, change, path.stem)
            if config is not None:
                configs[path.stem] = config
        if change == until:
            break
    return configs
