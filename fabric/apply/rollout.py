"""Rollout: read every backup first, then plane by plane (``fabric.apply.planes``: OOB one switch at a time, the
storage / in-band pairs one side at a time, compute last), each plane's canary first, then batches with a
parallelism limit; stop at the first failure, or when asked to (SIGINT/SIGTERM: devices in flight finish, the rest
are not reached).

Each device runs its own transaction (``fabric.apply.transaction``) through its NOS's adapter within one overall
deadline: a failing device is reverted, devices not reached are left untouched and reported so. When a session dies
in the middle of a change, the device is reached again and restored from its backup, so no device is left
half-configured. Every backup and outcome goes to the change record (``fabric.apply.record``) as it happens.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fabric.apply.checks.l2 import L2_READERS, l2_expect
from fabric.apply.checks.neighbours import SessionPool, neighbours_of
from fabric.apply.checks.routing import planned_routes
from fabric.apply.device import (
    COMPUTE,
    Connector,
    DeviceRun,
    Progress,
    RolloutOptions,
    Target,
    bounded,
    close,
    open_session,
    outcome,
)
from fabric.apply.drain import refuse_undrainable
from fabric.apply.nos import ADAPTERS, Adapter
from fabric.apply.planes import PlaneDevice, plane_batches, select_devices
from fabric.apply.record import ChangeRecord
from fabric.apply.secrets import read_env_secret
from fabric.apply.session import DeviceAccess, Session
from fabric.apply.shown import shown_progress
from fabric.apply.terminal import one_line
from fabric.apply.transaction import PushResult
from fabric.errors import PushError
from fabric.model.access import SwitchAccessSpec
from fabric.plan.compute.facts import SwitchFacts, build_switch_facts
from fabric.plan.types import ClusterPlan

__all__ = [
    "COMPUTE",
    "Connector",
    "Progress",
    "RolloutOptions",
    "Target",
    "batches",
    "canaries",
    "device_access",
    "open_session",
    "push_fabric",
    "targets",
]


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


def device_access(
    plan: ClusterPlan, access: SwitchAccessSpec, base: Path, definition: str | None = None, planes: Sequence[str] = COMPUTE
) -> dict[str, DeviceAccess]:
    """Access to real switches of ``planes``: management address, key and password from the environment or the SSH
    agent, verified host keys.

    Raises:
        InputError: the definition names an environment variable that is not set.
    """
    creds = access.credentials
    key = read_env_secret(creds.ssh_key_env, "ssh_key_env", definition)
    password = read_env_secret(creds.password_env, "password_env", definition)
    known = str((base / access.known_hosts).resolve())
    return {
        d.name: DeviceAccess(d.name, d.mgmt_address.split("/")[0], access.port, creds.username, key, known, creds.use_ssh_agent, password)
        for d in select_devices(plan, planes)
    }


def targets(
    plan: ClusterPlan,
    candidates: Mapping[str, str],
    access: Mapping[str, DeviceAccess],
    previous: Mapping[str, str],
    devices: Sequence[PlaneDevice],
    *,
    nos_adapters: Mapping[str, Adapter] = ADAPTERS,
) -> list[Target]:
    """Every one of ``devices`` that has a candidate, as a rollout target, in ``devices`` order.

    Raises:
        PushError: an L2 plane's switch whose NOS the L2 post-check cannot read (nothing is touched).
    """
    wanted = [d for d in devices if d.name in candidates]
    unreadable = sorted(f"{d.name} ({d.nos})" for d in wanted if d.is_l2 and d.nos not in L2_READERS)
    if unreadable:
        msg = f"no L2 post-check for {', '.join(unreadable)} yet (it reads {', '.join(sorted(L2_READERS))}); leave their plane out (--plane)"
        raise PushError(msg)
    facts: Sequence[SwitchFacts] = build_switch_facts(plan) if any(not d.is_l2 for d in wanted) else ()
    routes = planned_routes(facts)
    every = {f.switch.name: f for f in facts}
    adapters = {f.switch.name: nos_adapters[f.switch.nos] for f in facts}
    out: list[Target] = []
    for d in wanted:
        adapter, candidate, before = nos_adapters[d.nos], candidates[d.name], previous.get(d.name, "")
        if d.is_l2:
            out.append(Target(d.name, adapter, access[d.name], candidate, before, 0, {}, l2=l2_expect(plan, d.name)))
            continue
        f = every[d.name]
        out.append(Target(d.name, adapter, access[d.name], candidate, before, len(f.neighbors), routes.get(d.name, {}),
                          neighbours_of(f, every, access, adapters, routes), frozenset(f.originated)))  # fmt: skip
    return out


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
    """Push the candidate of every switch of ``options.planes``; returns one result per switch, in push order (devices
    not reached say why; a switch without a candidate, such as one a rollback target change never reached, is not
    reached at all).

    First every backup is read and recorded; ``on_started`` then writes the "started" audit line. A RecordError there
    stops everything before any device is touched.

    Raises:
        PushError: ``--drain`` with an L2 plane, or a switch the drain or the L2 post-check cannot handle (nothing is touched).
    """
    progress = shown_progress(progress)  # every step of every device, masked before it reaches a terminal or a log
    selected = select_devices(plan, options.planes)
    if options.canaries_only:  # the others wait for the full push: not "not reached"
        selected = [d for d in selected if d.name in candidates]
    if options.drain and options.commit:
        l2 = sorted(d.name for d in selected if d.is_l2 and d.name in candidates)
        if l2:
            msg = f"--drain moves BGP traffic off compute switches; {', '.join(l2)} carry L2 planes: push them without --drain (--plane)"
            raise PushError(msg)
        refuse_undrainable({d.name: options.adapters[d.nos].nos for d in selected if d.name in candidates})  # what pushes it
    devices = {t.name: t for t in targets(plan, candidates, access, previous or {}, selected, nos_adapters=options.adapters)}
    backups, sessions, results = _read_all(list(devices.values()), record, options, connector, progress)
    pool = SessionPool(connector)  # the neighbour checks' sessions, one per switch, shared by every change
    try:
        _rollout(
            plan, selected, devices, backups=backups, sessions=sessions, results=results, options=options, progress=progress,
            change=change, connector=connector, record=record, on_started=on_started, pool=pool,
        )  # fmt: skip
    finally:
        pool.close()
        for session in sessions.values():
            close(session)
    return [results[d.name] for d in selected]


def _rollout(
    plan: ClusterPlan,
    selected: Sequence[PlaneDevice],
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
    """Plane by plane, canaries, then batches: each device's transaction on the session its backup was read in."""
    for switch in selected:
        if switch.name not in devices:
            results[switch.name] = _not_reached(switch.name, "not reached: the record has no config to return it to", record, progress)
    if on_started is not None:
        on_started(sorted(backups))
    if not options.commit:
        results.update({name: _dry_run(devices[name], backup, record, progress) for name, backup in backups.items()})
        return
    failed = any(r.error for r in results.values())
    parallel = 1 if options.drain else options.parallel  # two drained spines at once could strand a leaf
    compute = batches(plan, parallel) if plan.fabric is not None else []
    for batch in plane_batches(selected, parallel, compute):
        todo = [name for name in batch if name in backups]
        if options.stop.is_set() or (failed and options.stop_on_failure):
            why = "interrupted: stopped before this device" if options.stop.is_set() else "skipped: the rollout stopped at an earlier failure"
            for name in todo:
                results[name] = _not_reached(name, why, record, progress)
            continue

        def run_one(name: str) -> PushResult:
            device = DeviceRun(devices[name], connector, options, progress, record, pool)
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
            session = bounded(connector(target.access, target.adapter), time.monotonic() + options.deadline_s)
        except Exception as exc:  # noqa: BLE001 - an unreachable device is reported, never raised
            return target.name, exc, None
        try:
            running = target.adapter.running(session)
        except Exception as exc:  # noqa: BLE001 - same
            close(session)
            return target.name, exc, None
        if not options.commit:
            close(session)
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
                why = f"not reached: cannot read the running config ({one_line(running)})"
                results[target.name] = _not_reached(target.name, why, record, progress)
                continue
            if record is not None:
                record.backup(target.name, running, target.adapter.owned(running, target.candidate, target.previous))
            backups[target.name] = running
            if session is not None:
                sessions[target.name] = session
    except BaseException:
        for _, session in read_out.values():
            if session is not None:
                close(session)
        raise
    return backups, sessions, results


def _dry_run(target: Target, backup: str, record: ChangeRecord | None, progress: Progress) -> PushResult:
    """What the push would change, from the backup just read (nothing is sent)."""
    diff = target.adapter.diff(backup, target.candidate, target.previous)
    result = PushResult(target.name, changed=bool(diff), diff=diff, backup=backup)
    if record is not None:
        record.outcome(result, None)
    progress(target.name, outcome(result))
    return result


def _not_reached(name: str, why: str, record: ChangeRecord | None, progress: Progress) -> PushResult:
    result = PushResult(name, changed=False, diff=[], error=why, reached=False)
    if record is not None:
        record.outcome(result, None)
    progress(name, why)
    return result
