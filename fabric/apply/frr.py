"""The FRR adapter over netmiko: one napalm-style transaction per device.

backup the running config → diff against the candidate → (dry run stops here) → apply the remediation with an
``error_pattern`` so any rejected line aborts → post-checks (BGP established, ECMP present) → save, or roll back to
the backup and say why. ``changed`` is true only when the diff was not empty.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from fabric.apply.diff import remediation

if TYPE_CHECKING:
    from netmiko import BaseConnection

ERROR_PATTERN = r"^% "  # FRR prefixes every rejected line with "% " (Unknown command, Invalid input, ...)
APPLY_TIMEOUT_S = 60
DEVICE_TYPE = "cisco_ios"  # netmiko's driver that speaks FRR vtysh (shared/reference/test-harness.md A.3a)


class Session(Protocol):
    """The transport boundary: what the adapter needs from a device session (netmiko here, recordings in tests)."""

    def show(self, command: str) -> str:
        """Run a read-only command and return its output."""
        ...

    def configure(self, lines: list[str]) -> str:
        """Apply config lines; raise if the device rejects any of them."""
        ...

    def exit_config_mode(self) -> None:
        """Leave config mode (after a rejected line the session is still in it)."""
        ...

    def save(self) -> None:
        """Persist the running config."""
        ...

    def disconnect(self) -> None:
        """Close the session."""
        ...


class NetmikoSession:
    """A netmiko connection behind the Session protocol; every config call carries the error pattern."""

    def __init__(self, connection: BaseConnection) -> None:
        self._conn = connection

    def show(self, command: str) -> str:
        return str(self._conn.send_command(command, read_timeout=APPLY_TIMEOUT_S))

    def configure(self, lines: list[str]) -> str:
        return self._conn.send_config_set(lines, error_pattern=ERROR_PATTERN, read_timeout=APPLY_TIMEOUT_S)

    def exit_config_mode(self) -> None:
        self._conn.exit_config_mode()

    def save(self) -> None:
        self._conn.save_config()

    def disconnect(self) -> None:
        self._conn.disconnect()


@dataclass(frozen=True, slots=True)
class DeviceAccess:
    """How to reach one switch: address, port, user, key file and the known-hosts file its host key must match."""

    name: str
    host: str
    port: int
    username: str
    key_file: str | None
    known_hosts: str
    use_agent: bool = False


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
    checks: list[str] = field(default_factory=list[str])


def connect(access: DeviceAccess) -> Session:
    """An SSH session whose host key is verified against ``access.known_hosts`` (unknown or changed keys are refused)."""
    from netmiko import ConnectHandler

    connection = ConnectHandler(
        device_type=DEVICE_TYPE,
        host=access.host,
        port=access.port,
        username=access.username,
        use_keys=access.key_file is not None,
        key_file=access.key_file,
        allow_agent=access.use_agent,
        ssh_strict=True,
        system_host_keys=False,
        alt_host_keys=True,
        alt_key_file=access.known_hosts,
        conn_timeout=10,
    )
    return NetmikoSession(connection)


PostCheck = Callable[[Session], list[str]]


def bgp_sessions(session: Session) -> dict[str, str]:
    """BGP peer → state, as the device reports it."""
    summary = json.loads(session.show("show bgp ipv4 unicast summary json") or "{}")
    return {name: peer.get("state", "?") for name, peer in summary.get("peers", {}).items()}


def bgp_no_regression(before: dict[str, str], expected_peers: int, timeout_s: float = 30.0) -> PostCheck:
    """Post-check: every session that was established before the change is established again within ``timeout_s``,
    and the device has its ``expected_peers`` sessions configured. (Sessions to peers not configured yet come up later
    in the rollout; ``verify`` checks the whole fabric at the end.)"""

    def check(session: Session) -> list[str]:
        deadline = time.monotonic() + timeout_s
        while True:
            state = bgp_sessions(session)
            lost = [p for p, s in before.items() if s == "Established" and state.get(p) != "Established"]
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


def push_frr(session: Session, candidate: str, *, commit: bool, post_check: PostCheck | None = None) -> PushResult:
    """One transaction on one FRR device (``session`` is open; the caller closes it)."""
    backup = session.show("show running-config")
    diff = remediation(backup, candidate)
    result = PushResult("", changed=bool(diff), diff=diff, backup=backup)
    if not diff or not commit:
        return result
    try:
        session.configure(diff)
    except Exception as exc:  # noqa: BLE001 - any failure while applying must lead to the rollback below
        session.exit_config_mode()
        result.error = f"rejected: {exc}"
        _roll_back(session, result)
        return result
    problems = post_check(session) if post_check else []
    if problems:
        result.error = "post-check failed: " + "; ".join(problems)
        result.checks = problems
        _roll_back(session, result)
        return result
    session.save()
    result.committed = True
    return result


def _roll_back(session: Session, result: PushResult) -> None:
    """Return the device to the backup; the result records whether the running config matches it afterwards."""
    current = session.show("show running-config")
    undo = remediation(current, result.backup)
    if undo:
        session.configure(undo)
    after = session.show("show running-config")
    result.rolled_back = not remediation(after, result.backup)
    if not result.rolled_back:
        result.error = f"{result.error}; ROLLBACK INCOMPLETE: running config differs from the backup"
