"""FRR (the local twin's switches, and the BGP half of SONiC): ``frr.conf``, for FRR 8.4 (Debian 12) and SONiC's FRR.

Interfaces, loopback, eBGP underlay (unnumbered or /31) with ECMP and BFD. Built in Python rather than from a Jinja
template: a leaf's file is some 700 values on 500 lines, and the template's per-value attribute look-ups and
``finalize`` calls were 40 % of a SONiC switch's render (issue 36). Every value is guarded as a template's would be
(``fabric.render.guards.guard``): a name or an address must be one FRR word, a description one line; a refused value
raises ``RenderError`` naming ``frr.conf``.

A shared spine (``fabric.plan.compute.shared_spines``) has a VRF per plane and no default-VRF routing
(``render_vrf_conf``, formerly the template ``frr-vrfs.conf.j2``); the sections both forms print (the preamble, the
interfaces, a route map, BFD, a BGP instance, the vty access) are written once, below.
"""

from __future__ import annotations

from collections.abc import Sequence

from fabric.errors import RenderError
from fabric.model.strings import is_safe_text
from fabric.model.topology import UnderlaySpec
from fabric.plan.compute.facts import NeighborFacts, SwitchFacts
from fabric.plan.compute.spine_vrfs import VrfFacts, spine_vrfs
from fabric.render.guards import all_words, guard_for
from fabric.render.guards import text as free_text

FILE = "frr.conf"


_w = guard_for("frr")
"""``value`` once it is safe where one FRR word goes (numbers as they are), as a template prints it."""


def render_frr_conf(facts: SwitchFacts, *, management: bool = True, sonic: bool = False) -> str:
    """The integrated ``frr.conf`` of one switch.

    Args:
        facts: the switch.
        management: add the vty access list (off inside SONiC, whose management lives in config_db).
        sonic: SONiC's FRR: traditional defaults with an explicit ``no bgp ebgp-requires-policy``, and the FPM lines
            SONiC's ``docker_init.sh`` would append.

    Raises:
        RenderError: a value that is not one FRR word, or free text that is not one line; the message names the file.
    """
    vrfs = spine_vrfs(facts)
    if vrfs:  # a shared spine (fabric.plan.compute.shared_spines): a VRF and a BGP instance per plane
        return render_vrf_conf(facts, vrfs, management=management, sonic=sonic)
    try:
        return "".join(_lines(facts, management=management, sonic=sonic))
    except RenderError as exc:
        msg = f"{FILE}: {exc}"
        raise RenderError(msg) from exc


def _lines(facts: SwitchFacts, *, management: bool, sonic: bool) -> list[str]:
    """The file in sections, in the order FRR's ``show running-config`` writes them.

    Every string printed where one FRR word goes is taken from the facts into ``words`` and every description into
    ``descriptions`` first, and checked there all at once: one regex over all the words (``all_words``, which takes
    only values of type ``str``) and one over all the descriptions (a character is unsafe alone, so the joined text is
    safe exactly when each is); those values print unchanged through the guard, so the sections print them as they
    are, with constants and numbers through ``_w``. When either check finds a fault, or a value that is not a ``str``,
    every value goes through the guard in turn as a template printed it, ``str(_w(value))`` (a description through
    ``text``), which raises naming the first refused one, and the sections print what the guard returned: never a
    value's own ``format()`` of text the guard did not see. So nothing reaches the file unchecked, and each value is
    accepted exactly when the template's ``finalize`` would accept it.
    """
    s, ports, neighbors = facts.switch, facts.ports, facts.neighbors
    names = [p.name for p in ports]
    addresses = [p.address for p in ports]
    descriptions = [p.description for p in ports]
    sessions = [n.address or n.interface for n in neighbors]  # the /31 address, or the interface when unnumbered
    peers = [n.peer for n in neighbors]
    prefixes = [prefix for prefix, _ in facts.fabric_prefixes]
    originated = list(facts.originated)
    head = [s.name, facts.cluster, s.loopback, facts.router_id, *([facts.management.allowed_prefix] if management else [])]
    words = [*head, *names, *[a for a in addresses if a], *prefixes, *sessions, *peers, *originated]
    if not (all_words("frr", words) and is_safe_text("".join(descriptions))):  # a fault, or a value not a str: one by one
        head, names = [_p(v) for v in head], [_p(v) for v in names]
        addresses = [_p(a) if a else a for a in addresses]
        prefixes, sessions, peers, originated = (
            [_p(v) for v in prefixes],
            [_p(v) for v in sessions],
            [_p(v) for v in peers],
            [_p(v) for v in originated],
        )
        descriptions = [_p(free_text(d)) for d in descriptions]
    name, cluster, loopback, router_id = head[:4]
    out = [_preamble(name, cluster, sonic=sonic)]
    out += _interfaces(names, descriptions, addresses)
    out.append(f"interface lo\n ip address {loopback}\nexit\n!\n")
    if management:
        out.append(_access_list(head[4]))
    out += _route_map("FABRIC-OUT", prefixes, [_w(ge) for _, ge in facts.fabric_prefixes])
    out.extend(_bfd(facts.underlay))
    out += _bgp(
        _w(s.asn),
        router_id,
        facts.underlay,
        sessions=sessions,
        peers=peers,
        neighbors=neighbors,
        networks=originated,
        route_map="FABRIC-OUT",
        sonic=sonic,
    )
    if management:
        out.append(_LINE_VTY)
    return out


def _bfd(underlay: UnderlaySpec) -> list[str]:
    """The BFD profile, when the underlay runs BFD. FRR hides values equal to its defaults (3 x 300 ms) in
    ``show running-config``: they are left out the same way, so a push is idempotent."""
    if not underlay.bfd:
        return []
    out = ["bfd\n profile FABRIC\n"]
    if underlay.bfd_multiplier != 3:
        out.append(f"  detect-multiplier {_w(underlay.bfd_multiplier)}\n")
    if underlay.bfd_interval_ms != 300:
        interval = _w(underlay.bfd_interval_ms)
        out.append(f"  receive-interval {interval}\n  transmit-interval {interval}\n")
    out.append(" exit\nexit\n!\n")
    return out


_FPM = "no fpm use-next-hop-groups\nfpm address 127.0.0.1\n"
_FPM_NOTE = "! SONiC's docker_init.sh (split-unified) appends these to frr.conf when missing: zebra feeds fpmsyncd over FPM\n"
_LINE_VTY = "line vty\n access-class MGMT-SSH\nexit\n!\n"


def _preamble(name: object, cluster: object, *, sonic: bool, note: str = "", fpm_note: bool = True) -> str:
    """The head of the file up to its first ``!``: whose it is, the defaults profile, zebra's settings and, on SONiC, its
    FPM lines. ``note``: a line after the first (a shared spine's VRFs); ``fpm_note``: the FPM lines' comment (a shared
    spine's file never had it)."""
    # SONiC builds FRR with its default profile, traditional (no --with-defaults in src/sonic-frr), so its own
    # bgpd.main.conf.j2 writes "no bgp ebgp-requires-policy"; naming the profile keeps show running-config equal to this file.
    fpm = ((_FPM_NOTE if fpm_note else "") + _FPM) if sonic else ""
    return (
        f"! {name}: generated by gpufabric from cluster '{cluster}'; do not edit\n{note}"
        f"frr defaults {'traditional' if sonic else 'datacenter'}\n"
        f"hostname {name}\nlog syslog informational\nservice integrated-vtysh-config\n"
        "! FRR 8.4 keeps only one ECMP next hop after a link flap with kernel nexthop groups (FRR #12239)\n"
        f"no zebra nexthop kernel enable\n{fpm}!\n"
    )


def _interfaces(names: Sequence[object], descriptions: Sequence[object], addresses: Sequence[object]) -> list[str]:
    """Each port with its description and, when it has one, its address. A port in a VRF is named ``IFNAME vrf NAME``
    (``interface IFNAME vrf NAME``: FRR 8.4 user guide, basic commands, interface in a VRF)."""
    return [
        f"interface {port}\n description {text}\n ip address {address}\nexit\n!\n" if address else f"interface {port}\n description {text}\nexit\n!\n"
        for port, text, address in zip(names, descriptions, addresses, strict=True)
    ]


def _access_list(prefix: object) -> str:
    """The vty access list: only the management prefix."""
    return (
        "! management: vty access only from the management prefix\n"
        f"access-list MGMT-SSH seq 10 permit {prefix}\naccess-list MGMT-SSH seq 20 deny any\n!\n"
    )


def _route_map(name: object, prefixes: Sequence[object], ges: Sequence[object]) -> list[str]:
    """The prefix list ``name`` (each prefix with its ``ge``) and the route map of the same name that matches it."""
    out = [
        f"ip prefix-list {name} seq {index * 10} permit {prefix} ge {ge}\n"
        for index, (prefix, ge) in enumerate(zip(prefixes, ges, strict=True), start=1)
    ]
    out.append(f"!\nroute-map {name} permit 10\n match ip address prefix-list {name}\nexit\n!\n")
    return out


def _bgp(
    router: object,
    router_id: object,
    u: UnderlaySpec,
    *,
    sessions: Sequence[object],
    peers: Sequence[object],
    neighbors: Sequence[NeighborFacts],
    networks: Sequence[object],
    route_map: object,
    sonic: bool,
) -> list[str]:
    """One BGP instance (``router bgp ASN``, or ``router bgp ASN vrf NAME``): the FABRIC peer group, a session per
    neighbour (by address, or by interface when unnumbered), the networks it originates and its outbound route map."""
    out = [f"router bgp {router}\n bgp router-id {router_id}\n"]
    if sonic:
        out.append(" no bgp ebgp-requires-policy\n")
    out.append(" bgp bestpath as-path multipath-relax\n neighbor FABRIC peer-group\n neighbor FABRIC remote-as external\n")
    if u.bfd:
        out.append(" neighbor FABRIC bfd\n neighbor FABRIC bfd profile FABRIC\n")
    out += [
        f" neighbor {session} peer-group FABRIC\n neighbor {session} description {peer}\n"
        if n.address
        else f" neighbor {session} interface peer-group FABRIC\n neighbor {session} description {peer}\n"
        for session, peer, n in zip(sessions, peers, neighbors, strict=True)
    ]
    out.append(" !\n address-family ipv4 unicast\n")
    out += [f"  network {prefix}\n" for prefix in networks]
    out.append(f"  neighbor FABRIC route-map {route_map} out\n  maximum-paths {_w(u.max_paths)}\n exit-address-family\nexit\n!\n")
    return out


def render_vrf_conf(facts: SwitchFacts, vrfs: Sequence[VrfFacts], *, management: bool = True, sonic: bool = False) -> str:
    """The ``frr.conf`` of a shared spine (``fabric.plan.compute.shared_spines``) on FRR 8.4: a VRF per plane, each with
    its ports, its loopback on the VRF device (not on SONiC: config_db's ``Loopback<k>``, ``fabric.render.nos.sonic.vrfs``)
    and its own BGP instance; no default-VRF routing at all.

    FRR's forms (FRR 8.4 user guide, https://docs.frrouting.org/en/stable-8.4/): ``vrf NAME`` ... ``exit-vrf`` (zebra,
    Virtual Routing and Forwarding), ``interface IFNAME vrf NAME`` (basic commands, interface in a VRF), ``router bgp
    ASN vrf VRFNAME`` (bgp, Multiple Autonomous Systems / VRF). The kernel's VRF devices and their ports come from
    ``vrfs.ip`` (``render_vrf_devices``). No ``import vrf`` / ``route-target`` / ``leak`` line: the planes' routes never
    meet.

    Every value is printed as the template printed it, ``str(_w(value))`` (a description through ``text`` first, a
    route map's name upper-cased before its guard), one by one in line order: a shared spine is one switch of a
    fabric's few, so there is no all-at-once check to gain from.

    Args:
        facts: the spine.
        vrfs: its VRFs (``spine_vrfs``; the twin's tests give others).
        management: add the vty access list (off inside SONiC).
        sonic: SONiC's FRR (``render_frr_conf``).

    Raises:
        RenderError: a value that is not one FRR word, or free text that is not one line; the message names the file.
    """
    try:
        return "".join(_vrf_lines(facts, vrfs, management=management, sonic=sonic))
    except RenderError as exc:
        msg = f"{FILE}: {exc}"
        raise RenderError(msg) from exc


def _p(value: object) -> str:
    """``value`` as a template printed it: ``str(finalize(value))``."""
    return str(_w(value))


def _vrf_lines(facts: SwitchFacts, vrfs: Sequence[VrfFacts], *, management: bool, sonic: bool) -> list[str]:
    """``render_vrf_conf``'s file in sections."""
    s, u = facts.switch, facts.underlay
    name, cluster = _p(s.name), _p(facts.cluster)
    names = [_p(v.name) for v in vrfs]
    note = f"! shared spine: one VRF per plane{''.join(f' {n}' for n in names)}; planes never cross\n"
    out = [_preamble(name, cluster, sonic=sonic, note=note, fpm_note=False)]
    out += [f"vrf {n}\nexit-vrf\n!\n" for n in names]
    for v, vrf in zip(vrfs, names, strict=True):
        ports = v.ports
        addresses = [_p(p.address) if p.address else None for p in ports]
        out += _interfaces([f"{_p(p.name)} vrf {vrf}" for p in ports], [_p(free_text(p.description)) for p in ports], addresses)
        if not sonic:  # on SONiC the VRF's loopback is config_db's Loopback<k> (fabric.render.nos.sonic.vrfs)
            out.append(f"interface {vrf} vrf {vrf}\n description {vrf} loopback\n ip address {_p(v.loopback)}\nexit\n!\n")
    if management:
        out.append(_access_list(_p(facts.management.allowed_prefix)))
    maps = [_p(_upper(v.name)) for v in vrfs]
    for v, upper in zip(vrfs, maps, strict=True):
        out += _route_map(f"FABRIC-OUT-{upper}", [_p(prefix) for prefix, _ in v.fabric_prefixes], [_p(ge) for _, ge in v.fabric_prefixes])
    out.extend(_bfd(u))
    asn = _p(s.asn)
    for v, vrf, upper in zip(vrfs, names, maps, strict=True):
        sessions = [_p(n.address) if n.address else _p(n.interface) for n in v.neighbors]
        peers = [_p(n.peer) for n in v.neighbors]
        route_map = f"FABRIC-OUT-{upper}"
        out += _bgp(
            f"{asn} vrf {vrf}",
            _p(v.router_id),
            u,
            sessions=sessions,
            peers=peers,
            neighbors=v.neighbors,
            networks=[_p(v.loopback)],
            route_map=route_map,
            sonic=sonic,
        )
    if management:
        out.append(_LINE_VTY)
    return out


def _upper(value: object) -> str:
    """Jinja's ``upper`` filter: the text of ``value`` (itself when a ``str``) in upper case."""
    return (value if isinstance(value, str) else str(value)).upper()


def render_vrf_devices(vrfs: tuple[VrfFacts, ...]) -> str:
    """``vrfs.ip``: the Linux VRF devices of a shared spine and their ports, for ``ip -batch`` (iproute2, ip(8)).

    FRR runs on Linux's VRFs and does not create them: each is a ``vrf`` device bound to its own routing table, and a
    port joins it by ``master`` (docs.kernel.org/networking/vrf.html, "Virtual Routing and Forwarding (VRF)").

    Example:
        >>> from fabric.plan.compute.facts import PortFacts
        >>> port = PortFacts("swp3", "fabric", "p2-leaf01", "swp3", 100, 9216, 3, None, None, True)
        >>> print(render_vrf_devices((VrfFacts("Vrf-plane2", 2, 1002, "10.255.128.1/32", (port,), (), ()),)), end="")
        link add Vrf-plane2 type vrf table 1002
        link set Vrf-plane2 up
        link set swp3 master Vrf-plane2
    """
    lines: list[str] = []
    for v in vrfs:
        lines += [f"link add {v.name} type vrf table {v.table}", f"link set {v.name} up"]
        lines += [f"link set {p.name} master {v.name}" for p in v.ports]
    return "".join(f"{line}\n" for line in lines)


def render_frr(facts: SwitchFacts) -> dict[str, str]:
    """Files of an FRR switch."""
    vrfs = spine_vrfs(facts)
    return {FILE: render_frr_conf(facts), **({"vrfs.ip": render_vrf_devices(vrfs)} if vrfs else {})}
