"""Acceptance pairs: the fewest node-to-node bandwidth tests that together cross every leaf-spine (and spine-super-spine)
cable of the compute fabric, each with its path pinned, grouped into rounds that share no cable.

How a pair's path is made deterministic (ECMP, stated plainly):
    On a routed Ethernet fabric a leaf spreads flows over its uplinks by a hash of the packet headers, with a seed and a
    field choice the ASIC keeps to itself, so the spine a pair's traffic takes cannot be predicted from the plan. Each
    pair therefore carries ``pins``: one /32 route per hop and direction (device, destination host address, egress
    port), more specific than the fabric's routes to the host /31s, so the pair's traffic takes exactly the planned
    cables. The twin installs them in the switch namespaces (``fabric.twin.acceptance``); on a real fabric they are
    static routes added for the test window and removed after it. Without them (``pinned`` false in the output) the
    coverage holds only in expectation and the localiser must be given the paths the traffic really took.
    On InfiniBand the subnet manager's forwarding tables decide each destination LID's path; the plan names the path it
    intends (``ibtracert <slid> <dlid>`` shows the real one) and ``pinned`` is false: feed traced paths to the localiser.

Cover (``plan_acceptance``): a pair whose hosts hang off two leaves of a pod crosses two leaf-spine cables at one
spine; one across pods also crosses two spine-super-spine cables at one super-spine. So at least ceil(n/2) pairs per
spine (n = its leaf cables) and per super-spine are needed, and the planner meets that bound per switch by pairing the
cables of different leaves (pods) at each one (``lower_bound`` says what the bound is; ``pairs`` never falls below it).

Localisation is ``fabric.plan.acceptance_localise``: slow pairs against healthy ones, and the follow-up pairs that
split what one round cannot.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from fabric.plan.types import ClusterPlan, FabricPlan, Link, SwitchPlan


def link_id(link: Link) -> str:
    """A cable's name: ``leaf01:swp2~spine01:swp1`` (its ``a`` end first, as ``cabling.csv`` lists it)."""
    return f"{link.a_device}:{link.a_port}~{link.b_device}:{link.b_port}"


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One end of a pair: a node's compute port and the leaf port it is cabled to."""

    node: str
    interface: str
    hca: str | None
    rail: int | None
    address: str | None
    leaf: str
    leaf_port: str

    @property
    def host_link(self) -> str:
        """The host cable's name (``link_id`` form)."""
        return f"{self.leaf}:{self.leaf_port}~{self.node}:{self.interface}"


@dataclass(frozen=True, slots=True)
class Pin:
    """A per-test route: on ``device``, traffic to ``destination`` (a /32) leaves through ``port``."""

    device: str
    destination: str
    port: str


@dataclass(frozen=True, slots=True)
class BandwidthPair:
    """One bandwidth test: ``server`` and ``client`` (ib_write_bw -b: both directions), the fabric cables its pinned
    path crosses from the client's leaf to the server's, and the round it runs in."""

    name: str
    round: int
    client: Endpoint
    server: Endpoint
    links: tuple[str, ...]
    pins: tuple[Pin, ...]

    @property
    def crossed(self) -> frozenset[str]:
        """Every cable the pair loads: its fabric cables and both host cables."""
        return frozenset((*self.links, self.client.host_link, self.server.host_link))


@dataclass(frozen=True, slots=True)
class AcceptancePlan:
    """The pairs, the fabric cables they must cover and the figures an operator checks them by."""

    cluster: str
    link_layer: str
    pinned: bool
    links: tuple[str, ...]
    """Every leaf-spine and spine-super-spine cable, in plan order."""
    pairs: tuple[BandwidthPair, ...]
    lower_bound: int
    uncovered: tuple[str, ...]
    """Cables no pair can cross (a spine cabled to one leaf only), with the reason."""

    @property
    def rounds(self) -> int:
        """Rounds of concurrent pairs (pairs of one round share no cable)."""
        return max((p.round for p in self.pairs), default=0)

    def covered(self) -> frozenset[str]:
        """The fabric cables some pair crosses."""
        return frozenset(link for p in self.pairs for link in p.links)


@dataclass(frozen=True, slots=True)
class _Uplink:
    """A fabric cable seen from the switch above it: ``below`` (leaf or spine) and its port, ``above`` and its port."""

    link: Link

    @property
    def below(self) -> str:
        return self.link.a_device

    @property
    def above(self) -> str:
        return self.link.b_device


def _match(items: Sequence[_Uplink], group: Callable[[_Uplink], str]) -> list[tuple[_Uplink, _Uplink]]:
    """Pair ``items`` so that the two of a pair are in different groups, every item in at least one pair, with
    ceil(n/2) pairs whenever no group holds more than half of them (sorted by group, item i meets item i + ceil(n/2));
    an item left over meets one of another group again. Items of a single group only cannot be paired: none returned.

    Example:
        >>> ups = [_Uplink(Link("fabric", leaf, "p", "s", "q", 1, 1)) for leaf in ("l1", "l2", "l3")]
        >>> [(a.below, b.below) for a, b in _match(ups, lambda u: u.below)]
        [('l1', 'l3'), ('l2', 'l1')]
    """
    ordered = sorted(items, key=group)
    n, half = len(ordered), (len(ordered) + 1) // 2
    pairs: list[tuple[_Uplink, _Uplink]] = []
    done: set[int] = set()
    for i in range(n - half):
        if group(ordered[i]) != group(ordered[i + half]):
            pairs.append((ordered[i], ordered[i + half]))
            done |= {i, i + half}
    for i in range(n):
        if i in done:
            continue
        other = next((j for j in range(n) if group(ordered[j]) != group(ordered[i])), None)
        if other is None:
            return pairs
        pairs.append((ordered[i], ordered[other]))
        done |= {i, other}
    return pairs


class _Hosts:
    """The host ports of each leaf, handed out in turn so that pairs spread over a leaf's nodes."""

    def __init__(self, plan: ClusterPlan) -> None:
        interfaces = {(n.hostname, i.name): i for n in plan.nodes for i in n.interfaces}
        fabric = plan.fabric
        assert fabric is not None
        self.ports: dict[str, list[Endpoint]] = defaultdict(list)
        for link in fabric.links:
            if link.kind == "host":
                port = interfaces.get((link.b_device, link.b_port))
                self.ports[link.a_device].append(
                    Endpoint(
                        link.b_device,
                        link.b_port,
                        port.hca if port else None,
                        port.rail if port else None,
                        link.b_address,
                        link.a_device,
                        link.a_port,
                    )
                )
        self.turn: dict[str, int] = defaultdict(int)

    def take(self, leaf: str, avoid: str = "", prefer: frozenset[str] = frozenset()) -> Endpoint | None:
        """The next host port on ``leaf`` (not on node ``avoid`` where another is there; one whose host cable is in
        ``prefer`` where there is one); None for a leaf without hosts."""
        ports = self.ports.get(leaf, [])
        if not ports:
            return None
        preferred = [p for p in ports if p.host_link in prefer and p.node != avoid]
        if preferred:
            return preferred[0]
        for step in range(len(ports)):
            candidate = ports[(self.turn[leaf] + step) % len(ports)]
            if candidate.node != avoid or step == len(ports) - 1:
                self.turn[leaf] += step + 1
                return candidate
        return None  # pragma: no cover - the loop always returns on its last step


def _pins(client: Endpoint, server: Endpoint, path: Sequence[Link], *, routed: bool) -> tuple[Pin, ...]:
    """One route per switch and direction along ``path`` (client leaf → … → server leaf), to the far host's /32."""
    if not routed or not client.address or not server.address:
        return ()
    hops = [client.leaf]
    for link in path:
        hops.append(link.b_device if link.a_device == hops[-1] else link.a_device)
    pins: list[Pin] = []
    for index, link in enumerate(path):
        here, there = hops[index], hops[index + 1]
        out_port = link.a_port if link.a_device == here else link.b_port
        back_port = link.a_port if link.a_device == there else link.b_port
        pins.append(Pin(here, f"{server.address}/32", out_port))
        pins.append(Pin(there, f"{client.address}/32", back_port))
    return tuple(pins)


def _rounds(pairs: Iterable[tuple[Endpoint, Endpoint, tuple[Link, ...]]], *, routed: bool, prefix: str) -> list[BandwidthPair]:
    """Greedy rounds: a pair joins the first round whose pairs share none of its cables."""
    loads: list[set[str]] = []
    out: list[BandwidthPair] = []
    for index, (client, server, path) in enumerate(pairs, start=1):
        links = tuple(link_id(link) for link in path)
        crossed = {*links, client.host_link, server.host_link}
        slot = next((r for r, used in enumerate(loads) if not used & crossed), None)
        if slot is None:
            loads.append(set())
            slot = len(loads) - 1
        loads[slot] |= crossed
        out.append(BandwidthPair(f"{prefix}{index:03d}", slot + 1, client, server, links, _pins(client, server, path, routed=routed)))
    return out


def _uplinks(fabric: FabricPlan) -> tuple[dict[str, list[_Uplink]], dict[str, list[_Uplink]]]:
    """Leaf cables per spine and spine cables per super-spine."""
    tier = {s.name: s.tier for s in fabric.switches}
    at_spine: dict[str, list[_Uplink]] = defaultdict(list)
    at_super: dict[str, list[_Uplink]] = defaultdict(list)
    for link in fabric.links:
        if link.kind != "fabric":
            continue
        if tier.get(link.a_device) == "leaf":
            at_spine[link.b_device].append(_Uplink(link))
        elif tier.get(link.a_device) == "spine":
            at_super[link.b_device].append(_Uplink(link))
    return at_spine, at_super


def fabric_links(fabric: FabricPlan) -> tuple[Link, ...]:
    """The cables acceptance must cover: leaf-spine and spine-super-spine, in plan order."""
    return tuple(link for link in fabric.links if link.kind == "fabric")


def plan_acceptance(plan: ClusterPlan) -> AcceptancePlan | None:
    """The acceptance pairs of ``plan``'s compute fabric; None without an on-prem fabric."""
    fabric = plan.fabric
    if fabric is None:
        return None
    routed = fabric.link_layer == "ethernet"
    hosts = _Hosts(plan)
    at_spine, at_super = _uplinks(fabric)
    # a leaf with no host (a spare, or an SU's unfilled rails) cannot send or receive a test: its cables are reported, and
    # kept out of the matching so that they never take the partner a cable of a leaf with hosts needs
    hostless = {u.below for ups in at_spine.values() for u in ups if not hosts.ports.get(u.below)}
    at_spine = {spine: [u for u in ups if u.below not in hostless] for spine, ups in at_spine.items()}
    uncovered_at: dict[str, list[_Uplink]] = {spine: list(ups) for spine, ups in at_spine.items()}
    chosen: list[tuple[Endpoint, Endpoint, tuple[Link, ...]]] = []
    pods = fabric.pods

    def leaf_cable(spine: str) -> _Uplink | None:
        """A leaf cable of ``spine``, one no pair crosses yet where there is one."""
        queue = uncovered_at.get(spine, [])
        if queue:
            return queue.pop(0)
        return next(iter(at_spine.get(spine, [])), None)

    for superspine in sorted(at_super):
        ups = at_super[superspine]
        for one, two in _match(ups, lambda u: str(pods.pod_of(_switch(fabric, u.below)) if pods else u.below)):
            down_a, down_b = leaf_cable(one.below), leaf_cable(two.below)
            if down_a is None or down_b is None:
                continue
            client = hosts.take(down_a.below)
            server = hosts.take(down_b.below, avoid=client.node if client else "")
            if client and server:
                chosen.append((client, server, (down_a.link, one.link, two.link, down_b.link)))
    for spine in sorted(at_spine):
        left = uncovered_at[spine]
        if not left:
            continue
        # the cables still uncovered, each paired with another leaf's cable at this spine (a covered one if need be)
        pool = left + [u for u in at_spine[spine] if u not in left]
        for one, two in _match(left, lambda u: u.below) if len({u.below for u in left}) > 1 else _single(left, pool):
            client = hosts.take(one.below)
            server = hosts.take(two.below, avoid=client.node if client else "")
            if client and server:
                chosen.append((client, server, (one.link, two.link)))
    pairs = _rounds(chosen, routed=routed, prefix="p")
    links = fabric_links(fabric)
    covered = {link for p in pairs for link in p.links}
    uncovered = tuple(
        f"{link_id(link)}: {link.a_device} has no hosts"
        if link.a_device in hostless
        else f"{link_id(link)}: no other leaf with hosts on {link.b_device}"
        for link in links
        if link_id(link) not in covered
    )
    bound = max(
        sum((len(ups) + 1) // 2 for ups in at_spine.values()),
        sum((len(ups) + 1) // 2 for ups in at_super.values()),
    )
    return AcceptancePlan(plan.name, fabric.link_layer, routed, tuple(link_id(link) for link in links), tuple(pairs), bound, uncovered)


def _single(left: Sequence[_Uplink], pool: Sequence[_Uplink]) -> list[tuple[_Uplink, _Uplink]]:
    """Cables of one leaf still uncovered: each meets a cable of another leaf at the same spine."""
    out: list[tuple[_Uplink, _Uplink]] = []
    for one in left:
        other = next((u for u in pool if u.below != one.below), None)
        if other is not None:
            out.append((one, other))
    return out


def _switch(fabric: FabricPlan, name: str) -> SwitchPlan:
    return next(s for s in fabric.switches if s.name == name)


def follow_up(plan: ClusterPlan, acceptance: AcceptancePlan, suspects: Iterable[str], healthy: Iterable[str]) -> tuple[BandwidthPair, ...]:
    """Pairs that split the suspects one round left together: each suspect cable meets cables and hosts a healthy pair
    crossed (``healthy``: ``Localisation.proven``), so a slow follow-up pair names its suspect alone.

    A leaf cable meets a proven cable of another leaf at its spine; a spine-super-spine cable meets a proven cable of
    another pod at its super-spine, reached over proven leaf cables; a host cable meets a proven host of another leaf
    over proven cables of one spine. A suspect with no such partner gets no pair (localisation stays ambiguous there).
    """
    fabric = plan.fabric
    assert fabric is not None
    proven = frozenset(healthy)
    hosts = _Hosts(plan)
    at_spine, at_super = _uplinks(fabric)
    by_id = {link_id(u.link): u for ups in (*at_spine.values(), *at_super.values()) for u in ups}
    host_ends = {e.host_link: e for ends in hosts.ports.values() for e in ends}
    pods = fabric.pods

    def pod(switch: str) -> str:
        return str(pods.pod_of(_switch(fabric, switch))) if pods else switch

    def best(ups: Iterable[_Uplink], other_than: str = "", key: Callable[[_Uplink], str] = lambda u: u.below) -> _Uplink | None:
        """A cable not of ``other_than`` (by ``key``), a proven one first."""
        return min((u for u in ups if key(u) != other_than), key=lambda u: (link_id(u.link) not in proven, link_id(u.link)), default=None)

    chosen: list[tuple[Endpoint, Endpoint, tuple[Link, ...]]] = []
    for suspect in sorted(set(suspects)):
        up = by_id.get(suspect)
        if suspect in host_ends:  # a host cable: over a proven cable of its leaf and one of another leaf at that spine
            end = host_ends[suspect]
            mine = best(u for ups in at_spine.values() for u in ups if u.below == end.leaf)
            partner = best(at_spine.get(mine.above, []), other_than=end.leaf) if mine else None
            server = hosts.take(partner.below, avoid=end.node, prefer=proven) if partner else None
            if mine and partner and server:
                chosen.append((end, server, (mine.link, partner.link)))
        elif up is not None and up.above in at_spine:  # a leaf cable: meets a proven cable of another leaf at its spine
            partner = best(at_spine[up.above], other_than=up.below)
            client = hosts.take(up.below, prefer=proven)
            server = hosts.take(partner.below, avoid=client.node if client else "", prefer=proven) if partner else None
            if partner and client and server:
                chosen.append((client, server, (up.link, partner.link)))
        elif up is not None:  # a spine-super-spine cable: meets a proven one of another pod, over proven leaf cables
            partner = best(at_super.get(up.above, []), other_than=pod(up.below), key=lambda u: pod(u.below))
            down_a = best(at_spine.get(up.below, []))
            down_b = best(at_spine.get(partner.below, [])) if partner else None
            client = hosts.take(down_a.below, prefer=proven) if down_a else None
            server = hosts.take(down_b.below, avoid=client.node if client else "", prefer=proven) if down_b else None
            if partner and down_a and down_b and client and server:
                chosen.append((client, server, (down_a.link, up.link, partner.link, down_b.link)))
    return tuple(_rounds(chosen, routed=acceptance.pinned, prefix="f"))
