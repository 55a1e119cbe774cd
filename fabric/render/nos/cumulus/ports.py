"""The per-port sections of a Cumulus config, written in Python: the interfaces and the BGP neighbours.

They were ``cumulus/interfaces.j2`` and ``cumulus/neighbors.j2``: five to six ``nv set interface`` lines per port and
two or three per neighbour, one Jinja expression (an attribute lookup and a ``finalize`` call) per value. A 100k-GPU
fabric has 602,112 switch ports (``bench/bench_planes.py``): those two templates were two thirds of its switch render.

Every value is still guarded as the templates guarded it (``fabric.render.guards.guard``: a number prints as it is,
anything else must be one NVUE word; a description is one line, quoted as one shell word, ``nvue_text``). A section
first checks all its values at once (``_plain``: every word at once with ``fabric.render.guards.all_words``, every number an
``int``, every description one line); those values print unchanged through the guard, so the lines are written from
them directly. Anything else (a refused value, or an odd type the guard still prints) takes the guarded path, value by
value in line order, so a refusal names the value and the section (``cumulus/interfaces: refusing …``) as a template's
did. The output is the templates' byte for byte (``tests/render`` goldens; ``tests/render/test_cumulus_ports.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

from fabric.errors import RenderError
from fabric.model.strings import is_safe_text
from fabric.plan.compute.facts import NeighborFacts, PortFacts
from fabric.render.breakout import Breakout
from fabric.render.guards import all_words, guard, nvue_text

Word = Callable[[object], object]


def _guarded(value: object) -> object:
    """One value as a template printed it (its ``finalize``): refused unless safe where it stands."""
    return guard("cumulus", value)


def _quoted(value: str) -> str:
    """``nvue_text`` of a value ``_plain`` has passed (one line): one single-quoted shell word."""
    return "'" + value.replace("'", "'\"'\"'") + "'"


def _plain(words: Sequence[object], numbers: Sequence[object], texts: Sequence[str]) -> bool:
    """Whether every word is a ``str`` that is one NVUE word, every number an ``int`` and every text one line: then the
    guard prints each unchanged (stricter than the guard, never looser: a ``False`` only costs the guarded path).
    ``all_words`` takes no ``str`` subclass for a word: a line prints ``str(word)``, which a subclass may override."""
    if any(type(n) is not int for n in numbers) or any(type(t) is not str for t in texts):
        return False
    return all_words("cumulus", words) and is_safe_text("".join(texts))


def _named(section: str, build: Callable[[], str]) -> str:
    """``build()``; a refused value names the section, as a template's name is given (``GuardedTemplate``)."""
    try:
        return build()
    except RenderError as exc:
        msg = f"{section}: {exc}"
        raise RenderError(msg) from exc


def interface_lines(
    loopback: str | None,
    ip: str,
    breakouts: Sequence[Breakout],
    ports: Sequence[PortFacts],
    rs_fec: Collection[str],
    *,
    watchdog: bool,
    port_vrf: Mapping[str, str] | None = None,
    ip_vrf: bool = True,
) -> str:
    """The ``cumulus/interfaces`` section: the loopback, the broken-out cages, then every cabled port.

    Sources: NVUE reference, Interface; CL 5.10 Switch Port Attributes (``link mtu``); QoS guide: "Enable PFC watchdog
    on the interfaces where you enable PFC: nv set interface swp1 qos pfc-watchdog" (CL >= 5.6, every supported
    release). Breakout: CL 5.9-5.15 Switch Port Attributes, "Configure a Breakout Port": ``nv set interface swp1 link
    breakout 4x`` (1x, 2x, 4x or 8x; since CL 5.4 the mode carries no speed, which each split port sets with ``link
    speed``); the split ports swp1s0.. exist only once their cage is broken out. FEC: CL 5.9-5.15 Switch Port
    Attributes, "FEC" (``nv set interface swp1 link fec rs``), on every port whose speed needs RS-FEC
    (``fabric/catalog/fec.py``). CL 5.15: ``ipv4 address`` (``fabric/render/nos/cumulus/syntax.py``, ``NvueWords.ip``).

    A shared spine's port joins its plane's VRF (``fabric.render.nos.cumulus.vrfs``): NVUE reference, Interface,
    ``nv set interface swp1 ip vrf RED`` up to CL 5.14, ``nv set interface swp1 vrf RED`` from 5.15
    (``NvueWords.ip_vrf``); such a spine has no default-VRF loopback (each VRF's is in ``cumulus/vrfs.j2``).

    Args:
        loopback: the switch's loopback ``a.b.c.d/32`` (None on a shared spine).
        ip: the release's IPv4 word (``NvueWords.ip``).
        breakouts: the cages cabled ports split, in cage order.
        ports: the cabled ports, in cabling order.
        rs_fec: the names of the ports that run RS-FEC.
        watchdog: the RoCE contract turns the PFC watchdog on (set on every lossless port).
        port_vrf: a shared spine's ports by name, each to its plane's VRF (empty elsewhere).
        ip_vrf: the release writes a port's VRF under ``ip`` (``ip vrf``; ``vrf`` from CL 5.15).

    Raises:
        RenderError: a value that is not one NVUE word, or a description with a line break, naming the section.
    """
    descriptions = [p.description for p in ports]
    vrf_of = port_vrf or {}
    vrf_word = "ip vrf" if ip_vrf else "vrf"

    def build(w: Word, q: Callable[[str], str]) -> str:  # w prints each word or number, q each description, in line order
        ipw = w(ip)
        lines = [f"nv set interface lo {ipw} address {w(loopback)}\n"] if loopback else []
        lines += [f"nv set interface {w(b.cage)} link breakout {w(b.fanout)}x\n" for b in breakouts]
        for p, description in zip(ports, descriptions, strict=True):
            set_ = f"nv set interface {w(p.name)} "
            lines.append(f"{set_}description {q(description)}\n{set_}link mtu {w(p.mtu)}\n{set_}link speed {w(p.speed_gbps)}G\n")
            if p.name in rs_fec:
                lines.append(f"{set_}link fec rs\n")
            if p.name in vrf_of:
                lines.append(f"{set_}{vrf_word} {w(vrf_of[p.name])}\n")
            if p.address:
                lines.append(f"{set_}{ipw} address {w(p.address)}\n")
            if p.lossless and watchdog:
                lines.append(f"{set_}qos pfc-watchdog\n")
        return "".join(lines)

    words = [ip, *([loopback] if loopback else []), *(b.cage for b in breakouts), *(p.name for p in ports)]
    words += [*(p.address for p in ports if p.address), *(vrf_of[p.name] for p in ports if p.name in vrf_of)]
    numbers = [*(b.fanout for b in breakouts), *(p.mtu for p in ports), *(p.speed_gbps for p in ports)]
    if _plain(words, numbers, descriptions):
        return build(str, _quoted)  # values _plain passed (a str or an int): the guard prints them unchanged
    return _named("cumulus/interfaces", lambda: build(_guarded, nvue_text))


def neighbor_lines(neighbors: Sequence[NeighborFacts]) -> str:
    """The ``cumulus/neighbors`` section: each eBGP session in the FABRIC peer group, by the peer's /31 address or,
    unnumbered, by interface.

    Source: CL >= 5.0 BGP ``neighbor`` (was ``peer``; CL 5.0 What's New), ``nv set vrf default router bgp neighbor
    swp1-8 type unnumbered``.

    Raises:
        RenderError: a value that is not one NVUE word, naming the section.
    """

    def build(w: Word) -> str:  # w prints each word, in line order
        lines: list[str] = []
        for n in neighbors:
            if n.address:
                set_ = f"nv set vrf default router bgp neighbor {w(n.address)} "
                lines.append(f"{set_}peer-group FABRIC\n{set_}description {w(n.peer)}\n")
            else:
                set_ = f"nv set vrf default router bgp neighbor {w(n.interface)} "
                lines.append(f"{set_}type unnumbered\n{set_}peer-group FABRIC\n{set_}description {w(n.peer)}\n")
        return "".join(lines)

    words = [*(n.address or n.interface for n in neighbors), *(n.peer for n in neighbors)]
    if _plain(words, (), ()):
        return build(str)
    return _named("cumulus/neighbors", lambda: build(_guarded))
