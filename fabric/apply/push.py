"""The push as a library: the verbs the CLI (``fabric.cli.apply``), the Ansible module (``fabric_push``) and the
benches share. Everything that touches a switch goes through here: the candidates rendered from the plan, one change
written ahead under the fabric's lock (``fabric.apply.record``), the rollout plane by plane (``fabric.apply.rollout``).

Device access comes from the caller (``fabric.apply.rollout.device_access`` for a real fabric, the twin's own for the
local twin): this module never knows which one it pushes to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from fabric.apply.nos import ADAPTERS, Adapter
from fabric.apply.planes import PLANES, PlaneDevice, select_devices
from fabric.apply.record import ChangeRecord, new_change_id, push_lock, recorded_state
from fabric.apply.rollout import COMPUTE, Connector, Progress, RolloutOptions, canaries, open_session, push_fabric
from fabric.apply.session import DeviceAccess
from fabric.apply.transaction import PushResult
from fabric.errors import PushError
from fabric.plan.types import ClusterPlan
from fabric.render import render_configs

__all__ = ["canary_names", "candidates", "offline_diff", "planes_of", "push_and_record", "rollback_targets"]


def candidates(plan: ClusterPlan, planes: Sequence[str] = COMPUTE, adapters: Mapping[str, Adapter] = ADAPTERS) -> dict[str, str]:
    """Switch of ``planes`` → the candidate its adapter pushes, from the rendered files, in push order (``adapters``:
    NOS → adapter, ``RolloutOptions.adapters``).

    Raises:
        PushError: a NOS without a device adapter.
    """
    devices = select_devices(plan, planes)
    unsupported = sorted({d.nos for d in devices} - set(adapters))
    if unsupported:
        planes = sorted({d.plane for d in devices if d.nos in unsupported}, key=PLANES.index)
        others = [p for p in PLANES if p in planes_of(devices) and p not in planes]
        hint = f"; leave the {'/'.join(planes)} plane out (--plane {','.join(others)})" if others else ""
        msg = f"no device adapter for {', '.join(unsupported)}; push supports {', '.join(sorted(adapters))}{hint}"
        raise PushError(msg)
    if not devices:
        return {}
    files = render_configs(plan)
    out: dict[str, str] = {}
    for device in devices:
        own = {path.removeprefix(device.config_dir): text for path, text in files.items() if path.startswith(device.config_dir)}
        out[device.name] = adapters[device.nos].candidate(own)
    return out


def canary_names(plan: ClusterPlan, planes: Sequence[str] = COMPUTE) -> list[str]:
    """The switches a push of ``planes`` changes first, each alone, in push order: the first OOB switch, each L2
    plane's first switch, and the compute fabric's first switch of each tier. ``push --canaries`` pushes only these,
    so a pipeline can verify them before the rest is approved.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> from fabric.apply.planes import PLANES
        >>> canary_names(plan_cluster(load_cluster("inventories/lab/cluster.yaml")), PLANES)
        ['oob-su1', 'stor-a', 'spine01', 'leaf01']
    """
    devices = select_devices(plan, planes)
    first = [next(d.name for d in devices if d.plane == plane) for plane in PLANES[:-1] if any(d.plane == plane for d in devices)]
    compute = {d.name for d in devices if d.plane == "compute"}
    if plan.fabric is None:
        return first
    return first + [name for name in canaries(plan) if name in compute]


def planes_of(devices: Sequence[PlaneDevice]) -> set[str]:
    """Every plane the devices carry."""
    return {p for d in devices for p in d.planes}


def push_and_record(
    plan: ClusterPlan,
    definition: Path,
    state: Path,
    access: Mapping[str, DeviceAccess],
    options: RolloutOptions,
    *,
    progress: Progress,
    rollback_to: str | None = None,
    record: bool = True,
    connector: Connector = open_session,
) -> tuple[str, list[PushResult]]:
    """One change, written ahead: under the fabric's lock, the change record (definition, every backup, a "started"
    audit line) is on disk before the first device is touched, and each device's outcome is appended as it happens.
    ``record=False`` (``diff``) reads only: no lock, no record.

    ``rollback_to`` pushes what the record says each switch ran after that change instead of the rendered configs;
    switches that change never reached are skipped.
    """
    change = new_change_id()
    recorded = recorded_state(state) if (state / "changes").is_dir() else {}
    wanted = candidates(plan, options.planes, options.adapters) if rollback_to is None else rollback_targets(plan, state, rollback_to, options.planes)
    if options.canaries_only:
        first = set(canary_names(plan, options.planes))
        wanted = {name: config for name, config in wanted.items() if name in first}
    if not record:
        return change, push_fabric(plan, wanted, access, options, progress, change=change, connector=connector, previous=recorded)
    with push_lock(state):
        log = ChangeRecord(state, change)
        header = log.begin(definition, commit=options.commit, rollback_to=rollback_to)
        results = push_fabric(
            plan, wanted, access, options, progress, change=change, connector=connector,
            record=log, previous=recorded, on_started=lambda devices: log.started(header, devices),
        )  # fmt: skip
        log.finished(header, results, interrupted=options.stop.is_set())
    return change, results


def offline_diff(plan: ClusterPlan, state: Path, planes: Sequence[str] = COMPUTE, adapters: Mapping[str, Adapter] = ADAPTERS) -> list[PushResult]:
    """Candidate vs what the change record says each switch of ``planes`` runs (a switch never pushed diffs against nothing)."""
    recorded = recorded_state(state)
    wanted = candidates(plan, planes, adapters)
    results: list[PushResult] = []
    for switch in select_devices(plan, planes):
        diff = adapters[switch.nos].diff(recorded.get(switch.name, ""), wanted[switch.name], recorded.get(switch.name, ""))
        results.append(PushResult(switch.name, changed=bool(diff), diff=diff, backup=recorded.get(switch.name, "")))
    return results


def rollback_targets(plan: ClusterPlan, state: Path, change: str, planes: Sequence[str] = COMPUTE) -> dict[str, str]:
    """Switch of ``planes`` → the owned config the record says it ran after ``change``; switches never reached are left out."""
    recorded = recorded_state(state, change)
    return {d.name: recorded[d.name] for d in select_devices(plan, planes) if d.name in recorded}
