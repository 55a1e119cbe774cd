"""Read-only drift check of the live fabric against the plan: running vs rendered, BGP, ECMP and MTU per compute
switch; running vs rendered and the bridge (VLANs, ports: ``fabric.apply.checks.l2``) per storage / in-band / OOB switch.

Nothing is configured: every command is a ``show``. Routing is compared with the plan: every other leaf's loopback
and host prefixes present with the planned ECMP width (``fabric.apply.checks.routing.planned_routes``). With ``wait_s`` the
fabric must be clean for ``hold`` consecutive samples (a hold time) before the time is up, not for one lucky sample:
a fabric that converges and then loses routes again is not verified.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from fabric.apply.checks.l2 import l2_expect, l2_problems, read_l2
from fabric.apply.checks.routing import planned_routes
from fabric.apply.nos import ADAPTERS, Adapter
from fabric.apply.planes import select_devices
from fabric.apply.rollout import Connector, open_session
from fabric.apply.session import DeviceAccess, Session
from fabric.plan.compute.facts import SwitchFacts, build_switch_facts
from fabric.plan.types import ClusterPlan


@dataclass(slots=True)
class DeviceVerdict:
    """One switch: the config lines that drifted from the plan, and every state problem found."""

    device: str
    drift: list[str] = field(default_factory=list[str])
    problems: list[str] = field(default_factory=list[str])

    @property
    def ok(self) -> bool:
        """True when the switch runs the plan and its state agrees."""
        return not self.drift and not self.problems


def verify_fabric(
    plan: ClusterPlan,
    candidates: Mapping[str, str],
    access: Mapping[str, DeviceAccess],
    *,
    wait_s: float = 0.0,
    hold: int = 3,
    interval_s: float = 1.0,
    previous: Mapping[str, str] | None = None,
    connector: Connector = open_session,
    adapters: Mapping[str, Adapter] = ADAPTERS,
) -> list[DeviceVerdict]:
    """Check every switch that has a candidate (in parallel). With ``wait_s``, sample the whole fabric every ``interval_s`` until ``hold``
    consecutive samples are clean (then it is verified) or ``wait_s`` has passed (then the last sample is the verdict).
    Without ``wait_s``, one sample decides. ``adapters``: NOS → adapter (``RolloutOptions.adapters``)."""
    facts = {f.switch.name: f for f in build_switch_facts(plan)}
    expected = planned_routes(list(facts.values()))
    nos = {d.name: d.nos for d in select_devices(plan, ("oob", "storage", "inband"))} | {n: f.switch.nos for n, f in facts.items()}
    deadline = time.monotonic() + wait_s
    needed = max(1, hold) if wait_s > 0 else 1
    clean = 0

    def one(name: str) -> DeviceVerdict:
        verdict = DeviceVerdict(name)
        adapter = adapters[nos[name]]
        try:
            session = connector(access[name], adapter)
        except Exception as exc:  # noqa: BLE001 - an unreachable switch is a finding, not a crash
            verdict.problems.append(f"cannot connect: {exc}")
            return verdict
        try:
            before = (previous or {}).get(name, "")
            if name in facts:
                _check(verdict, facts[name], adapter, session, candidate=candidates[name], previous=before, routes=expected.get(name, {}))
            else:
                verdict.drift = adapter.diff(adapter.running(session), candidates[name], before)
                expect = l2_expect(plan, name)
                verdict.problems += l2_problems(expect, read_l2(adapter.nos, session, vpc=expect.vpc))
        except Exception as exc:  # noqa: BLE001 - reported per device
            verdict.problems.append(f"session failed: {exc}")
        finally:
            _close(session)
        return verdict

    with ThreadPoolExecutor(max_workers=min(16, max(1, len(candidates)))) as pool:
        while True:
            verdicts = list(pool.map(one, list(candidates)))
            clean = clean + 1 if all(v.ok for v in verdicts) else 0
            if clean >= needed or time.monotonic() >= deadline:
                if 0 < clean < needed:
                    for verdict in verdicts:
                        verdict.problems.append(f"clean for {clean} sample(s) only, {needed} needed (hold time)")
                return verdicts
            time.sleep(interval_s)


def _close(session: Session) -> None:
    with contextlib.suppress(Exception):  # a dead session may fail to close; nothing is left to do
        session.disconnect()


def _check(
    verdict: DeviceVerdict, facts: SwitchFacts, adapter: Adapter, session: Session, *, candidate: str, previous: str, routes: Mapping[str, int]
) -> None:
    """One sample of one switch: drift of the owned config, BGP, routes against the plan, MTUs."""
    verdict.drift = adapter.diff(adapter.running(session), candidate, previous)
    bgp = adapter.bgp_sessions(session)
    down = sorted(peer for peer, state in bgp.items() if state != "Established")
    if down:
        verdict.problems.append(f"BGP not established: {', '.join(down)}")
    if len(bgp) != len(facts.neighbors):
        verdict.problems.append(f"{len(bgp)} BGP sessions, the plan has {len(facts.neighbors)}")
    fib = adapter.routes(session)
    for prefix, width in sorted(routes.items()):
        if fib.get(prefix, 0) != width:
            verdict.problems.append(f"route {prefix}: {fib.get(prefix, 0)} ECMP next hops, expected {width}")
    mtus = adapter.interface_mtus(session)
    for port in facts.ports:
        if mtus.get(port.name) != port.mtu:
            verdict.problems.append(f"{port.name} MTU {mtus.get(port.name, 'missing')}, expected {port.mtu}")
