"""Localisation: from the measured bandwidth of acceptance pairs, the cables to blame.

A pair is slow when it measures below ``threshold`` times the best pair of its round set (or below an absolute floor).
A cable is a suspect when a slow pair crosses it and no healthy pair does: a healthy pair proves every cable on its
(pinned) path good. A suspect is *named* when it is the only suspect of some slow pair: that pair's slowness has no
other explanation. A slow pair whose suspects are several is ``ambiguous`` (``fabric.plan.acceptance.follow_up`` plans
the pairs that split them); a slow pair with no suspect at all contradicts the healthy pairs (a host, an HCA or a
path other than the pinned one) and is listed in ``unexplained``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fabric.plan.acceptance import BandwidthPair


@dataclass(frozen=True, slots=True)
class Localisation:
    """What the measurements say: the slow pairs, the cables named, the suspects left to split, the unexplained."""

    slow: tuple[str, ...]
    healthy: tuple[str, ...]
    proven: tuple[str, ...]
    """Cables (fabric and host) some healthy pair crossed."""
    named: tuple[str, ...]
    suspects: tuple[str, ...]
    ambiguous: tuple[tuple[str, tuple[str, ...]], ...]
    """(slow pair, its suspects) where they are more than one."""
    unexplained: tuple[str, ...]
    missing: tuple[str, ...]
    """Pairs without a measurement: neither slow nor healthy, they prove nothing."""


def slow_pairs(measured: Mapping[str, float], *, threshold: float = 0.8, floor_gbps: float = 0.0) -> set[str]:
    """Pairs measuring below ``threshold`` × the best measurement, or below ``floor_gbps``.

    Example:
        >>> sorted(slow_pairs({"p1": 390.0, "p2": 120.0, "p3": 385.0}))
        ['p2']
    """
    if not measured:
        return set()
    best = max(measured.values())
    return {name for name, gbps in measured.items() if gbps < threshold * best or gbps < floor_gbps}


def localise(
    pairs: Iterable[BandwidthPair],
    measured: Mapping[str, float],
    *,
    threshold: float = 0.8,
    floor_gbps: float = 0.0,
) -> Localisation:
    """The cables the slow pairs share and the healthy ones do not (see the module docstring).

    Args:
        pairs: the pairs run (first round and follow-ups together).
        measured: pair name → measured Gb/s (both directions' minimum for a bidirectional test).
        threshold: a pair below this fraction of the best is slow.
        floor_gbps: a pair below this is slow whatever the best.
    """
    by_name = {p.name: p for p in pairs}
    present = {name: gbps for name, gbps in measured.items() if name in by_name}
    slow = slow_pairs(present, threshold=threshold, floor_gbps=floor_gbps)
    healthy = set(present) - slow
    proven = {link for name in healthy for link in by_name[name].crossed}
    suspects_of = {name: sorted(by_name[name].crossed - proven) for name in sorted(slow)}
    named = sorted({links[0] for links in suspects_of.values() if len(links) == 1})
    ambiguous = tuple((name, tuple(links)) for name, links in suspects_of.items() if len(links) > 1 and not set(links) & set(named))
    return Localisation(
        slow=tuple(sorted(slow)),
        healthy=tuple(sorted(healthy)),
        proven=tuple(sorted(proven)),
        named=tuple(named),
        suspects=tuple(sorted({link for links in suspects_of.values() for link in links})),
        ambiguous=ambiguous,
        unexplained=tuple(name for name, links in suspects_of.items() if not links),
        missing=tuple(sorted(set(by_name) - set(present))),
    )
