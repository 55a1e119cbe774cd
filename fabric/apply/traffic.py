"""Traffic on the twin: DF pings at the compute MTU between nodes in different racks (leaf → spine → leaf).

A BGP session table says nothing about a prefix-list that drops a rack's routes; a ping does. ``leaf_pair_pings``
pings from the first node of every leaf to the first node of every other leaf (each pair once, both directions are the
same path set), in parallel, with the DF bit and a payload that fills the compute MTU.
"""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import combinations

from fabric.apply.lab import HOST_MTU_DEFAULT, namespace
from fabric.plan.types import ClusterPlan

PING_TIMEOUT_S = 20


@dataclass(frozen=True, slots=True)
class PingResult:
    """A jumbo-frame ping between two twin nodes in different racks."""

    source: str
    target: str
    address: str
    payload: int
    ok: bool
    output: str


def _ping(plan: ClusterPlan, source: str, target: str, address: str, count: int) -> PingResult:
    payload = (plan.plane("compute").mtu or HOST_MTU_DEFAULT) - 28  # IPv4 + ICMP headers
    argv = ["ip", "netns", "exec", namespace(plan.name, source), "ping", "-c", str(count), "-W", "2", "-M", "do", "-s", str(payload), address]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PING_TIMEOUT_S, check=False)  # noqa: S603 - fixed argv, no shell
    except subprocess.TimeoutExpired:
        return PingResult(source, target, address, payload, ok=False, output=f"no answer within {PING_TIMEOUT_S} s")
    summary = next((line for line in done.stdout.splitlines() if "packet loss" in line), done.stderr.strip())
    return PingResult(source, target, address, payload, done.returncode == 0, summary)


def _first_node_per_leaf(plan: ClusterPlan) -> dict[str, tuple[str, str]]:
    """Leaf → (its first node, that node's compute address), in plan order."""
    fabric = plan.fabric
    assert fabric is not None
    first: dict[str, tuple[str, str]] = {}
    for link in fabric.links:
        if link.kind == "host" and link.b_address and link.a_device not in first:
            first[link.a_device] = (link.b_device, link.b_address)
    return first


def cross_rack_ping(plan: ClusterPlan, count: int = 3) -> PingResult:
    """Ping from the first node of the first rack to the first node of the last rack."""
    nodes = list(_first_node_per_leaf(plan).values())
    (source, _), (target, address) = nodes[0], nodes[-1]
    return _ping(plan, source, target, address, count)


def leaf_pair_pings(plan: ClusterPlan, count: int = 2, parallel: int = 8) -> list[PingResult]:
    """A DF ping between a node of every pair of leaves (sorted by leaf order)."""
    nodes = list(_first_node_per_leaf(plan).values())
    pairs: list[tuple[tuple[str, str], tuple[str, str]]] = list(combinations(nodes, 2))

    def one(pair: tuple[tuple[str, str], tuple[str, str]]) -> PingResult:
        (source, _), (target, address) = pair
        return _ping(plan, source, target, address, count)

    with ThreadPoolExecutor(max_workers=max(1, min(parallel, len(pairs)))) as pool:
        return list(pool.map(one, pairs))
