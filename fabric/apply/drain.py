"""The drain policy of ``push --drain``: what makes a switch's neighbours stop sending traffic through it.

Chosen: on the drained switch itself, every permit entry of every outbound BGP route-map gets
``set as-path prepend <own ASN> x3`` and ``set community graceful-shutdown additive``.

- The AS-path prepend is what moves the traffic, with no configuration on the neighbours: BGP prefers the shorter
  AS path (RFC 4271 9.1.2.2 b), and multipath (FRR ``bgp bestpath as-path multipath-relax``, EOS/NX-OS alike) only
  joins paths of equal AS-path length, so a neighbour drops the drained switch from its ECMP set as soon as another
  path exists (FRR user guide, "BGP > Route Map Set Command": ``set as-path prepend AS-PATH``; "Multipath").
- The GRACEFUL_SHUTDOWN well-known community (65535:0, RFC 8326 section 3; FRR's keyword ``graceful-shutdown``, FRR
  user guide "BGP > Communities Attribute") tells neighbours that honour RFC 8326 (a route-map matching it that sets
  LOCAL_PREF 0) to de-prefer the routes too; ``additive`` keeps the communities the route already has.
- ``bgp graceful-shutdown`` (FRR's global knob) was not chosen: it lowers LOCAL_PREF only on the drained router and
  relies on every neighbour honouring the community; ``max-med`` was not chosen: MED is compared only between paths
  from the same neighbouring AS (RFC 4271 9.1.2.2 c), which a leaf's uplinks to spines of different ASNs are not.

Only FRR (the twin, and the vtysh of SONiC and Cumulus) has a drain policy checked here: for EOS and NX-OS the route-map
set commands are not in ``shared/reference/nos-grammar.md`` nor the lint form tables, and SONiC / Cumulus push through
their own config layers (GCU, NVUE), whose route-map paths we have not checked either. ``push --drain`` refuses those
switches before anything is touched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from fabric.errors import DrainError

PREPEND = 3  # more than any alternative path is longer in a 2- or 3-tier Clos (a leaf's other uplinks: 0 extra hops)
GSHUT = "graceful-shutdown"  # 65535:0 (RFC 8326)
DRAINABLE = frozenset({"frr"})

_ASN = re.compile(r"^router bgp (\d+)")
_OUT = re.compile(r"^\s*neighbor (\S+) route-map (\S+) out\s*$")
_PEER = re.compile(r"^\s*neighbor (\S+) (?:remote-as|interface|peer-group)\b(.*)$")
_GROUP = re.compile(r"\bpeer-group (\S+)")
_ENTRY = re.compile(r"^route-map (\S+) (permit|deny) (\d+)\s*$")


def refuse_undrainable(noses: dict[str, str]) -> None:
    """Refuse ``push --drain`` when a switch runs a NOS without a checked drain policy (switch → NOS).

    Raises:
        DrainError: naming every such switch and NOS.

    Example:
        >>> refuse_undrainable({"leaf01": "frr"})
        >>> refuse_undrainable({"leaf01": "eos"})
        Traceback (most recent call last):
        ...
        fabric.errors.DrainError: push --drain: no checked drain policy for leaf01 (eos); push these switches without --drain, ...
    """
    bad = sorted(f"{name} ({nos})" for name, nos in noses.items() if nos not in DRAINABLE)
    if bad:
        msg = f"push --drain: no checked drain policy for {', '.join(bad)}; push these switches without --drain, or drain them by hand"
        raise DrainError(msg)


@dataclass(frozen=True, slots=True)
class DrainPolicy:
    """What drains one FRR config: its ASN and the permit entries of its outbound route-maps."""

    asn: str
    entries: tuple[tuple[str, str], ...]  # (route-map, sequence)

    @property
    def sets(self) -> tuple[str, str]:
        """The two set lines each entry gets."""
        return f"set as-path prepend {' '.join([self.asn] * PREPEND)}", f"set community {GSHUT} additive"

    def lines(self) -> list[str]:
        """The config lines that drain (applied on top of the running config)."""
        out: list[str] = []
        for name, seq in self.entries:
            out += [f"route-map {name} permit {seq}", *(f" {s}" for s in self.sets), "exit"]
        return out

    def undo_lines(self) -> list[str]:
        """The config lines that undrain."""
        out: list[str] = []
        for name, seq in self.entries:
            out += [f"route-map {name} permit {seq}", " no set as-path prepend", " no set community", "exit"]  # FRR 8.4 takes no ASN list here
        return out

    def apply(self, config: str) -> str:
        """``config`` drained: the set lines inserted under each entry (the candidate a drained switch is changed to)."""
        wanted = {f"route-map {name} permit {seq}" for name, seq in self.entries}
        out: list[str] = []
        for line in config.splitlines():
            out.append(line)
            if line.rstrip() in wanted:
                out += [f" {s}" for s in self.sets]
        return "\n".join(out) + ("\n" if config.endswith("\n") else "")


def has_bgp(config: str) -> bool:
    """True when the config runs BGP (a switch without it carries no routed traffic to drain).

    Example:
        >>> has_bgp("hostname leaf01\\n"), has_bgp("router bgp 65101\\n bgp router-id 10.255.1.1\\n")
        (False, True)
    """
    return any(_ASN.match(line) for line in config.splitlines())


def drain_policy(config: str, device: str) -> DrainPolicy:
    """The drain policy of an FRR config (``device`` names it in errors).

    Raises:
        DrainError: no ``router bgp``, a peer whose updates pass no outbound route-map (the prepend would miss it), or
            an outbound entry that already sets the AS path or communities (undraining would remove what it set).

    Example:
        >>> conf = "router bgp 65100\\n neighbor F peer-group\\n neighbor swp1 interface peer-group F\\n address-family ipv4 unicast\\n"
        >>> conf += "  neighbor F route-map OUT out\\n exit-address-family\\nexit\\n"
        >>> conf += "route-map OUT permit 10\\n match ip address prefix-list P\\nexit\\n"
        >>> drain_policy(conf, "spine01").lines()
        ['route-map OUT permit 10', ' set as-path prepend 65100 65100 65100', ' set community graceful-shutdown additive', 'exit']
    """
    lines = config.splitlines()
    asn = next((m.group(1) for line in lines if (m := _ASN.match(line))), None)
    if asn is None:
        msg = f"cannot drain {device}: it runs no BGP (no 'router bgp' in its config)"
        raise DrainError(msg)
    maps = {m.group(1): m.group(2) for line in lines if (m := _OUT.match(line))}
    uncovered = sorted(peer for peer, group in _peers(lines) if peer not in maps and group not in maps)
    if uncovered:
        msg = f"cannot drain {device}: BGP peers {', '.join(uncovered)} have no outbound route-map to carry the drain policy"
        raise DrainError(msg)
    entries = _entries(lines, set(maps.values()), DrainPolicy(asn, ()).sets)
    if not entries:
        msg = f"cannot drain {device}: its outbound route-maps {', '.join(sorted(set(maps.values())))} have no permit entry"
        raise DrainError(msg)
    return DrainPolicy(asn, tuple(entries))


def _peers(lines: Iterable[str]) -> list[tuple[str, str | None]]:
    """(peer, its peer-group or None) for every neighbour that is not itself a peer-group."""
    groups = {m.group(1) for line in lines if (m := re.match(r"^\s*neighbor (\S+) peer-group\s*$", line))}
    peers: dict[str, str | None] = {}
    for line in lines:
        if (m := _PEER.match(line)) and m.group(1) not in groups:
            group = _GROUP.search(m.group(2))
            peers[m.group(1)] = group.group(1) if group else peers.get(m.group(1))
    return sorted(peers.items())


def _entries(lines: list[str], maps: set[str], ours: tuple[str, str]) -> list[tuple[str, str]]:
    """The permit entries of ``maps``; an entry already carrying our set lines (a switch left drained) is fine."""
    entries: list[tuple[str, str]] = []
    current: tuple[str, str] | None = None
    for line in lines:
        if m := _ENTRY.match(line):
            current = (m.group(1), m.group(3)) if m.group(1) in maps and m.group(2) == "permit" else None
            if current:
                entries.append(current)
        elif current and re.match(r"^\s+set (as-path prepend|community)\b", line) and line.strip() not in ours:
            msg = f"route-map {current[0]} permit {current[1]} already has '{line.strip()}'; the drain policy would overwrite it"
            raise DrainError(msg)
        elif not line.startswith(" "):
            current = None
    return entries
