"""Read-only drift check of the live fabric against the plan: running vs rendered, BGP, ECMP and MTU per switch.

Nothing is configured: every command is a ``show``. With ``wait_s`` the check is repeated until the fabric agrees or the
time is up (a fabric converging after a push).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from fabric.apply.nos import ADAPTERS
from fabric.apply.rollout import Connector, open_session
from fabric.apply.session import DeviceAccess
from fabric.plan.facts import SwitchFacts, build_switch_facts
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
    connector: Connector = open_session,
) -> list[DeviceVerdict]:
    """Check every switch (in parallel); repeat the failing ones until they agree or ``wait_s`` has passed."""
    facts = {f.switch.name: f for f in build_switch_facts(plan)}
    expected = expected_routes(list(facts.values()))
    deadline = time.monotonic() + wait_s

    def one(name: str) -> DeviceVerdict:
        while True:
            verdict = _check(facts[name], candidates[name], access[name], expected.get(name, {}), connector)
            if verdict.ok or time.monotonic() >= deadline:
                return verdict
            time.sleep(1.0)

    with ThreadPoolExecutor(max_workers=min(8, max(1, len(facts)))) as pool:
        return list(pool.map(one, list(facts)))


def expected_routes(facts: list[SwitchFacts]) -> dict[str, dict[str, int]]:
    """Leaf → {prefix of every other leaf: ECMP width}, the width being the leaf's number of fabric uplinks.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> routes = expected_routes(build_switch_facts(plan_cluster(load_cluster("inventories/lab/cluster.yaml"))))
        >>> sorted(routes["leaf01"].items())
        [('10.100.0.4/31', 2), ('10.100.0.6/31', 2), ('10.255.1.2/32', 2)]
    """
    leaves = [f for f in facts if f.switch.tier == "leaf"]
    return {
        leaf.switch.name: {prefix: len(leaf.neighbors) for other in leaves if other is not leaf for prefix in other.originated} for leaf in leaves
    }


def _check(facts: SwitchFacts, candidate: str, access: DeviceAccess, routes: Mapping[str, int], connector: Connector) -> DeviceVerdict:
    name = facts.switch.name
    adapter = ADAPTERS[facts.switch.nos]
    verdict = DeviceVerdict(name)
    try:
        session = connector(access, adapter)
    except Exception as exc:  # noqa: BLE001 - an unreachable switch is a finding, not a crash
        verdict.problems.append(f"cannot connect: {exc}")
        return verdict
    try:
        verdict.drift = adapter.diff(adapter.running(session), candidate)
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
    except Exception as exc:  # noqa: BLE001 - reported per device
        verdict.problems.append(f"session failed: {exc}")
    finally:
        session.disconnect()
    return verdict
