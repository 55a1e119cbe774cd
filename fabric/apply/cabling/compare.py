"""The plan's cables against the neighbours the devices report, diagnosed per rail in plain words; pure.

A cable is seen when either end reports the other (one reply per cable is enough: a node not read is still checked
from its leaf). What differs from the plan is explained once, in the words a technician acts on:

- two cables whose ends are exchanged on one device: ``gpu017: mlx5_3 and mlx5_5 are swapped (rail 4 ↔ rail 6)``,
  ``leaf-su02-r1: swp3 and swp4 are swapped (spine01 swp3 ↔ spine02 swp3)``;
- a cable in another port: ``leaf-su02-r3 swp12 goes to gpu044 mlx5_2, planned gpu043 mlx5_2``, or from the node's end
  when the switch port is not in the plan (``node3 eth1 (rail 1) goes to leaf-su02-r2 swp9, planned leaf-su02-r1 swp1``);
- a planned cable that neither end sees, while at least one end was read: ``missing``;
- a neighbour the plan has no cable for: ``unexpected``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from fabric.apply.cabling.ib import ib_port_number
from fabric.apply.cabling.parse import UNKNOWN_PORT, Seen
from fabric.catalog.switches import SWITCH_MODELS
from fabric.plan.types import ClusterPlan, HostInterface

FaultKind = Literal["swapped", "moved", "missing", "unexpected"]


@dataclass(frozen=True, slots=True, order=True)
class End:
    """One end of a cable: a device's port."""

    device: str
    port: str


@dataclass(frozen=True, slots=True)
class Planned:
    """A planned cable: ``a`` the switch closer to the hosts, ``b`` the node or the upper switch."""

    a: End
    b: End
    plane: str


@dataclass(frozen=True, slots=True)
class Fault:
    """One difference from the plan: ``text`` says what is wrong, ``fix`` what to do, on ``device``."""

    kind: FaultKind
    device: str
    text: str
    fix: str


@dataclass(frozen=True, slots=True)
class Report:
    """The read-back: faults, and how much of the plan the replies covered."""

    faults: tuple[Fault, ...]
    planned: int
    checked: int
    matched: int
    unread: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """True when every checked cable is where the plan puts it and nothing else was seen."""
        return not self.faults


def planned_cables(plan: ClusterPlan, planes: Sequence[str] = ()) -> list[Planned]:
    """Every cable of ``plan`` on ``planes`` (all when empty) with both ends named (an OOB uplink's core port is
    site-specific: left out)."""
    links = [*(plan.fabric.links if plan.fabric else ()), *(plan.oob.links if plan.oob else ()), *(x for net in plan.storage for x in net.links)]
    return [
        Planned(End(x.a_device, x.a_port), End(x.b_device, x.b_port), x.plane)
        for x in links
        if x.a_port and x.b_port and (not planes or x.plane in planes)
    ]


@dataclass(frozen=True, slots=True)
class Names:
    """How the plan names the ends: node ports by HCA and rail, and the aliases a reply may use for them."""

    ports: Mapping[End, HostInterface]
    aliases: Mapping[End, str]  # (host, "mlx5_3") → the interface name; (switch, alias) → its port
    devices: frozenset[str]
    nodes: frozenset[str]
    rails: Mapping[str, int] = field(default_factory=dict[str, int])  # a rail-optimized fabric's leaf → its rail

    def label(self, end: End, *, rail: bool = True) -> str:
        """``gpu017 mlx5_3 (rail 4)``, ``leaf01 swp3``."""
        iface = self.ports.get(end)
        if iface is None:
            return f"{end.device} {end.port}"
        text = f"{end.device} {iface.hca or iface.name}"
        return f"{text} (rail {iface.rail})" if rail and iface.rail is not None else text

    def port(self, end: End) -> str:
        """The port as the device's technician names it: the HCA of a node port, else the port."""
        iface = self.ports.get(end)
        return (iface.hca or iface.name) if iface is not None else end.port

    def end(self, device: str, port: str) -> End:
        """A reported end in the plan's names: a host's FQDN to its hostname, an HCA or alias to the port."""
        if device not in self.devices and device.split(".", maxsplit=1)[0] in self.devices:
            device = device.split(".", maxsplit=1)[0]
        return End(device, self.aliases.get(End(device, port), port))


def sonic_aliases(plan: ClusterPlan) -> dict[End, str]:
    """A SONiC compute switch's port aliases → its ports: SONiC's lldpmgrd advertises each port by its alias
    (``lldpcli configure ports <ifname> lldp portidsubtype local <alias>``, sonic-buildimage
    ``dockers/docker-lldp/lldpmgrd``), so its neighbours report ``etp1a`` for ``Ethernet0``."""
    out: dict[End, str] = {}
    for switch in plan.fabric.switches if plan.fabric else ():
        model = SWITCH_MODELS.get(switch.model)
        if switch.nos != "sonic" or model is None or model.sonic is None:
            continue
        speeds = {x.speed_gbps for x in plan.fabric.links if switch.name in (x.a_device, x.b_device)} if plan.fabric else set[int]()
        for speed in sorted(speeds):
            with contextlib.suppress(ValueError):  # no SKU at that speed: the renderer refuses it, nothing to map
                out |= {End(switch.name, p.alias): p.name for p in model.sonic_ports(speed)}
    return out


def plan_names(plan: ClusterPlan, switch_aliases: Mapping[End, str] | None = None) -> Names:
    """The plan's names of every cabled end (``switch_aliases``: a switch's advertised port alias → its port; SONiC's
    by default)."""
    ports = {End(n.hostname, i.name): i for n in plan.nodes for i in n.interfaces}
    aliases = {End(n.hostname, i.hca): i.name for n in plan.nodes for i in n.interfaces if i.hca}
    aliases |= sonic_aliases(plan) if switch_aliases is None else dict(switch_aliases)
    cables = planned_cables(plan)
    ib = {End(e.device, n): e.port for c in cables for e in (c.a, c.b) if (n := ib_port_number(e.port)) is not None}  # ibnetdiscover's numbers
    aliases |= ib
    devices = frozenset({c.a.device for c in cables} | {c.b.device for c in cables} | {n.hostname for n in plan.nodes})
    rails = {s.name: s.rail for s in plan.fabric.switches if s.rail is not None} if plan.fabric else {}
    return Names(ports, aliases, devices, frozenset(n.hostname for n in plan.nodes), rails)


def compare(cables: Iterable[Planned], seen: Iterable[Seen], replied: Iterable[str], names: Names, every: Iterable[Planned] = ()) -> Report:
    """The diagnosis of ``seen`` (the neighbours of the devices in ``replied``) against the planned ``cables``.
    ``every``: the cables of every plane; a neighbour on a port that another plane's cable owns is left to that plane."""
    cables = list(cables)
    read = frozenset(replied)
    partner: dict[End, End] = {}
    a_side: set[End] = set()
    for c in cables:
        partner[c.a], partner[c.b] = c.b, c.a
        a_side.add(c.a)
    others = {e for c in every for e in (c.a, c.b)} - partner.keys()
    observed: set[frozenset[End]] = set()
    for s in seen:
        local = names.end(s.device, s.port)
        far = names.end(s.peer, s.peer_port)
        if s.peer_port == UNKNOWN_PORT:  # a neighbour known by its MAC: matched by device alone
            want = partner.get(local)
            far = want if want is not None and want.device == far.device else End(far.device, "(port unknown)")
        edge = frozenset({local, far})
        if len(edge) == 2 and not edge & others:
            observed.add(edge)
    planned = {frozenset({c.a, c.b}) for c in cables}
    checked = [c for c in cables if c.a.device in read or c.b.device in read]
    matched = sum(1 for c in checked if frozenset({c.a, c.b}) in observed)
    extra = sorted(_pair(e) for e in observed - planned)
    faults: list[Fault] = []
    used: set[tuple[End, End]] = set()
    explained: set[End] = set()
    edge_of = {end: edge for edge in extra for end in edge}
    for edge in extra:
        if edge in used:
            continue
        other = _crossed(edge, partner, edge_of)
        if other is not None and other not in used and (fault := _swap(edge, partner, a_side, names)) is not None:
            faults.append(fault)
            used |= {edge, other}
            explained |= {*edge, *other}
    for edge in extra:
        if edge not in used:
            faults.append(_moved(edge, partner, a_side, names))
            explained |= {*edge, *(partner[e] for e in edge if e in partner)}
    seen_ends = {e for edge in observed for e in edge}
    for c in checked:
        if frozenset({c.a, c.b}) in observed or {c.a, c.b} & (explained | seen_ends):
            continue
        not_read = [d for d in (c.a.device, c.b.device) if d not in read]
        why = (
            "no neighbour on either end"
            if not not_read
            else f"no neighbour on {names.label(c.a if c.a.device in read else c.b)}; {not_read[0]} not read"
        )
        faults.append(
            Fault(
                "missing",
                c.a.device,
                f"missing link: {names.label(c.a)} – {names.label(c.b)} ({why})",
                f"cable {names.label(c.a, rail=False)} to {names.label(c.b, rail=False)}, or check both optics and the link state",
            )
        )
    unread = tuple(sorted({e.device for c in cables for e in (c.a, c.b)} - read))
    return Report(tuple(faults), len(cables), len(checked), matched, unread)


def _pair(edge: frozenset[End]) -> tuple[End, End]:
    first, second = sorted(edge)
    return first, second


def _crossed(edge: tuple[End, End], partner: Mapping[End, End], edge_of: Mapping[End, tuple[End, End]]) -> tuple[End, End] | None:
    """The seen cable that, with ``edge``, forms two planned cables re-plugged crosswise: seen x–y and P(x)–P(y)."""
    x, y = edge
    px, py = partner.get(x), partner.get(y)
    if px is None or py is None:
        return None
    other = edge_of.get(px)
    return other if other is not None and set(other) == {px, py} else None


def _swap(edge: tuple[End, End], partner: Mapping[End, End], a_side: set[End], names: Names) -> Fault | None:
    """Two cables crossed: the two ports on one device whose cables were exchanged, said per rail on a node."""
    x, y = edge
    px, py = partner[x], partner[y]
    pairs = [(p, q) for p, q in ((px, y), (x, py)) if p.device == q.device]
    if not pairs:
        return None  # four devices: two cables moved, each said on its own
    pairs.sort(key=lambda pq: (pq[0].device not in names.nodes, pq[0] not in a_side))  # a node first, then the switch closer to the hosts
    u, v = sorted(pairs[0])
    device = u.device
    if device in names.nodes:
        iu, iv = names.ports.get(u), names.ports.get(v)
        rails = f" (rail {iu.rail} ↔ rail {iv.rail})" if iu and iv and iu.rail is not None and iv.rail is not None else ""
        text = f"{device}: {names.port(u)} and {names.port(v)} are swapped{rails}"
    else:
        text = f"{device}: {u.port} and {v.port} are swapped ({names.label(partner[u])} ↔ {names.label(partner[v])})"
    goes = f"{names.port(u)} goes to {names.label(partner[u], rail=False)}, {names.port(v)} to {names.label(partner[v], rail=False)}"
    fix = f"{device}: exchange the cables in {names.port(u)} and {names.port(v)}: {goes}"
    return Fault("swapped", device, text, fix)


def _moved(edge: tuple[End, End], partner: Mapping[End, End], a_side: set[End], names: Names) -> Fault:
    """A seen cable the plan does not have: anchored at its planned end (the switch's when both are planned)."""
    ends = sorted((e for e in edge if e in partner), key=lambda e: (e not in a_side, e))
    if not ends:
        x, y = edge
        return Fault(
            "unexpected",
            x.device,
            f"unexpected neighbour: {names.label(x)} – {names.label(y)} is not in the plan",
            f"unplug {names.label(x, rail=False)} – {names.label(y, rail=False)}, or add it to the definition",
        )
    anchor = ends[0]
    far = edge[1] if edge[0] == anchor else edge[0]
    want = partner[anchor]
    where = "another port of the same device" if far.device == want.device else _wrong_device(far, want, names)
    text = f"{names.label(anchor)} goes to {names.label(far)}, planned {names.label(want)} ({where})"
    if far in partner and partner[far] != anchor:
        text += f"; {names.label(far, rail=False)} was planned on {names.label(partner[far], rail=False)}"
    fix = f"move the cable of {names.label(anchor, rail=False)} from {names.label(far, rail=False)} to {names.label(want, rail=False)}"
    return Fault("moved", anchor.device, text, fix)


def _wrong_device(far: End, want: End, names: Names) -> str:
    if far.device not in names.devices:
        return f"{far.device} is not in the plan"
    if far.device in names.nodes:
        return "another node"
    have, planned = names.rails.get(far.device), names.rails.get(want.device)
    return (
        f"another switch: {far.device} is rail {have}, {want.device} rail {planned}"
        if have is not None and planned is not None and have != planned
        else "another switch"
    )
