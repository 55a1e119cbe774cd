"""Rollout: read every backup first, then canaries (one switch per tier), then batches with a parallelism limit; stop
at the first failure, or when asked to (SIGINT/SIGTERM: devices in flight finish, the rest are not reached).

Each device runs its own transaction (``fabric.apply.transaction``) through its NOS's adapter within one overall
deadline: a failing device is reverted, devices not reached are left untouched and reported so. When a session dies
in the middle of a change, the device is reached again and restored from its backup, so no device is left
half-configured. Every backup and outcome goes to the change record (``fabric.apply.record``) as it happens.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from fabric.apply.checks import all_of, fabric_post_check, planned_routes, reachable_after
from fabric.apply.drain import refuse_undrainable
from fabric.apply.hitless import Drain
from fabric.apply.lab import LabState
from fabric.apply.neighbours import Neighbour, NeighbourView, Paths, SessionPool, fewer_paths, neighbours_of
from fabric.apply.nos import ADAPTERS, Adapter
from fabric.apply.record import ChangeRecord
from fabric.apply.secrets import read_env_secret
from fabric.apply.session import DeadlineError, DeviceAccess, Session, connect
from fabric.apply.transaction import PushResult, revert, transaction
from fabric.model.access import SwitchAccessSpec
from fabric.plan.facts import build_switch_facts
from fabric.plan.types import ClusterPlan

Progress = Callable[[str, str], None]
Connector = Callable[[DeviceAccess, Adapter], Session]


@dataclass(frozen=True)
class RolloutOptions:
    """How a push proceeds."""

    commit: bool = False
    parallel: int = 4
    stop_on_failure: bool = True
    post_check_s: float = 30.0
    post_check_hold_s: float = 6.0  # BGP and routes must stay clean this long (FRR applies route-map changes after 5 s)
    deadline_s: float = 120.0  # one overall deadline per device transaction (read, stage, checks, confirm)
    reach_check: bool = True  # a fresh SSH login (host key verified) and a show command before confirming
    neighbour_check: bool = True  # the post-check also reads every neighbour's routes (loss visible only there)
    drain: bool = False  # push --drain: one switch at a time, drained before its change, undrained after
    drain_timeout_s: float = 60.0  # for the neighbours to move the traffic off (and back)
    stop: threading.Event = field(default_factory=threading.Event)  # set: finish devices in flight, reach no more


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


@dataclass(frozen=True, slots=True)
class Target:
    """One switch of the rollout: its adapter, access, candidate, the candidate last pushed, and what the plan says."""

    name: str
    adapter: Adapter
    access: DeviceAccess
    candidate: str
    previous: str
    peers: int
    routes: Mapping[str, int]
    neighbours: tuple[Neighbour, ...] = ()
    own: frozenset[str] = frozenset()  # the prefixes it originates


def targets(plan: ClusterPlan, candidates: Mapping[str, str], access: Mapping[str, DeviceAccess], previous: Mapping[str, str]) -> list[Target]:
    """Every switch of the plan that has a candidate, as a rollout target, in plan order."""
    facts = build_switch_facts(plan)
    routes = planned_routes(facts)
    every = {f.switch.name: f for f in facts}
    adapters = {f.switch.name: ADAPTERS[f.switch.nos] for f in facts}
    return [
        Target(f.switch.name, ADAPTERS[f.switch.nos], access[f.switch.name], candidates[f.switch.name], previous.get(f.switch.name, ""),
               len(f.neighbors), routes.get(f.switch.name, {}), neighbours_of(f, every, access, adapters, routes), frozenset(f.originated))
        for f in facts if f.switch.name in candidates
    ]  # fmt: skip


def push_fabric(
    plan: ClusterPlan,
    candidates: Mapping[str, str],
    access: Mapping[str, DeviceAccess],
    options: RolloutOptions,
    progress: Progress,
    *,
    change: str,
    connector: Connector = open_session,
    record: ChangeRecord | None = None,
    previous: Mapping[str, str] | None = None,
    on_started: Callable[[list[str]], None] | None = None,
) -> list[PushResult]:
    """Push every switch's candidate; returns one result per switch (devices not reached say why; a switch without a
    candidate, such as one a rollback target change never reached, is not reached at all).

    First every backup is read and recorded; ``on_started`` then writes the "started" audit line. A RecordError there
    stops everything before any device is touched.
    """
    fabric = plan.fabric
    assert fabric is not None
    if options.drain and options.commit:
        refuse_undrainable({s.name: s.nos for s in fabric.switches if s.name in candidates})
    devices = {t.name: t for t in targets(plan, candidates, access, previous or {})}
    backups, sessions, results = _read_all(list(devices.values()), record, options, connector, progress)
    pool = SessionPool(connector)  # the neighbour checks' sessions, one per switch, shared by every change
    try:
        _rollout(
            plan, devices, backups=backups, sessions=sessions, results=results, options=options, progress=progress,
            change=change, connector=connector, record=record, on_started=on_started, pool=pool,
        )  # fmt: skip
    finally:
        pool.close()
        for session in sessions.values():
            _close(session)
    return [results[s.name] for s in fabric.switches]


def _rollout(
    plan: ClusterPlan,
    devices: Mapping[str, Target],
    *,
    backups: Mapping[str, str],
    sessions: Mapping[str, Session],
    results: dict[str, PushResult],
    options: RolloutOptions,
    progress: Progress,
    change: str,
    connector: Connector,
    record: ChangeRecord | None,
    on_started: Callable[[list[str]], None] | None,
    pool: SessionPool,
) -> None:
    """Canaries, then batches: each device's transaction on the session its backup was read in."""
    fabric = plan.fabric
    assert fabric is not None
    for switch in fabric.switches:
        if switch.name not in devices:
            results[switch.name] = _not_reached(switch.name, "not reached: the record has no config to return it to", record, progress)
    if on_started is not None:
        on_started(sorted(backups))
    if not options.commit:
        results.update({name: _dry_run(devices[name], backup, record, progress) for name, backup in backups.items()})
        return
    failed = any(r.error for r in results.values())
    for batch in batches(plan, 1 if options.drain else options.parallel):  # two drained spines at once could strand a leaf
        todo = [name for name in batch if name in backups]
        if options.stop.is_set() or (failed and options.stop_on_failure):
            why = "interrupted: stopped before this device" if options.stop.is_set() else "skipped: the rollout stopped at an earlier failure"
            for name in todo:
                results[name] = _not_reached(name, why, record, progress)
            continue

        def run_one(name: str) -> PushResult:
            device = _Device(devices[name], connector, options, progress, record, pool)
            return device.run(backups[name], change=change, session=sessions.get(name))

        with ThreadPoolExecutor(max_workers=max(1, len(todo))) as workers:
            done = list(workers.map(run_one, todo))
        for result in done:
            results[result.device] = result
            failed = failed or result.error is not None


def _read_all(
    devices: list[Target], record: ChangeRecord | None, options: RolloutOptions, connector: Connector, progress: Progress
) -> tuple[dict[str, str], dict[str, Session], dict[str, PushResult]]:
    """Read and record every backup (in parallel) before anything is sent; unreadable devices are not reached. A push
    keeps the sessions open for its transactions; a dry run closes them."""

    def read(target: Target) -> tuple[str, str | Exception, Session | None]:
        progress(target.name, "reading backup")
        try:
            session = _bounded(connector(target.access, target.adapter), time.monotonic() + options.deadline_s)
        except Exception as exc:  # noqa: BLE001 - an unreachable device is reported, never raised
            return target.name, exc, None
        try:
            running = target.adapter.running(session)
        except Exception as exc:  # noqa: BLE001 - same
            _close(session)
            return target.name, exc, None
        if not options.commit:
            _close(session)
        return target.name, running, session if options.commit else None

    with ThreadPoolExecutor(max_workers=min(16, max(1, len(devices)))) as pool:
        read_out = {name: (running, session) for name, running, session in pool.map(read, devices)}
    backups: dict[str, str] = {}
    sessions: dict[str, Session] = {}
    results: dict[str, PushResult] = {}
    try:
        for target in devices:
            running, session = read_out[target.name]
            if isinstance(running, Exception):
                results[target.name] = _not_reached(target.name, f"not reached: cannot read the running config ({running})", record, progress)
                continue
            if record is not None:
                record.backup(target.name, running, target.adapter.owned(running, target.candidate, target.previous))
            backups[target.name] = running
            if session is not None:
                sessions[target.name] = session
    except BaseException:
        for _, session in read_out.values():
            if session is not None:
                _close(session)
        raise
    return backups, sessions, results


def _dry_run(target: Target, backup: str, record: ChangeRecord | None, progress: Progress) -> PushResult:
    """What the push would change, from the backup just read (nothing is sent)."""
    diff = target.adapter.diff(backup, target.candidate, target.previous)
    result = PushResult(target.name, changed=bool(diff), diff=diff, backup=backup)
    if record is not None:
        record.outcome(result, None)
    progress(target.name, _outcome(result))
    return result


def _not_reached(name: str, why: str, record: ChangeRecord | None, progress: Progress) -> PushResult:
    result = PushResult(name, changed=False, diff=[], error=why, reached=False)
    if record is not None:
        record.outcome(result, None)
    progress(name, why)
    return result


def _bounded(session: Session, deadline: float) -> Session:
    """Give a netmiko session the device's deadline (every command's read timeout is cut to what is left)."""
    if hasattr(session, "deadline"):
        session.deadline = deadline  # pyright: ignore[reportAttributeAccessIssue]
    return session


@dataclass(frozen=True, slots=True)
class _Device:
    target: Target
    connector: Connector
    options: RolloutOptions
    progress: Progress
    record: ChangeRecord | None
    pool: SessionPool | None = None  # the rollout's neighbour sessions (None: this device opens its own)

    @property
    def name(self) -> str:
        return self.target.name

    def run(self, backup: str, *, change: str, session: Session | None = None) -> PushResult:
        """The device's transaction (on ``session`` when open, else a new one); never raises (a failure, even in the
        recovery, is the device's result)."""
        try:
            result = self._push(backup, change, session)
        except Exception as exc:  # noqa: BLE001 - e.g. the recovery itself failed: report it, keep the rollout going
            result = PushResult(self.name, changed=True, diff=[], error=f"push failed: {exc}; ROLLBACK UNKNOWN: check the device", backup=backup)
        result.device = self.name
        if self.record is not None:
            self.record.outcome(result, self.target.candidate if result.committed else None)
        self.progress(self.name, _outcome(result))
        return result

    def _push(self, backup: str, change: str, session: Session | None) -> PushResult:
        waits = 2 * self.options.drain_timeout_s if self.options.drain else 0.0  # draining and undraining wait for the neighbours
        deadline = time.monotonic() + self.options.deadline_s + waits
        self.progress(self.name, "connecting")
        try:
            session = _bounded(session or self.connector(self.target.access, self.target.adapter), deadline)
        except Exception as exc:  # noqa: BLE001 - any transport failure is this device's failure, reported, never raised
            return PushResult(self.name, changed=False, diff=[], error=f"not reached: cannot connect ({exc})", backup=backup, reached=False)
        try:
            return self._transaction(session, backup, change, deadline)
        except Exception as exc:  # noqa: BLE001 - e.g. the session died mid-change: restore from the backup, report it
            if time.monotonic() >= deadline:
                first = (str(exc).splitlines() or [""])[0]
                exc = DeadlineError(f"deadline of {self.options.deadline_s:g} s reached ({type(exc).__name__}: {first})")
            if self.options.commit:
                return self._recover(backup, change, exc)
            return PushResult(self.name, changed=False, diff=[], error=f"session failed: {exc}", backup=backup)
        finally:
            _close(session)

    def _transaction(self, session: Session, backup: str, change: str, deadline: float) -> PushResult:
        adapter, target = self.target.adapter, self.target
        running = adapter.running(session)
        if running != backup and self.record is not None:
            self.record.backup(self.name, running, adapter.owned(running, target.candidate, target.previous))  # changed since the read
        self.progress(self.name, "applying" if self.options.commit else "diff")
        if not self.options.commit:
            return transaction(adapter, session, target.candidate, running, change=change, commit=False, previous=target.previous)
        if not adapter.diff(running, target.candidate, target.previous):  # nothing to change: no neighbour to read, no drain
            return transaction(adapter, session, target.candidate, running, change=change, commit=True, previous=target.previous)
        own_pool = SessionPool(self.connector) if self.pool is None else None
        pool = self.pool or own_pool
        assert pool is not None
        view = NeighbourView(target.neighbours, pool) if self.options.neighbour_check or self.options.drain else None
        try:
            if view is not None and self.options.drain:
                drain = Drain(self.name, adapter, session, view, target.own, change, timeout_s=self.options.drain_timeout_s,
                              hold_s=self.options.post_check_hold_s, record=self.record, progress=self.progress)  # fmt: skip
                return drain.run(running, target.candidate, lambda cand, now, paths: self._change(session, cand, now, change, deadline, view, paths))
            return self._change(session, target.candidate, running, change, deadline, view, view.read() if view else {})
        finally:
            if own_pool is not None:
                own_pool.close()

    def _change(  # noqa: PLR0917 - private; one call site each in _transaction and its drain
        self, session: Session, candidate: str, running: str, change: str, deadline: float, view: NeighbourView | None, before: Mapping[str, Paths]
    ) -> PushResult:
        """The transaction, its post-check reading the switch, its neighbours (no fewer paths than ``before``) and a fresh login."""
        adapter, target = self.target.adapter, self.target
        if view is not None and view.skipped:
            self.progress(self.name, f"neighbours not checked (unreachable): {', '.join(sorted(view.skipped))}")
        elsewhere = (lambda: fewer_paths(view, before, view.read())) if view is not None else None
        check = fabric_post_check(
            adapter, adapter.bgp_sessions(session), adapter.routes(session), expected_peers=target.peers, planned_routes=target.routes,
            timeout_s=max(0.0, min(self.options.post_check_s, deadline - time.monotonic())), hold_s=self.options.post_check_hold_s,
            waiting=lambda what: self.progress(self.name, what), also=elsewhere,
        )  # fmt: skip
        if self.options.reach_check:
            fresh = lambda: _bounded(self.connector(target.access, adapter), deadline)  # noqa: E731 - a one-line factory
            check = all_of(check, reachable_after(fresh, adapter.reach_command))
        return transaction(adapter, session, candidate, running, change=change, commit=True, post_check=check, previous=target.previous)

    def _recover(self, backup: str, change: str, exc: Exception) -> PushResult:
        """Reach the device again and put its backup back; the result says whether that worked."""
        error = f"session failed mid-change: {exc}"
        result = PushResult(self.name, changed=True, diff=[], error=error, backup=backup)
        adapter = self.target.adapter
        self.progress(self.name, "recovering: restoring the backup")
        try:
            session = _bounded(self.connector(self.target.access, adapter), time.monotonic() + RECOVERY_S)
        except Exception as again:  # noqa: BLE001 - reported: the device needs a human
            result.error = f"{error}; ROLLBACK INCOMPLETE: cannot reconnect ({again})"
            return result
        try:
            untouched = not adapter.diff(adapter.running(session), backup, self.target.candidate)
            result.rolled_back = untouched or revert(adapter, session, change, backup, self.target.candidate)
            result.changed = not untouched
        except Exception as again:  # noqa: BLE001 - reported: the device needs a human
            result.error = f"{error}; ROLLBACK INCOMPLETE: {again}"
            return result
        finally:
            _close(session)
        result.error = f"{error}; restored from the backup" if result.rolled_back else f"{error}; ROLLBACK INCOMPLETE"
        return result


RECOVERY_S = 60.0


def _close(session: Session) -> None:
    with contextlib.suppress(Exception):  # closing a dead session may fail; nothing is left to do
        session.disconnect()


def _outcome(result: PushResult) -> str:
    if result.error:
        return result.error if not result.reached else ("rolled back: " if result.rolled_back else "failed: ") + result.error
    return "committed" if result.committed else "pending" if result.changed else "unchanged"
