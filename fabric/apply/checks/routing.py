"""Post-checks that look at what carries traffic: BGP sessions and the FIB, compared with the state before the change
and with the plan.

A device's post-check passes when, before its deadline:
- every BGP session established before the change and still configured is established again (a peer the change
  removed on purpose is not "lost"), and the device has the planned number of sessions;
- every planned prefix that had next hops before the change has at least as many now (a prefix-list ``deny`` that
  blackholes a rack shows up here, not in the session table);
- and both stay true for a hold time: a policy change takes effect late (FRR applies route-map changes after its
  ``bgp route-map delay-timer``, 5 s by default — FRR user guide, "BGP: Route Map"), so the first clean sample
  proves nothing.
While it waits, it reports what it waits for.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

from fabric.apply.nos import Adapter
from fabric.apply.session import Session
from fabric.apply.transaction import PostCheck
from fabric.plan.compute.facts import SwitchFacts

Waiting = Callable[[str], None]
POLL_S = 0.5


def bgp_problems(before: Mapping[str, str], now: Mapping[str, str], expected_peers: int) -> list[str]:
    """Sessions lost since ``before`` (still configured, no longer established) and a session count off the plan.

    Example:
        >>> bgp_problems({"swp1": "Established", "swp9": "Established"}, {"swp1": "Active"}, 1)
        ['BGP sessions lost after the change: swp1']
    """
    lost = [peer for peer, state in before.items() if state == "Established" and peer in now and now[peer] != "Established"]
    problems = [f"BGP sessions lost after the change: {', '.join(lost)}"] if lost else []
    if len(now) != expected_peers:
        problems.append(f"{len(now)} BGP sessions configured, the plan has {expected_peers}")
    return problems


def route_problems(before: Mapping[str, int], now: Mapping[str, int], planned: Mapping[str, int]) -> list[str]:
    """Planned prefixes with fewer next hops than before the change (missing ones included).

    Example:
        >>> route_problems({"10.0.0.2/31": 2, "10.9.0.0/16": 1}, {"10.0.0.2/31": 1}, {"10.0.0.2/31": 2})
        ['route 10.0.0.2/31: 1 next hops, 2 before the change']
    """
    fewer = [(p, now.get(p, 0), before[p]) for p in sorted(planned) if before.get(p, 0) > now.get(p, 0)]
    return [f"route {p}: {n} next hops, {b} before the change" for p, n, b in fewer]


def fabric_post_check(
    adapter: Adapter,
    before_bgp: Mapping[str, str],
    before_routes: Mapping[str, int],
    *,
    expected_peers: int,
    planned_routes: Mapping[str, int],
    timeout_s: float,
    hold_s: float = 0.0,
    waiting: Waiting | None = None,
    also: Callable[[], list[str]] | None = None,
) -> PostCheck:
    """The post-check of one device (see the module docstring): clean for ``hold_s`` within ``timeout_s`` (at least
    the hold); ``waiting`` hears what it still waits for; ``also`` samples more problems (the neighbours' routes)."""

    def sample(session: Session) -> list[str]:
        problems = bgp_problems(before_bgp, adapter.bgp_sessions(session), expected_peers)
        problems += route_problems(before_routes, adapter.routes(session), planned_routes)
        return problems + (also() if also is not None and not problems else [])

    return lambda session: hold_clean(lambda: sample(session), timeout_s=timeout_s, hold_s=hold_s, waiting=waiting, what="post-check")


def hold_clean(sample: Callable[[], list[str]], *, timeout_s: float, hold_s: float, waiting: Waiting | None, what: str) -> list[str]:
    """Sample until clean for ``hold_s`` (then no problems) or ``timeout_s`` (at least the hold) has passed (then the
    last problems); ``waiting`` hears what ``what`` still waits for."""
    start = time.monotonic()
    deadline = start + max(timeout_s, hold_s)
    clean_since: float | None = None
    while True:
        problems = sample()
        now = time.monotonic()
        clean_since = (clean_since or now) if not problems else None
        if clean_since is not None and now - clean_since >= hold_s:
            return []
        if now >= deadline:
            return problems or [f"clean for {now - (clean_since or now):.1f} s only, {hold_s:g} s needed (hold time)"]
        if waiting is not None and problems:
            more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
            waiting(f"{what}, {deadline - now:.0f} s left: waiting for {problems[0]}{more}")
        time.sleep(min(POLL_S, deadline - now))


def reachable_after(connect: Callable[[], Session], command: str, attempts: int = 3) -> PostCheck:
    """No lock-out: a fresh SSH login (host key verified by the connector) and a show command must work. A slow login
    is tried again (``attempts`` in all, a second apart); a change that locks us out fails every one."""

    def once() -> str | None:
        try:
            fresh = connect()
        except Exception as exc:  # noqa: BLE001 - any failure to log in again is the finding
            return f"a fresh SSH login fails after the change ({_first_line(exc)}): the change would lock us out"
        try:
            fresh.show(command)
        except Exception as exc:  # noqa: BLE001 - a login that cannot run a show command is a lock-out too
            return f"a fresh SSH login cannot run {command!r} after the change ({_first_line(exc)}): the change would lock us out"
        finally:
            fresh.disconnect()
        return None

    def check(_: Session) -> list[str]:
        problem = None
        for attempt in range(attempts):
            if attempt:
                time.sleep(1.0)
            problem = once()
            if problem is None:
                return []
        return [problem] if problem else []

    return check


def _first_line(exc: Exception) -> str:
    return next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)


def all_of(*checks: PostCheck) -> PostCheck:
    """Run the checks in order; stop at the first that finds problems."""

    def check(session: Session) -> list[str]:
        for one in checks:
            if problems := one(session):
                return problems
        return []

    return check


def planned_routes(facts: Sequence[SwitchFacts]) -> dict[str, dict[str, int]]:
    """Switch → {prefix of every leaf but its own: the ECMP width the plan gives it}.

    A leaf reaches another leaf's prefixes over all its uplinks; a spine reaches a leaf's over its links to that leaf.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> from fabric.plan.compute.facts import build_switch_facts
        >>> routes = planned_routes(build_switch_facts(plan_cluster(load_cluster("inventories/lab/cluster.yaml"))))
        >>> sorted(routes["leaf01"].items()), sorted(routes["spine01"].items())[:2]
        ([('10.100.0.4/31', 2), ('10.100.0.6/31', 2), ('10.255.1.2/32', 2)], [('10.100.0.0/31', 1), ('10.100.0.2/31', 1)])
    """
    leaves = [f for f in facts if f.switch.tier == "leaf"]
    out: dict[str, dict[str, int]] = {}
    for switch in facts:
        if switch.switch.tier == "leaf":
            out[switch.switch.name] = {p: len(switch.neighbors) for other in leaves if other is not switch for p in other.originated}
        else:
            links = {leaf.switch.name: sum(1 for n in switch.neighbors if n.peer == leaf.switch.name) for leaf in leaves}
            out[switch.switch.name] = {p: links[leaf.switch.name] for leaf in leaves if links[leaf.switch.name] for p in leaf.originated}
    return out
