"""Compute-fabric topology: size the leaf and spine tiers, place nodes in scalable units and rails, cable it all.

Sizing follows the DGX SuperPOD reference: a rail-optimized scalable unit has one leaf per rail with ``su_size``
host ports; each leaf gets enough uplinks for the oversubscription target; the spine count is the smallest
divisor of the uplink count whose radix takes every uplink, so each leaf reaches every spine equally.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from fabric.catalog.switches import SWITCH_MODELS, SwitchModel
from fabric.errors import Finding, InputError
from fabric.model.cluster import ClusterSpec
from fabric.model.nodes import format_hostname
from fabric.model.topology import FabricSpec
from fabric.plan.quick_init import quick_init


@quick_init  # built by the hundred thousand: fabric.plan.quick_init
@dataclass(frozen=True, slots=True)
class FabricMember:
    """A node port cabled to the compute fabric."""

    hostname: str
    node_id: int
    port: int
    ports: int
    interface: str


@dataclass(frozen=True, slots=True)
class FabricSizing:
    """The numbers that fix the shape of a two-tier fabric.

    ``fanout`` / ``uplink_fanout``: logical ports per native leaf port at the host / uplink speed (2 for 400G on an
    800G cage); ``spine_fanout`` the same for the spines at the uplink speed. ``leaf_radix`` counts leaf ports at the
    host speed, ``spine_radix`` spine ports at the uplink speed.
    """

    link_layer: str
    speed_gbps: int
    rails: int
    host_ports_per_leaf: int
    uplinks_per_leaf: int
    leaves: int
    spines: int
    fanout: int
    spine_fanout: int
    leaf_radix: int
    spine_radix: int
    uplink_speed_gbps: int = 0
    uplink_fanout: int = 0

    @property
    def up_speed(self) -> int:
        """Speed of the leaf-spine links (the host speed unless the fabric sets its own)."""
        return self.uplink_speed_gbps or self.speed_gbps

    @property
    def oversubscription(self) -> Fraction:
        """Downlink over uplink bandwidth of a leaf."""
        return Fraction(self.host_ports_per_leaf * self.speed_gbps, self.uplinks_per_leaf * self.up_speed)

    @property
    def parallel_links(self) -> int:
        """Links between each leaf and each spine."""
        return self.uplinks_per_leaf // self.spines

    @property
    def first_uplink(self) -> int:
        """Logical index, at the uplink speed, of a leaf's first uplink: the first whole cage after the host ports."""
        return math.ceil(self.host_ports_per_leaf / self.fanout) * (self.uplink_fanout or self.fanout)


def fabric_members(spec: ClusterSpec) -> list[FabricMember]:
    """Every node port on the compute fabric, ordered by node id then port."""
    members: list[FabricMember] = []
    for group in spec.nodes:
        profile = spec.profile_of(group)
        ports = profile.ports.get("compute") if profile else None
        if ports is None:
            continue
        link_layer = "infiniband" if spec.planes.compute.transport == "infiniband" else "ethernet"
        names = group.interfaces.get("compute") or ports.interface_names(link_layer)
        for index, node_id in zip(range(1, group.count + 1), group.node_ids(), strict=True):
            hostname = format_hostname(group.hostname, index)
            members.extend(FabricMember(hostname, node_id, p, ports.count, names[p]) for p in range(ports.count))
    return sorted(members, key=lambda m: (m.node_id, m.port))


def leaf_slot(fabric: FabricSpec, sizing: FabricSizing, member: FabricMember, stride: int) -> tuple[int, int, int | None]:
    """Where a node port lands: ``(leaf id, host port index on the leaf, rail)``; all from stable ids.

    Rail-optimized: port p of a node in SU s goes to the SU's rail-p leaf, host port = slot in the SU. Nodes with
    fewer ports than rails spread their ports over rails from their slot. Fat-tree: node ports fill leaves in id order.
    """
    slot = member.node_id - 1
    if fabric.topology == "rail-optimized":
        su, position = divmod(slot, fabric.su_size)
        rail = member.port if member.ports == sizing.rails else (position + member.port) % sizing.rails
        return su * sizing.rails + rail + 1, position, rail
    leaf_index, position = divmod(slot * stride + member.port, sizing.host_ports_per_leaf)
    return leaf_index + 1, position, None


def size_fabric(spec: ClusterSpec, members: list[FabricMember]) -> FabricSizing:
    """Size the tiers, or raise InputError naming every constraint the definition breaks."""
    fabric = spec.fabric
    assert fabric is not None
    findings: list[Finding] = []
    profiles = [p for p in (spec.profile_of(g) for g in spec.nodes if g.count) if p is not None]
    speeds = {p.ports["compute"].speed_gbps for p in profiles if "compute" in p.ports}
    if len(speeds) > 1:
        findings.append(Finding(("nodes",), f"compute ports run at different speeds {sorted(speeds)} Gb/s; one fabric needs one host speed"))
        raise InputError(findings)
    speed = speeds.pop() if speeds else SWITCH_MODELS[fabric.leaf.model].speed_gbps
    up_speed = fabric.uplink_speed_gbps or speed
    leaf_model, spine_model = SWITCH_MODELS[fabric.leaf.model], SWITCH_MODELS[fabric.spine.model]
    needs = (("leaf", leaf_model, fabric.leaf.nos, {speed, up_speed}), ("spine", spine_model, fabric.spine.nos, {up_speed}))
    for tier, model, nos, tier_speeds in needs:
        findings.extend(speed_findings(tier, model, nos, tier_speeds, ("fabric", "uplink_speed_gbps")))
    if findings:
        raise InputError(findings)
    leaf_radix, up_radix, spine_radix = leaf_model.radix(speed), leaf_model.radix(up_speed), spine_model.radix(up_speed)
    assert leaf_radix is not None
    assert up_radix is not None
    assert spine_radix is not None
    fanout, up_fanout, spine_fanout = leaf_radix // leaf_model.ports, up_radix // leaf_model.ports, spine_radix // spine_model.ports
    rails = max((m.ports for m in members), default=1) if fabric.topology == "rail-optimized" else 1
    down = _host_ports_per_leaf(spec, leaf_radix, fanout, up_fanout, Fraction(up_speed, speed))
    needed_up = math.ceil(Fraction(down * speed, up_speed) / fabric.target_ratio)
    up = fabric.uplinks_per_leaf or needed_up
    cages = math.ceil(down / fanout) + math.ceil(up / up_fanout)
    if cages > leaf_model.ports:
        findings.append(
            Finding(
                ("fabric", "leaf", "model"),
                f"each leaf needs {down} host ports at {speed} Gb/s + {up} uplinks at {up_speed} Gb/s = {cages} cages, but "
                f"{leaf_model.name} has {leaf_model.ports}; choose a larger leaf, lower su_size, or accept more oversubscription",
            )
        )
    ratio = Fraction(down * speed, up * up_speed)
    if ratio > fabric.target_ratio:
        findings.append(
            Finding(
                ("fabric", "uplinks_per_leaf"),
                f"{down} host ports x {speed} Gb/s = {_tbps(down * speed)} down over {up} uplinks x {up_speed} Gb/s = "
                f"{_tbps(up * up_speed)} up is {format_ratio(ratio)} oversubscribed, above the target {fabric.oversubscription}; "
                f"raise uplinks_per_leaf to {needed_up} or relax the target",
            )
        )
    leaves = _leaf_count(spec, members, rails, down)
    # Three tiers: fabric.plan.compute.three_tier sizes the pods and their spines.
    spines = _spine_count(spec, leaves * up, up, spine_radix, findings) if fabric.super_spine is None else 0
    if findings:
        raise InputError(findings)
    return FabricSizing(
        ("infiniband" if leaf_model.link_layer == "infiniband" else "ethernet"),
        speed,
        rails,
        down,
        up,
        leaves,
        spines,
        fanout,
        spine_fanout,
        leaf_radix,
        spine_radix,
        up_speed,
        up_fanout,
    )


def speed_findings(tier: str, model: SwitchModel, nos: str, speeds: set[int], mixed_path: tuple[str, ...]) -> list[Finding]:
    """Why ``model`` under ``nos`` cannot run every speed of ``speeds`` on one switch, if it cannot.

    ``mixed_path`` names the setting that asks one switch for two speeds. SONiC runs them on one switch through dynamic
    port breakout (the default SKU, each cage in its own ``BREAKOUT_CFG`` mode) where the catalog carries the platform's
    per-cage ``breakout_modes`` (platform.json) for every speed's fanout; elsewhere it runs one SKU, one speed.
    """
    where = ("fabric", tier, "model")
    findings = [
        Finding(where, f"{model.name} cannot run {speed} Gb/s ports (it supports {list(model.speeds())}); pick a model that does")
        for speed in sorted(speeds, reverse=True)
        if model.radix(speed) is None
    ]
    skus = model.sonic.skus if model.sonic and nos == "sonic" else None
    if skus is None or findings:
        return findings
    sonic = model.sonic
    if len(speeds) > 1 and sonic is not None and all(sonic.dynamic_mode(model.fanout(speed) or 0) for speed in speeds):
        return findings  # dynamic port breakout: the default SKU, each cage in the platform.json mode of its speed
    if len(speeds) > 1:
        plural = {"leaf": "leaves", "spine": "spines"}.get(tier, "super-spines")
        findings.append(
            Finding(
                mixed_path,
                f"SONiC runs one SKU, one port speed, on a {model.name} (the catalog has no platform.json breakout modes for it, "
                f"which dynamic port breakout needs); {model.name} {plural} cannot mix {sorted(speeds)} Gb/s. "
                f"Drop {mixed_path[-1]} or run the {plural} under another NOS (e.g. cumulus)",
            )
        )
    findings.extend(
        Finding(
            where,
            f"SONiC has no {model.name} SKU for {speed} Gb/s ports (its SKUs run {[s.speed_gbps for s in skus]} Gb/s); "
            "use hosts at one of those speeds, another model, or another NOS",
        )
        for speed in sorted(speeds, reverse=True)
        if not any(s.speed_gbps == speed for s in skus)
    )
    return findings


def _tbps(gbps: int) -> str:
    return f"{gbps / 1000:g} Tb/s"


def _host_ports_per_leaf(spec: ClusterSpec, leaf_radix: int, fanout: int, up_fanout: int, up_over_down: Fraction) -> int:
    """Host ports per leaf; on a fat-tree without a count, what the cages leave after the uplinks the target needs.

    ``up_over_down`` is the uplink speed over the host speed: one uplink carries that many host ports' worth.
    """
    fabric = spec.fabric
    assert fabric is not None
    if fabric.topology == "rail-optimized":
        return fabric.su_size
    if fabric.host_ports_per_leaf:
        return fabric.host_ports_per_leaf
    cages = leaf_radix // fanout
    if fabric.uplinks_per_leaf:
        return max(1, (cages - math.ceil(fabric.uplinks_per_leaf / up_fanout)) * fanout)
    ratio = fabric.target_ratio
    if up_over_down == 1 and up_fanout == fanout:
        return max(1, math.floor(leaf_radix * ratio / (ratio + 1)))
    # A host cage carries `fanout` host ports; an uplink cage carries up_fanout * up_over_down host ports' worth.
    per_up_cage = up_fanout * up_over_down
    down_cages = math.floor(cages * ratio * per_up_cage / (fanout + ratio * per_up_cage))
    return max(1, down_cages * fanout)


def _leaf_count(spec: ClusterSpec, members: list[FabricMember], rails: int, down: int) -> int:
    fabric = spec.fabric
    assert fabric is not None
    if not members:
        return 0
    last = members[-1].node_id - 1
    if fabric.topology == "rail-optimized":
        return (last // fabric.su_size + 1) * rails
    stride = spec.planes.compute.max_ports_per_node
    return max((m.node_id - 1) * stride + m.port for m in members) // down + 1


def _spine_count(spec: ClusterSpec, total_uplinks: int, up: int, spine_radix: int, findings: list[Finding]) -> int:
    needed = max(1, math.ceil(total_uplinks / spine_radix))
    forced = spec.fabric.spines if spec.fabric is not None else None
    if forced is not None:
        choices = [s for s in range(needed, up + 1) if up % s == 0] or "none (the fabric is too large)"
        if up % forced:
            more = math.ceil(up / forced) * forced
            findings.append(
                Finding(
                    ("fabric", "spines"),
                    f"{forced} spines do not divide each leaf's {up} uplinks ({up} = {up // forced} x {forced} + {up % forced}): "
                    f"leaves would reach some spines over more links than others, and ECMP would load the spines unequally; "
                    f"use spines: one of {choices}, or uplinks_per_leaf: {more}",
                )
            )
        elif forced < needed:
            findings.append(
                Finding(
                    ("fabric", "spines"),
                    f"{forced} spines of {spine_radix} ports cannot take {total_uplinks} leaf uplinks (they need at least {needed}); "
                    f"use spines: one of {choices}",
                )
            )
        return forced
    fitting = [s for s in range(needed, up + 1) if up % s == 0]
    if not fitting:
        findings.append(
            Finding(
                ("fabric", "spine", "model"),
                f"{total_uplinks} leaf uplinks need {needed} spines of radix {spine_radix}, but a leaf has only {up} uplinks to "
                "spread over them; a two-tier fabric this large needs a higher-radix spine or fewer nodes",
            )
        )
        return needed
    return fitting[0]


def format_ratio(value: Fraction) -> str:
    """``Fraction(3, 2)`` -> ``'1.5:1'``; whole ratios as ``'2:1'``.

    Example:
        >>> format_ratio(Fraction(1, 1))
        '1:1'
    """
    return f"{value.numerator}:1" if value.denominator == 1 else f"{float(value):g}:1"
