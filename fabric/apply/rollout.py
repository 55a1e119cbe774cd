"""Rollout: canaries first (one switch per tier), then batches with a parallelism limit; stop at the first failure.

Each device runs its own transaction (``fabric.apply.transaction``) through its NOS's adapter: a failing device is
reverted, devices not reached are left untouched and reported as skipped. When a session dies in the middle of a change,
the device is reached again and restored from its backup, so no device is left half-configured.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from fabric.apply.lab import LabState
from fabric.apply.nos import ADAPTERS, Adapter
from fabric.apply.secrets import read_env_secret
from fabric.apply.session import DeviceAccess, Session, connect
from fabric.apply.transaction import PushResult, bgp_no_regression, revert, transaction
from fabric.model.access import SwitchAccessSpec
from fabric.plan.facts import build_switch_facts
from fabric.plan.types import ClusterPlan

Progress = Callable[[str, str], None]
Connector = Callable[[DeviceAccess, Adapter], Session]


@dataclass(frozen=True, slots=True)
class RolloutOptions:
    """How a push proceeds."""

    commit: bool = False
    parallel: int = 4
    stop_on_failure: bool = True
    post_check_s: float = 30.0


def open_session(access: DeviceAccess, adapter: Adapter) -> Session:
    """The real transport: netmiko with the adapter's driver and error pattern."""
    return connect(access, adapter.device_type, adapter.error_pattern)


def canaries(plan: ClusterPlan) -> list[str]:
    """The first switch of each tier, spines first.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> canaries(plan_cluster(load_cluster("inventories/lab/cluster.yaml")))
        ['spine01', 'leaf01']
    """
    fabric = plan.fabric
    assert fabric is not None
    return [tier[0].name for tier in (fabric.spines, fabric.leaves) if tier]


def batches(plan: ClusterPlan, parallel: int) -> list[list[str]]:
    """The rollout order: each canary alone, then the rest in batches of ``parallel``.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> batches(plan_cluster(load_cluster("inventories/lab/cluster.yaml")), 4)
        [['spine01'], ['leaf01'], ['spine02', 'leaf02']]
    """
    fabric = plan.fabric
    assert fabric is not None
    first = canaries(plan)
    rest = [s.name for s in fabric.switches if s.name not in first]
    return [[name] for name in first] + [rest[i : i + parallel] for i in range(0, len(rest), parallel)]


def lab_access(state: LabState) -> dict[str, DeviceAccess]:
    """Access to the twin's switches: loopback ports, the twin's client key and known_hosts."""
    return {s.name: DeviceAccess(s.name, "127.0.0.1", s.ssh_port, "root", state.client_key, state.known_hosts) for s in state.switches}


def device_access(plan: ClusterPlan, access: SwitchAccessSpec, base: Path, definition: str | None = None) -> dict[str, DeviceAccess]:
    """Access to real switches: management address, key and password from the environment or the SSH agent, verified host keys.

    Raises:
        InputError: the definition names an environment variable that is not set.
    """
    fabric = plan.fabric
    assert fabric is not None
    creds = access.credentials
    key = read_env_secret(creds.ssh_key_env, "ssh_key_env", definition)
    password = read_env_secret(creds.password_env, "password_env", definition)
    known = str((base / access.known_hosts).resolve())
    return {
        s.name: DeviceAccess(s.name, s.mgmt_address.split("/")[0], access.port, creds.username, key, known, creds.use_ssh_agent, password)
        for s in fabric.switches
    }


def push_fabric(
    plan: ClusterPlan,
    candidates: Mapping[str, str],
    access: Mapping[str, DeviceAccess],
    options: RolloutOptions,
    progress: Progress,
    *,
    change: str,
    connector: Connector = open_session,
) -> list[PushResult]:
    """Push every switch's candidate; returns one result per switch (skipped devices carry an error saying so)."""
    fabric = plan.fabric
    assert fabric is not None
    nos = {s.name: s.nos for s in fabric.switches}
    peers = {f.switch.name: len(f.neighbors) for f in build_switch_facts(plan)}
    results: dict[str, PushResult] = {}
    failed = False
    for batch in batches(plan, options.parallel):
        if failed and options.stop_on_failure:
            for name in batch:
                results[name] = PushResult(name, changed=False, diff=[], error="skipped: the rollout stopped at an earlier failure")
                progress(name, "skipped")
            continue

        def run_one(name: str) -> PushResult:
            device = _Device(name, ADAPTERS[nos[name]], access[name], peers[name], connector)
            return device.push(candidates[name], change=change, options=options, progress=progress)

        with ThreadPoolExecutor(max_workers=max(1, len(batch))) as pool:
            done = list(pool.map(run_one, batch))
        for result in done:
            results[result.device] = result
            failed = failed or result.error is not None
    return [results[s.name] for s in fabric.switches]


@dataclass(frozen=True, slots=True)
class _Device:
    name: str
    adapter: Adapter
    access: DeviceAccess
    peers: int
    connector: Connector

    def push(self, candidate: str, *, change: str, options: RolloutOptions, progress: Progress) -> PushResult:
        progress(self.name, "connecting")
        try:
            session = self.connector(self.access, self.adapter)
        except Exception as exc:  # noqa: BLE001 - any transport failure is this device's failure, reported, never raised
            progress(self.name, "failed")
            return PushResult(self.name, changed=False, diff=[], error=f"cannot connect: {exc}")
        backup: str | None = None
        try:
            backup = self.adapter.running(session)
            progress(self.name, "applying" if options.commit else "diff")
            check = bgp_no_regression(self.adapter, self.adapter.bgp_sessions(session), self.peers, options.post_check_s)
            result = transaction(self.adapter, session, candidate, backup, change=change, commit=options.commit, post_check=check)
        except Exception as exc:  # noqa: BLE001 - e.g. the session died mid-change: restore from the backup, report it
            result = self._recover(backup, change, exc) if options.commit and backup is not None else None
            result = result or PushResult(self.name, changed=False, diff=[], error=f"session failed: {exc}", backup=backup or "")
        finally:
            _close(session)
        result.device = self.name
        progress(self.name, _outcome(result))
        return result

    def _recover(self, backup: str, change: str, exc: Exception) -> PushResult:
        """Reach the device again and put its backup back; the result says whether that worked."""
        error = f"session failed mid-change: {exc}"
        result = PushResult(self.name, changed=True, diff=[], error=error, backup=backup)
        try:
            session = self.connector(self.access, self.adapter)
        except Exception as again:  # noqa: BLE001 - reported: the device needs a human
            result.error = f"{error}; ROLLBACK INCOMPLETE: cannot reconnect ({again})"
            return result
        try:
            untouched = not self.adapter.diff(self.adapter.running(session), backup)
            result.rolled_back = untouched or revert(self.adapter, session, change, backup)
            result.changed = not untouched
        finally:
            _close(session)
        result.error = f"{error}; restored from the backup" if result.rolled_back else f"{error}; ROLLBACK INCOMPLETE"
        return result


def _close(session: Session) -> None:
    with contextlib.suppress(Exception):  # closing a dead session may fail; nothing is left to do
        session.disconnect()


def _outcome(result: PushResult) -> str:
    if result.error:
        return "rolled back" if result.rolled_back else "failed"
    return "committed" if result.committed else "pending" if result.changed else "unchanged"
