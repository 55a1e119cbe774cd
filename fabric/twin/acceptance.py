"""Acceptance pairs on the twin: each round's pins as kernel routes in the switch namespaces, a bounded TCP stream per
pair between the node namespaces, and ``tc`` to throttle one cable.

perftest's ``ib_write_bw`` needs an RDMA device, which the twin's veth cables are not (no rxe/siw is assumed), and
iperf3 is not installed here: a pair's bandwidth is a Python TCP stream from client to server for ``seconds``, counted
by the server over that window (bytes after the first one arrives). The pins are the same as on a real fabric
(``fabric.plan.acceptance``): a /32 route per hop to the far node, through the planned port; the next hop is the
peer's IPv6 link-local address on unnumbered cables (RFC 5549 routes, as the fabric's own BGP installs) or its IPv4
address on numbered ones.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping

from fabric.errors import LabError
from fabric.plan.acceptance import BandwidthPair, Pin
from fabric.plan.types import ClusterPlan, Link
from fabric.twin.lab import namespace

COMMAND_TIMEOUT_S = 30
STREAM_PORT = 5201

# The server: listen on the node's compute address, take one connection, count bytes for SECONDS after the first.
_SERVER = """
import socket, sys, time
address, port, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
listener = socket.socket(); listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind((address, port)); listener.listen(1); listener.settimeout(20)
print("ready", flush=True)
conn, _ = listener.accept(); conn.settimeout(5)
total, start = 0, None
while True:
    data = conn.recv(1 << 20)
    if not data:
        break
    now = time.monotonic()
    start = start or now
    if now - start > seconds:
        break
    total += len(data)
conn.close()
print(total * 8 / seconds / 1e9)
"""
# The client: send as fast as the path takes for SECONDS + 2 (the server stops counting first), a small send buffer
# so that little is left queued when it stops.
_CLIENT = """
import socket, sys, time
address, port, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
sock = socket.socket(); sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 18); sock.settimeout(5)
sock.connect((address, port))
chunk, end = b"\\0" * (1 << 16), time.monotonic() + seconds + 2
try:
    while time.monotonic() < end:
        sock.sendall(chunk)
except OSError:
    pass
sock.close()
"""


def _run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(args), capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False)  # noqa: S603 - fixed argv, no shell
    if check and done.returncode != 0:
        msg = f"{' '.join(args)} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}"
        raise LabError(msg)
    return done


def _cable(plan: ClusterPlan, device: str, port: str) -> Link:
    fabric = plan.fabric
    assert fabric is not None
    for link in fabric.links:
        if (link.a_device, link.a_port) == (device, port) or (link.b_device, link.b_port) == (device, port):
            return link
    msg = f"{device} {port}: no cable in the plan"
    raise LabError(msg)


def _next_hop(plan: ClusterPlan, pin: Pin) -> list[str]:
    """``via`` arguments for a pin: the peer's IPv4 address on a numbered cable, else its IPv6 link-local address."""
    link = _cable(plan, pin.device, pin.port)
    near_a = (link.a_device, link.a_port) == (pin.device, pin.port)
    peer, peer_port, peer_address = (link.b_device, link.b_port, link.b_address) if near_a else (link.a_device, link.a_port, link.a_address)
    if peer_address:
        return ["via", peer_address]
    shown = _run("ip", "-n", namespace(plan.name, peer), "-j", "-6", "addr", "show", "dev", peer_port, "scope", "link").stdout
    local = [a["local"] for entry in json.loads(shown or "[]") for a in entry.get("addr_info", []) if a.get("family") == "inet6"]
    if not local:
        msg = f"{peer} {peer_port}: no IPv6 link-local address to route a pin through"
        raise LabError(msg)
    return ["via", "inet6", local[0]]


def pin(plan: ClusterPlan, pairs: Iterable[BandwidthPair]) -> list[tuple[str, str]]:
    """Install the pins of ``pairs`` (one round: their pins never collide); the (namespace, destination) installed."""
    installed: list[tuple[str, str]] = []
    for pair in pairs:
        for one in pair.pins:
            ns = namespace(plan.name, one.device)
            _run("ip", "-n", ns, "route", "replace", one.destination, *_next_hop(plan, one), "dev", one.port)
            installed.append((ns, one.destination))
    return installed


def unpin(installed: Iterable[tuple[str, str]]) -> None:
    """Remove pins installed by ``pin`` (missing ones are fine)."""
    for ns, destination in installed:
        _run("ip", "-n", ns, "route", "del", destination, check=False)


def stream(plan: ClusterPlan, pair: BandwidthPair, seconds: float = 1.0) -> float:
    """Gb/s of a TCP stream from the pair's client to its server over the pinned path."""
    if not pair.server.address:
        msg = f"{pair.name}: the server port has no address"
        raise LabError(msg)
    args = [pair.server.address, str(STREAM_PORT), f"{seconds:g}"]
    server_ns, client_ns = namespace(plan.name, pair.server.node), namespace(plan.name, pair.client.node)
    server = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
        ["ip", "netns", "exec", server_ns, sys.executable, "-c", _SERVER, *args],  # noqa: S607
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        if server.stdout.readline().strip() != "ready":
            msg = f"{pair.name}: the stream server in {server_ns} did not start: {server.stderr.read() if server.stderr else ''}"
            raise LabError(msg)
        _run("ip", "netns", "exec", client_ns, sys.executable, "-c", _CLIENT, *args)
        out, err = server.communicate(timeout=COMMAND_TIMEOUT_S)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
    try:
        return float(out.strip())
    except ValueError:
        msg = f"{pair.name}: the stream server said {out.strip()!r} {err.strip()!r}"
        raise LabError(msg) from None


def measure(plan: ClusterPlan, pairs: Iterable[BandwidthPair], seconds: float = 1.0) -> dict[str, float]:
    """Each round's pins installed, its pairs streamed one after another (the twin's CPUs are the bottleneck of veth
    cables: concurrent streams would measure the machine), the pins removed; pair → Gb/s."""
    by_round: dict[int, list[BandwidthPair]] = {}
    for pair in pairs:
        by_round.setdefault(pair.round, []).append(pair)
    measured: dict[str, float] = {}
    for number in sorted(by_round):
        installed = pin(plan, by_round[number])
        try:
            for pair in by_round[number]:
                measured[pair.name] = stream(plan, pair, seconds)
        finally:
            unpin(installed)
    return measured


def throttle(plan: ClusterPlan, link: Link, rate: str = "50mbit") -> list[tuple[str, str]]:
    """A token bucket (``tc qdisc … tbf``) on both ends of one cable: both directions at ``rate``; the (namespace,
    port) throttled."""
    ends = [(namespace(plan.name, link.a_device), link.a_port), (namespace(plan.name, link.b_device), link.b_port)]
    for ns, port in ends:
        _run("ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", port, "root", "tbf", "rate", rate, "burst", "64kb", "latency", "100ms")
    return ends


def unthrottle(ends: Iterable[tuple[str, str]]) -> None:
    """Remove what ``throttle`` added."""
    for ns, port in ends:
        _run("ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", port, "root", check=False)


def converged(plan: ClusterPlan, paths: Mapping[str, int], timeout_s: float = 60.0) -> bool:
    """Wait until every leaf has ``paths[leaf]`` kernel next hops to every other leaf's first host /31."""
    fabric = plan.fabric
    assert fabric is not None
    subnets = {link.a_device: link.subnet for link in reversed(fabric.links) if link.kind == "host" and link.subnet}
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if all(_hops(plan, leaf, subnet) >= paths[leaf] for leaf in subnets for other, subnet in subnets.items() if other != leaf):
            return True
        time.sleep(0.5)
    return False


def _hops(plan: ClusterPlan, leaf: str, subnet: str) -> int:
    shown = _run("ip", "-n", namespace(plan.name, leaf), "-j", "route", "show", subnet, check=False).stdout
    routes = json.loads(shown or "[]")
    return max((len(r.get("nexthops", [])) or 1 for r in routes), default=0)
