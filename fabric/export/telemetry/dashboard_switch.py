"""The dashboard's switch side: a row per tier (leaf, spine, super-spine) over the series the alert rules read
(``telemetry.signals``: PFC pauses received and sent on the RoCE priority, PFC watchdog trips, ECN-marked packets,
the queue or buffer watermark, link flaps, BGP sessions), each filtered to that tier's switches by gnmic's ``source``
label; FRR switches' BGP from frr_exporter; and, on rail-optimized fabrics, the leaf side per rail (pure).
"""

from __future__ import annotations

import re

from fabric.export.telemetry.layout import Layout
from fabric.export.telemetry.rails import Rail
from fabric.export.telemetry.scrape import FRR_NOSES
from fabric.export.telemetry.signals import Signals, Term, signals
from fabric.plan.compute.planes import plane_of
from fabric.plan.types import ClusterPlan, SwitchPlan

TIERS = ("leaf", "spine", "superspine")
_SAFE = re.compile(r"[A-Za-z0-9_-]+")


def _literal(name: str) -> str:
    """A name as a regex literal inside a PromQL string (backslashes doubled for the string)."""
    return name if _SAFE.fullmatch(name) else re.escape(name).replace("\\", "\\\\")


def sources(names: list[str]) -> str:
    r"""A ``source=~"..."`` matcher for exactly these switches (gnmic's ``source`` is the target's name).

    Example:
        >>> sources(["leaf2", "leaf1"])
        'source=~"leaf1|leaf2"'
        >>> sources(["sw.1"])
        'source=~"sw\\\\.1"'
    """
    return f'source=~"{"|".join(_literal(n) for n in sorted(names))}"'


def _each(terms: list[Term], where: str, inner: str, by: str) -> str:
    """``by (...) (term)`` per NOS joined with ``or``; ``inner`` formats the selector (``{}``) before the labels are made common."""
    return " or ".join(f"{by} ({t.common(inner.format(t.selector(where)))})" for t in terms)


def _bgp(s: Signals, where: str, *, established: bool) -> str:
    parts: list[str] = []
    for term, up, down in s.bgp:
        match, cmp = up if established else down
        parts.append(f"count by (source) ({term.selector(','.join(m for m in (match, where) if m))} {cmp})")
    return " or ".join(parts)


def _tier_panels(s: Signals, prio: int, where: str, layout: Layout) -> None:
    pauses = [
        (_each(terms, where, "rate({}[5m])", "sum by (source, port)"), f"{{{{source}}}} {{{{port}}}} {direction}")
        for terms, direction in ((s.pause_rx, "received"), (s.pause_tx, "sent"))
        if terms
    ]
    if pauses:
        layout.panel(f"PFC pauses on priority {prio}: received and sent", "pps", pauses)
    if s.watchdog:
        layout.panel(
            "PFC watchdog trips (10m)",
            "short",
            [(_each(s.watchdog, where, "increase({}[10m])", "sum by (source, port, queue)"), "{{source}} {{port}} q{{queue}}")],
        )
    if s.ecn:
        marked = [m for m, _ in s.ecn]
        layout.panel(
            "ECN-marked packets", "pps", [(_each(marked, where, "rate({}[5m])", "sum by (source, port, queue)"), "{{source}} {{port}} q{{queue}}")]
        )
    if s.watermark:
        layout.panel("Queue and buffer watermark", "bytes", [(_each(s.watermark, where, "{}", "max by (source, port)"), "{{source}} {{port}}")])
    if s.carrier:
        layout.panel(
            "Link flaps (carrier transitions, 10m)",
            "short",
            [(_each(s.carrier, where, "increase({}[10m])", "sum by (source, port)"), "{{source}} {{port}}")],
        )
    if s.bgp:
        layout.panel(
            "BGP sessions established and down",
            "short",
            [(_bgp(s, where, established=True), "{{source}} established"), (_bgp(s, where, established=False), "{{source}} down")],
        )


def _tier_rows(plan: ClusterPlan, switches: list[SwitchPlan], s: Signals, layout: Layout) -> None:
    for tier in sorted({sw.tier for sw in switches}, key=TIERS.index):
        names = sorted(sw.name for sw in switches if sw.tier == tier)
        layout.row(f"{tier.capitalize()} tier ({len(names)} switches)")
        _tier_panels(s, plan.roce.priority, sources(names), layout)
        if any(sw.nos in FRR_NOSES for sw in switches if sw.tier == tier):
            # frr_exporter (tynany/frr_exporter collector/bgp.go: 0 down, 1 established, 2 admin down), tier from prometheus.yml
            layout.panel(
                f"{tier} BGP sessions (frr_exporter)",
                "short",
                [
                    (f'sum by (instance) (frr_bgp_peer_state{{tier="{tier}"}} == 1)', "{{instance}} established"),
                    (f'count by (instance) (frr_bgp_peer_state{{tier="{tier}"}} == 0)', "{{instance}} down"),
                ],
            )


def _rail_rows(switches: list[SwitchPlan], s: Signals, layout: Layout) -> None:
    """The leaf side per rail: a rail whose leaves pause or mark far more than the others is the switch-side view of
    a rail imbalance (``RailImbalance`` reads the hosts' traffic)."""
    rails: dict[Rail, list[str]] = {}
    for sw in switches:
        if sw.tier == "leaf" and sw.rail is not None:
            rails.setdefault(Rail(plane_of(sw.name) or 0, sw.rail), []).append(sw.name)
    if len(rails) < 2 or not (s.pause_rx or s.ecn):
        return
    layout.row(f"Leaf side per rail ({len(rails)} rails)")
    per_rail = sorted(rails.items())
    if s.pause_rx:
        layout.panel(
            "PFC pauses received per rail",
            "pps",
            [(_each(s.pause_rx, sources(names), "rate({}[5m])", "sum"), f"rail {rail}") for rail, names in per_rail],
        )
    if s.ecn:
        marked = [m for m, _ in s.ecn]
        layout.panel(
            "ECN-marked packets per rail", "pps", [(_each(marked, sources(names), "rate({}[5m])", "sum"), f"rail {rail}") for rail, names in per_rail]
        )


def switch_rows(plan: ClusterPlan, layout: Layout) -> None:
    """The tier rows and the per-rail leaf row of an Ethernet fabric; nothing for InfiniBand (its switches report
    through the subnet manager) or a fabric without switches."""
    fabric = plan.fabric
    if fabric is None or fabric.link_layer == "infiniband" or not fabric.switches:
        return
    s = signals(plan)
    _tier_rows(plan, list(fabric.switches), s, layout)
    _rail_rows(list(fabric.switches), s, layout)
