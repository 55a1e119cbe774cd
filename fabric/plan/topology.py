"""Compute-fabric topology: size the leaf and spine tiers, place nodes in scalable units and rails, cable it all.

Sizing follows the DGX SuperPOD reference: a rail-optimized scalable unit has one leaf per rail with ``su_size``
host ports; each leaf gets enough uplinks for the oversubscription target; the spine count is the smallest
divisor of the uplink count whose radix takes every uplink, so each leaf reaches every spine equally.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from fabric.catalog.hardware import HARDWARE
from fabric.catalog.switches import SWITCH_MODELS
from fabric.errors import Finding, InputError
from fabric.model.cluster import ClusterSpec
from fabric.model.nodes import format_hostname
from fabric.model.topology import FabricSpec


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
    """The numbers that fix the shape of a two-tier fabric."""

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

    @property
    def oversubscription(self) -> Fraction:
        """Downlink over uplink bandwidth of a leaf (same speed both ways)."""
        return Fraction(self.host_ports_per_leaf, self.uplinks_per_leaf)

    @property
    def parallel_links(self) -> int:
        """Links between each leaf and each spine."""
        return self.uplinks_per_leaf // self.spines

    @property
    def first_uplink(self) -> int:
        """Logical index of a leaf's first uplink: the first whole cage after the host ports."""
        return math.ceil(self.host_ports_per_leaf / self.fanout) * self.fanout


def fabric_members(spec: ClusterSpec) -> list[FabricMember]:
    """Every node port on the compute fabric, ordered by node id then port."""
    members: list[FabricMember] = []
    for group in spec.nodes:
        profile = HARDWARE.get(group.hardware or "")
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
    speeds = {HARDWARE[g.hardware].ports["compute"].speed_gbps for g in spec.nodes if g.hardware and "compute" in HARDWARE[g.hardware].ports}
    if len(speeds) > 1:
        findings.append(Finding(("nodes",), f"compute ports run at different speeds {sorted(speeds)} Gb/s; one fabric needs one host speed"))
        raise InputError(findings)
    speed = speeds.pop() if speeds else SWITCH_MODELS[fabric.leaf.model].speed_gbps
    leaf_model, spine_model = SWITCH_MODELS[fabric.leaf.model], SWITCH_MODELS[fabric.spine.model]
    leaf_radix, spine_radix = leaf_model.radix(speed), spine_model.radix(speed)
    for tier, model, radix in (("leaf", leaf_model, leaf_radix), ("spine", spine_model, spine_radix)):
        if radix is None:
            findings.append(
                Finding(
                    ("fabric", tier, "model"),
                    f"{model.name} cannot run {speed} Gb/s ports (it supports {list(model.speeds())}); pick a model that does",
                )
            )
    for tier, model, nos in (("leaf", leaf_model, fabric.leaf.nos), ("spine", spine_model, fabric.spine.nos)):
        skus = model.sonic.skus if model.sonic and nos == "sonic" else None
        if skus is not None and model.radix(speed) is not None and not any(s.speed_gbps == speed for s in skus):
            findings.append(
                Finding(
                    ("fabric", tier, "model"),
                    f"SONiC has no {model.name} SKU for {speed} Gb/s ports (its SKUs run {[s.speed_gbps for s in skus]} Gb/s); "
                    "use hosts at one of those speeds, another model, or another NOS",
                )
            )
    if leaf_radix is None or spine_radix is None or findings:
        raise InputError(findings)
    fanout, spine_fanout = leaf_radix // leaf_model.ports, spine_radix // spine_model.ports
    rails = max((m.ports for m in members), default=1) if fabric.topology == "rail-optimized" else 1
    down = _host_ports_per_leaf(spec, leaf_radix, fanout)
    up = fabric.uplinks_per_leaf or math.ceil(Fraction(down) / fabric.target_ratio)
    cages = math.ceil(down / fanout) + math.ceil(up / fanout)
    if cages > leaf_model.ports:
        findings.append(
            Finding(
                ("fabric", "leaf", "model"),
                f"each leaf needs {down} host ports + {up} uplinks at {speed} Gb/s = {cages} cages, but {leaf_model.name} has "
                f"{leaf_model.ports}; choose a larger leaf, lower su_size, or accept more oversubscription",
            )
        )
    if Fraction(down, up) > fabric.target_ratio:
        findings.append(
            Finding(
                ("fabric", "uplinks_per_leaf"),
                f"{down} host ports over {up} uplinks is {format_ratio(Fraction(down, up))} oversubscribed, above the target "
                f"{fabric.oversubscription}; raise uplinks_per_leaf to {math.ceil(Fraction(down) / fabric.target_ratio)} or relax the target",
            )
        )
    leaves = _leaf_count(spec, members, rails, down)
    spines = _spine_count(spec, leaves * up, up, spine_radix, findings)
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
    )


def _host_ports_per_leaf(spec: ClusterSpec, leaf_radix: int, fanout: int) -> int:
    fabric = spec.fabric
    assert fabric is not None
    if fabric.topology == "rail-optimized":
        return fabric.su_size
    if fabric.host_ports_per_leaf:
        return fabric.host_ports_per_leaf
    if fabric.uplinks_per_leaf:
        return max(1, (leaf_radix // fanout - math.ceil(fabric.uplinks_per_leaf / fanout)) * fanout)
    ratio = fabric.target_ratio
    down = math.floor(leaf_radix * ratio / (ratio + 1))
    return max(1, down)


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
        if up % forced or forced < needed:
            findings.append(
                Finding(
                    ("fabric", "spines"),
                    f"{forced} spines do not fit: each leaf's {up} uplinks must split evenly over the spines and the spines "
                    f"need at least {needed} x {spine_radix} ports for {total_uplinks} uplinks; use one of "
                    f"{[s for s in range(needed, up + 1) if up % s == 0] or 'none (the fabric is too large)'}",
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
