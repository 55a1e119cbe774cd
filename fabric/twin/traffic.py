"""Traffic on the twin: DF pings at the compute MTU between nodes in different racks (leaf → spine → leaf).

A BGP session table says nothing about a prefix-list that drops a rack's routes; a ping does. ``leaf_pair_pings``
pings from the first node of every leaf to the first node of every other leaf (each pair once, both directions are the
same path set), in parallel, with the DF bit and a payload that fills the compute MTU.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import combinations

from fabric.plan.types import ClusterPlan
from fabric.twin.lab import HOST_MTU_DEFAULT, namespace

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


@dataclass(frozen=True, slots=True)
class FloodResult:
    """What a ping flood counted: echo requests sent and replies received, over all flows."""

    flows: int
    sent: int
    received: int

    @property
    def lost(self) -> int:
        """Requests without a reply."""
        return self.sent - self.received


class Flood:
    """Pings every ``interval_s`` from the first node of the first rack to the first node of every other rack (up to
    ``flows``; flows between different hosts hash onto different spines), running until ``stop``.

    ``stop`` sends SIGINT (ping prints its summary) and waits at most ``STOP_S``; a ping that does not stop is killed.
    """

    STOP_S = 30

    def __init__(self, plan: ClusterPlan, *, flows: int = 16, interval_s: float = 0.01, pairs: list[tuple[str, str]] | None = None) -> None:
        nodes = list(_first_node_per_leaf(plan).values())
        chosen = pairs or [(nodes[0][0], address) for _, address in nodes[1 : flows + 1]]
        self.procs = [
            subprocess.Popen(  # noqa: S603 - fixed argv, no shell
                ["ip", "netns", "exec", namespace(plan.name, source), "ping", "-q", "-i", f"{interval_s:g}", "-W", "1", "-w", "900", address],  # noqa: S607
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for source, address in chosen
        ]

    def stop(self) -> FloodResult:
        """Stop every ping; the packets sent and answered."""
        sent = received = 0
        for proc in self.procs:
            proc.send_signal(signal.SIGINT)
        for proc in self.procs:
            try:
                out = proc.communicate(timeout=self.STOP_S)[0]
            except subprocess.TimeoutExpired:
                proc.kill()
                out = proc.communicate()[0]
            if match := re.search(r"(\d+) packets transmitted, (\d+) received", out):
                sent, received = sent + int(match.group(1)), received + int(match.group(2))
        return FloodResult(len(self.procs), sent, received)


def cross_rack_pairs(plan: ClusterPlan, limit: int = 16) -> list[tuple[str, str]]:
    """(node, address of a node on another leaf) for up to ``limit`` node pairs: each pair of hosts is a flow of its
    own (the fabric hashes on addresses, so different pairs take different spines)."""
    fabric = plan.fabric
    assert fabric is not None
    hosts = [(link.a_device, link.b_device, link.b_address) for link in fabric.links if link.kind == "host" and link.b_address]
    pairs = [(node, address) for leaf, node, _ in hosts for other, _, address in hosts if other != leaf]
    return pairs[:limit]


def forwarded(plan: ClusterPlan, switch: str) -> int:
    """Packets the twin switch ``switch`` has received on its ports so far (``ip -s link``): what it forwards."""
    argv = ["ip", "-n", namespace(plan.name, switch), "-s", "-j", "link", "show"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=PING_TIMEOUT_S, check=True)  # noqa: S603 - fixed argv, no shell
    return sum(int(link["stats64"]["rx"]["packets"]) for link in json.loads(done.stdout) if link["ifname"] != "lo")
