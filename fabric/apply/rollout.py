"""Rollout: canaries first (one switch per tier), then batches with a parallelism limit; stop at the first failure.

Each device runs its own transaction (``fabric.apply.frr``): a failing device is rolled back, devices not reached are
left untouched and reported as skipped, so the fabric is never left half-configured device by device.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from fabric.apply.frr import DeviceAccess, PushResult, bgp_no_regression, bgp_sessions, connect, push_frr
from fabric.apply.lab import LabState
from fabric.errors import PushError
from fabric.model.access import SwitchAccessSpec
from fabric.plan.facts import build_switch_facts
from fabric.plan.types import ClusterPlan

Progress = Callable[[str, str], None]


@dataclass(frozen=True, slots=True)
class RolloutOptions:
    """How a push proceeds."""

    commit: bool = False
    parallel: int = 4
    stop_on_failure: bool = True
    post_check_s: float = 30.0


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


def lab_access(state: LabState) -> dict[str, DeviceAccess]:
    """Access to the twin's switches: loopback ports, the twin's client key and known_hosts."""
    return {s.name: DeviceAccess(s.name, "127.0.0.1", s.ssh_port, "root", state.client_key, state.known_hosts) for s in state.switches}


def device_access(plan: ClusterPlan, access: SwitchAccessSpec, base: Path) -> dict[str, DeviceAccess]:
    """Access to real switches: management address, key from the environment or the SSH agent, verified host keys."""
    fabric = plan.fabric
    assert fabric is not None
    creds = access.credentials
    key = os.environ.get(creds.ssh_key_env) if creds.ssh_key_env else None
    known = str((base / access.known_hosts).resolve())
    return {
        s.name: DeviceAccess(s.name, s.mgmt_address.split("/")[0], access.port, creds.username, key, known, creds.use_ssh_agent)
        for s in fabric.switches
    }


def push_fabric(
    plan: ClusterPlan, configs: Mapping[str, str], access: Mapping[str, DeviceAccess], options: RolloutOptions, progress: Progress
) -> list[PushResult]:
    """Push every switch's candidate; returns one result per switch (skipped devices carry an error saying so)."""
    fabric = plan.fabric
    assert fabric is not None
    unsupported = sorted({s.nos for s in fabric.switches} - {"frr"})
    if unsupported:
        msg = f"no device adapter for {', '.join(unsupported)} yet; only FRR switches (the twin) can be pushed"
        raise PushError(msg)
    peers = {f.switch.name: len(f.neighbors) for f in build_switch_facts(plan)}
    first = canaries(plan)
    rest = [s.name for s in fabric.switches if s.name not in first]
    batches = [[name] for name in first] + [rest[i : i + options.parallel] for i in range(0, len(rest), options.parallel)]
    results: dict[str, PushResult] = {}
    failed = False
    for batch in batches:
        if failed and options.stop_on_failure:
            for name in batch:
                results[name] = PushResult(name, changed=False, diff=[], error="skipped: the rollout stopped at an earlier failure")
                progress(name, "skipped")
            continue
        with ThreadPoolExecutor(max_workers=max(1, len(batch))) as pool:

            def run_one(name: str) -> PushResult:
                return _one(name, configs[name], access[name], peers=peers[name], options=options, progress=progress)

            done = list(pool.map(run_one, batch))
        for result in done:
            results[result.device] = result
            failed = failed or result.error is not None
    return [results[s.name] for s in fabric.switches]


def _one(name: str, candidate: str, access: DeviceAccess, *, peers: int, options: RolloutOptions, progress: Progress) -> PushResult:
    progress(name, "connecting")
    try:
        session = connect(access)
    except Exception as exc:  # noqa: BLE001 - any transport failure is this device's failure, reported, never raised
        progress(name, "failed")
        return PushResult(name, changed=False, diff=[], error=f"{name}: cannot connect: {exc}")
    try:
        progress(name, "diff" if not options.commit else "applying")
        check = bgp_no_regression(bgp_sessions(session), peers, options.post_check_s)
        result = push_frr(session, candidate, commit=options.commit, post_check=check)
    except Exception as exc:  # noqa: BLE001 - e.g. the session died mid-change: report it for this device
        result = PushResult(name, changed=False, diff=[], error=f"{name}: session failed: {exc}")
    finally:
        session.disconnect()
    result.device = name
    progress(name, "failed" if result.error else "committed" if result.committed else "unchanged" if not result.changed else "pending")
    return result
