"""One napalm-style transaction on one device, whatever its NOS.

backup (given) → diff against the candidate → (dry run stops here) → stage under the NOS's undo mechanism → post-checks
→ confirm, or revert to the backup and say why. ``changed`` is true only when the diff was not empty.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from fabric.apply.nos import Adapter
from fabric.apply.session import Session

PostCheck = Callable[[Session], list[str]]


@dataclass(slots=True)
class PushResult:
    """What happened on one device."""

    device: str
    changed: bool
    diff: list[str]
    committed: bool = False
    rolled_back: bool = False
    error: str | None = None
    backup: str = ""
    reached: bool = True  # False: nothing was sent to the device (unreachable, skipped, interrupted before it)
    checks: list[str] = field(default_factory=list[str])


def transaction(
    adapter: Adapter,
    session: Session,
    candidate: str,
    backup: str,
    *,
    change: str,
    commit: bool,
    post_check: PostCheck | None = None,
    previous: str = "",
) -> PushResult:
    """Push ``candidate`` to the device behind ``session`` (open; the caller closes it). ``backup`` is its running config,
    ``previous`` the candidate of the last recorded push (what the plan no longer has is removed)."""
    diff = adapter.diff(backup, candidate, previous)
    result = PushResult("", changed=bool(diff), diff=diff, backup=backup)
    if not diff or not commit:
        return result
    try:
        adapter.stage(session, change, diff, candidate)
    except Exception as exc:  # noqa: BLE001 - any failure while applying must lead to the rollback below
        result.error = f"rejected: {exc}"
        result.rolled_back = revert(adapter, session, change, backup, candidate)
        return _incomplete(result)
    problems = post_check(session) if post_check else []
    if problems:
        result.error = "post-check failed: " + "; ".join(problems)
        result.checks = problems
        result.rolled_back = revert(adapter, session, change, backup, candidate)
        return _incomplete(result)
    adapter.confirm(session, change)
    result.committed = True
    return result


def revert(adapter: Adapter, session: Session, change: str, backup: str, candidate: str = "") -> bool:
    """Undo the change; True when the running config equals the backup afterwards (on everything the backup or the
    candidate owns: a line the change added is seen)."""
    adapter.revert(session, change, backup)
    return not adapter.diff(adapter.running(session), backup, candidate)


def _incomplete(result: PushResult) -> PushResult:
    if not result.rolled_back:
        result.error = f"{result.error}; ROLLBACK INCOMPLETE: running config differs from the backup"
    return result


def bgp_no_regression(adapter: Adapter, before: dict[str, str], expected_peers: int, timeout_s: float = 30.0) -> PostCheck:
    """Post-check: every session established before the change and still configured is established again within
    ``timeout_s``, and the device has its ``expected_peers`` sessions configured. A peer no longer configured was
    removed by the change itself (only the owned diff touches BGP): it is not lost. (Sessions to peers not configured
    yet come up later in the rollout; ``verify`` checks the whole fabric at the end.)"""

    def check(session: Session) -> list[str]:
        deadline = time.monotonic() + timeout_s
        while True:
            state = adapter.bgp_sessions(session)
            lost = [p for p, s in before.items() if s == "Established" and p in state and state[p] != "Established"]
            if not lost and len(state) == expected_peers:
                return []
            if time.monotonic() >= deadline:
                break
            time.sleep(0.5)
        problems = [f"BGP sessions lost after the change: {', '.join(lost)}"] if lost else []
        if len(state) != expected_peers:
            problems.append(f"{len(state)} BGP sessions configured, the plan has {expected_peers}")
        return problems

    return check
