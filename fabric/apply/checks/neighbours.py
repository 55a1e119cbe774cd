"""The changed switch's neighbours: their routing state before and after a change, and while it is drained.

A change on X can break routes that X itself still has (an outbound filter, a wrong ASN seen only by the peers): only
the neighbours see that loss. So a post-check also reads every neighbour of X and asks, for every prefix the plan
gives that neighbour (every other leaf's loopback and host prefixes), for no fewer next hops than before the change.
``push --drain`` reads them too: drained, no next hop of theirs may point at X (for prefixes X does not originate),
and undrained, each is back to its width before the drain.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from fabric.apply.nos import Adapter
from fabric.apply.session import DeviceAccess, Session
from fabric.plan.compute.facts import SwitchFacts

Connector = Callable[[DeviceAccess, Adapter], Session]
Paths = dict[str, tuple[int, int]]  # prefix → (active next hops, of which through the changed switch)


@dataclass(frozen=True, slots=True)
class Neighbour:
    """One neighbour of the changed switch: how to reach it, its ports to the switch, the prefixes the plan gives it."""

    name: str
    adapter: Adapter
    access: DeviceAccess
    ports: frozenset[str]
    routes: Mapping[str, int]


def neighbours_of(facts: SwitchFacts, every: Mapping[str, SwitchFacts], access: Mapping[str, DeviceAccess],
                  adapters: Mapping[str, Adapter], planned: Mapping[str, Mapping[str, int]]) -> tuple[Neighbour, ...]:  # fmt: skip
    """The BGP neighbours of ``facts``' switch (each once, in name order) that ``access`` can reach."""
    name = facts.switch.name
    peers = sorted({n.peer for n in facts.neighbors if n.peer in every and n.peer in access})
    return tuple(
        Neighbour(p, adapters[p], access[p], frozenset(n.interface for n in every[p].neighbors if n.peer == name), planned.get(p, {})) for p in peers
    )


def paths(output: str, ports: frozenset[str]) -> Paths:
    """Prefix → (active next hops of the selected route, how many leave through ``ports``) from FRR's ``show ip route json``.

    Example:
        >>> paths('{"10.0.0.4/31": [{"selected": true, "nexthops": [{"active": true, "interfaceName": "swp3"},'
        ...       ' {"active": true, "interfaceName": "swp4"}]}]}', frozenset({"swp3"}))
        {'10.0.0.4/31': (2, 1)}
    """
    table = json.loads(output or "{}")
    out: Paths = {}
    for prefix, entries in table.items():
        hops = [h for e in entries if e.get("selected") for h in e.get("nexthops", []) if h.get("active")]
        out[prefix] = (len(hops), sum(1 for h in hops if h.get("interfaceName") in ports))
    return out


class SessionPool:
    """One read-only session per switch, opened on first use and shared by the neighbour checks of every change of a
    rollout (a spine is every leaf's neighbour: one login, not one per leaf); one command at a time per switch."""

    def __init__(self, connector: Connector) -> None:
        self._connector = connector
        self._sessions: dict[str, Session] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def _lock(self, name: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(name, threading.Lock())

    def open(self, n: Neighbour) -> str | None:
        """Make sure ``n`` has a session; why not, or None."""
        with self._lock(n.name):
            if n.name in self._sessions:
                return None
            try:
                self._sessions[n.name] = self._connector(n.access, n.adapter)
            except Exception as exc:  # noqa: BLE001 - an unreachable neighbour is reported, never raised
                return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            return None

    def read(self, n: Neighbour) -> Paths:
        """``n``'s paths now; a session that fails is dropped (the next ``open`` logs in again) and the error raised."""
        with self._lock(n.name):
            session = self._sessions[n.name]
            try:
                if n.adapter.nos == "frr":
                    return paths(session.show("show ip route json"), n.ports)
                return {prefix: (count, 0) for prefix, count in n.adapter.routes(session).items()}  # counts only: no drain
            except Exception:
                del self._sessions[n.name]
                with contextlib.suppress(Exception):  # a dead session may fail to close; nothing is left to do
                    session.disconnect()
                raise

    def close(self) -> None:
        """Close every session."""
        with self._guard:
            sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            with contextlib.suppress(Exception):  # a dead session may fail to close; nothing is left to do
                session.disconnect()


class NeighbourView:
    """The neighbours of one change, read through the rollout's session pool; a neighbour that cannot be reached at the
    start is left out (``skipped`` names it), one lost later reads as an empty table (every route lost)."""

    def __init__(self, neighbours: tuple[Neighbour, ...], pool: SessionPool) -> None:
        self.neighbours = neighbours
        self.pool = pool
        with ThreadPoolExecutor(max_workers=max(1, min(8, len(neighbours)))) as workers:
            opened = list(workers.map(pool.open, neighbours))
        self.skipped = {n.name: why for n, why in zip(neighbours, opened, strict=True) if why is not None}
        self.reachable = [n for n in neighbours if n.name not in self.skipped]

    def read(self) -> dict[str, Paths]:
        """Neighbour → its paths now (a neighbour whose read fails maps to an empty table)."""

        def one(n: Neighbour) -> tuple[str, Paths]:
            try:
                if self.pool.open(n) is not None:
                    return n.name, {}
                return n.name, self.pool.read(n)
            except Exception:  # noqa: BLE001 - a neighbour that stops answering has lost every route, as far as we can tell
                return n.name, {}

        with ThreadPoolExecutor(max_workers=max(1, min(8, len(self.reachable)))) as workers:
            return dict(workers.map(one, self.reachable))


def fewer_paths(view: NeighbourView, before: Mapping[str, Paths], now: Mapping[str, Paths]) -> list[str]:
    """Planned prefixes of a neighbour with fewer next hops than ``before`` (the loss a change causes elsewhere).

    Example:
        >>> n = Neighbour("leaf01", None, None, frozenset({"swp3"}), {"10.0.0.4/31": 2})  # type: ignore[arg-type]
        >>> view = NeighbourView((n,), SessionPool(lambda *_: None))  # type: ignore[arg-type]
        >>> fewer_paths(view, {"leaf01": {"10.0.0.4/31": (2, 1)}}, {"leaf01": {"10.0.0.4/31": (1, 0)}})
        ['leaf01: route 10.0.0.4/31: 1 next hops, 2 before the change']
    """
    problems: list[str] = []
    for n in view.neighbours:
        if n.name not in before:
            continue
        for prefix in sorted(n.routes):
            was, has = before[n.name].get(prefix, (0, 0))[0], now.get(n.name, {}).get(prefix, (0, 0))[0]
            if has < was:
                problems.append(f"{n.name}: route {prefix}: {has} next hops, {was} before the change")
    return problems


def not_drained(view: NeighbourView, before: Mapping[str, Paths], now: Mapping[str, Paths], device: str, own: frozenset[str]) -> list[str]:
    """While ``device`` is drained: planned prefixes (not its own ``own``) a neighbour still routes through it, or with
    fewer next hops than the other paths it had before the drain."""
    problems: list[str] = []
    for n in view.neighbours:
        if n.name not in before:
            continue
        for prefix in sorted(p for p in n.routes if p not in own):
            total, through = before[n.name].get(prefix, (0, 0))
            has, via = now.get(n.name, {}).get(prefix, (0, 0))
            if via:
                problems.append(f"{n.name}: route {prefix}: {via} of {has} next hops still through {device}")
            elif has < total - through:
                problems.append(f"{n.name}: route {prefix}: {has} next hops, {total - through} expected without {device}")
    return problems


def only_through(view: NeighbourView, before: Mapping[str, Paths], device: str, own: frozenset[str]) -> list[str]:
    """Planned prefixes (not ``device``'s own) a neighbour reaches only through ``device``: draining it cannot move them."""
    return [
        f"{n.name} reaches {prefix} only through {device}"
        for n in view.neighbours if n.name in before
        for prefix in sorted(p for p in n.routes if p not in own)
        if (paths_ := before[n.name].get(prefix, (0, 0)))[0] and paths_[0] == paths_[1]
    ]  # fmt: skip
