"""One device's transaction in a rollout: connect (or reuse the session its backup was read in), stage, post-check,
confirm or revert; a session that dies mid-change is reached again and the backup restored.

The post-check depends on the device's plane: a compute switch's BGP sessions and routes (and its neighbours'), an L2
switch's VLANs and ports (``fabric.apply.checks.l2``); both end with a fresh SSH login, so no change that locks the
management path out is ever confirmed.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from fabric.apply.checks.l2 import L2Expect, l2_post_check, read_l2
from fabric.apply.checks.neighbours import Neighbour, NeighbourView, Paths, SessionPool, fewer_paths
from fabric.apply.checks.routing import all_of, fabric_post_check, reachable_after
from fabric.apply.hitless import Drain
from fabric.apply.nos import ADAPTERS, Adapter
from fabric.apply.planes import PLANES
from fabric.apply.record import ChangeRecord
from fabric.apply.session import DeviceAccess, Session, connect
from fabric.apply.terminal import one_line
from fabric.apply.transaction import PushResult, revert, transaction
from fabric.errors import DeadlineError

Progress = Callable[[str, str], None]
Connector = Callable[[DeviceAccess, Adapter], Session]
RECOVERY_S = 60.0
COMPUTE = ("compute",)
"""The library's default selection: the compute fabric (what the API pushed before the planes); the CLI passes every plane."""


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
    planes: tuple[str, ...] = COMPUTE  # the planes pushed, in push order (fabric.apply.planes.PLANES)
    canaries_only: bool = False  # push --canaries: only each plane's canary (fabric.apply.push.canary_names), the rest later
    # NOS → the adapter that pushes it. A real fabric: each NOS its own. The twin rehearses a SONiC switch's routing
    # config in FRR, so its entry point passes {"sonic": the FRR adapter} on top (fabric.twin.access.adapters_for).
    adapters: Mapping[str, Adapter] = field(default_factory=lambda: ADAPTERS)

    def __post_init__(self) -> None:
        unknown = [p for p in self.planes if p not in PLANES]
        if unknown:
            msg = f"RolloutOptions.planes: {unknown} are not planes; choose from {PLANES}"
            raise ValueError(msg)


def open_session(access: DeviceAccess, adapter: Adapter) -> Session:
    """The real transport: netmiko with the adapter's driver and error pattern."""
    return connect(access, adapter.device_type, adapter.error_pattern)


@dataclass(frozen=True, slots=True)
class Target:
    """One switch of the rollout: its adapter, access, candidate, the candidate last pushed, and what the plan says
    (BGP peers, routes and neighbours of a compute switch; the bridge of an L2 one, ``l2``)."""

    name: str
    adapter: Adapter
    access: DeviceAccess
    candidate: str
    previous: str
    peers: int
    routes: Mapping[str, int]
    neighbours: tuple[Neighbour, ...] = ()
    own: frozenset[str] = frozenset()  # the prefixes it originates
    l2: L2Expect | None = None  # an L2 plane's switch: post-checked on its VLANs and ports instead of BGP and routes


def bounded(session: Session, deadline: float) -> Session:
    """Give a netmiko session the device's deadline (every command's read timeout is cut to what is left)."""
    if hasattr(session, "deadline"):
        session.deadline = deadline  # pyright: ignore[reportAttributeAccessIssue]
    return session


@dataclass(frozen=True, slots=True)
class DeviceRun:
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
        self.progress(self.name, outcome(result))
        return result

    def _push(self, backup: str, change: str, session: Session | None) -> PushResult:
        waits = 2 * self.options.drain_timeout_s if self.options.drain else 0.0  # draining and undraining wait for the neighbours
        deadline = time.monotonic() + self.options.deadline_s + waits
        self.progress(self.name, "connecting")
        try:
            session = bounded(session or self.connector(self.target.access, self.target.adapter), deadline)
        except Exception as exc:  # noqa: BLE001 - any transport failure is this device's failure, reported, never raised
            return PushResult(self.name, changed=False, diff=[], error=f"not reached: cannot connect ({one_line(exc)})", backup=backup, reached=False)
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
            close(session)

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
        routed = target.l2 is None and (self.options.neighbour_check or self.options.drain)
        view = NeighbourView(target.neighbours, pool) if routed else None
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
        timeout_s = max(0.0, min(self.options.post_check_s, deadline - time.monotonic()))

        def waiting(what: str) -> None:
            self.progress(self.name, what)

        if target.l2 is not None:
            l2_before = read_l2(adapter.nos, session, vpc=target.l2.vpc)
            check = l2_post_check(adapter.nos, target.l2, l2_before, timeout_s=timeout_s, hold_s=self.options.post_check_hold_s, waiting=waiting)
        else:
            check = fabric_post_check(
                adapter, adapter.bgp_sessions(session), adapter.routes(session), expected_peers=target.peers, planned_routes=target.routes,
                timeout_s=timeout_s, hold_s=self.options.post_check_hold_s, waiting=waiting, also=elsewhere,
            )  # fmt: skip
        if self.options.reach_check:
            fresh = lambda: bounded(self.connector(target.access, adapter), deadline)  # noqa: E731 - a one-line factory
            check = all_of(check, reachable_after(fresh, adapter.reach_command))
        return transaction(adapter, session, candidate, running, change=change, commit=True, post_check=check, previous=target.previous)

    def _recover(self, backup: str, change: str, exc: Exception) -> PushResult:
        """Reach the device again and put its backup back; the result says whether that worked."""
        error = f"session failed mid-change: {exc}"
        result = PushResult(self.name, changed=True, diff=[], error=error, backup=backup)
        adapter = self.target.adapter
        self.progress(self.name, "recovering: restoring the backup")
        try:
            session = bounded(self.connector(self.target.access, adapter), time.monotonic() + RECOVERY_S)
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
            close(session)
        result.error = f"{error}; restored from the backup" if result.rolled_back else f"{error}; ROLLBACK INCOMPLETE"
        return result


def close(session: Session) -> None:
    """Close a session; a dead one may fail to close, and nothing is left to do then."""
    with contextlib.suppress(Exception):  # closing a dead session may fail; nothing is left to do
        session.disconnect()


def outcome(result: PushResult) -> str:
    """The one-line progress word of a result."""
    if result.error:
        return result.error if not result.reached else ("rolled back: " if result.rolled_back else "failed: ") + result.error
    return "committed" if result.committed else "pending" if result.changed else "unchanged"
