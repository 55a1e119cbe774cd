"""Three-tier sizing: spines per pod, leaves per pod, super-spines per plane, and the checks of a built three-tier
fabric's pods (the shape and stability rules are in ``fabric.plan.compute.three_tier``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction

from fabric.catalog.switches import SWITCH_MODELS
from fabric.errors import Finding, InputError
from fabric.model.cluster import ClusterSpec
from fabric.model.topology import FabricSpec, parse_ratio
from fabric.plan.checks import PRIVATE_ASN_2B, PRIVATE_ASN_4B
from fabric.plan.compute.sizing import FabricSizing, speed_findings
from fabric.plan.types import FabricPlan

SS_PATH = ("fabric", "super_spine")
SpinePorts = Callable[[int], tuple[int, int, int]]
"""(downlinks, uplinks, cages) of a pod spine serving a number of leaves."""


@dataclass(frozen=True, slots=True)
class PodSizing:
    """The numbers that fix the shape of the pods and the super-spine tier (speeds in Gb/s, ports logical)."""

    leaves_per_pod: int
    spines_per_pod: int
    pods: int
    pods_planned: int
    leaf_parallel: int
    spine_down: int
    spine_up: int
    spine_first_uplink: int
    super_spines_per_plane: int
    parallel: int
    speed_gbps: int
    super_spine_radix: int
    spine_up_radix: int

    @property
    def max_pods(self) -> int:
        """Pods the super-spines can take: their radix over the links each takes from one pod."""
        return self.super_spine_radix // self.parallel

    @property
    def super_spines(self) -> int:
        """Super-spines in all planes (one plane per spine of a pod)."""
        return self.spines_per_pod * self.super_spines_per_plane


def size_pods(spec: ClusterSpec, sizing: FabricSizing) -> PodSizing:
    """Size pods and super-spines on top of the leaf sizing, or raise InputError with every constraint broken."""
    fabric = spec.fabric
    assert fabric is not None
    ss = fabric.super_spine
    assert ss is not None
    up_speed = sizing.up_speed
    ss_speed = ss.uplink_speed_gbps or up_speed
    spine_model, ss_model = SWITCH_MODELS[fabric.spine.model], SWITCH_MODELS[ss.model]
    findings = speed_findings("spine", spine_model, fabric.spine.nos, {up_speed, ss_speed}, (*SS_PATH, "uplink_speed_gbps"))
    findings += speed_findings("super_spine", ss_model, ss.nos, {ss_speed}, (*SS_PATH, "uplink_speed_gbps"))
    if findings:
        raise InputError(findings)
    down_radix, up_radix, ss_radix = spine_model.radix(up_speed), spine_model.radix(ss_speed), ss_model.radix(ss_speed)
    assert down_radix is not None
    assert up_radix is not None
    assert ss_radix is not None
    down_fanout, up_fanout = down_radix // spine_model.ports, up_radix // spine_model.ports
    up = sizing.uplinks_per_leaf
    spines = fabric.spines or up
    if up % spines:
        choices = [s for s in range(1, up + 1) if up % s == 0]
        findings.append(
            Finding(
                ("fabric", "spines"),
                f"{spines} spines per pod do not divide each leaf's {up} uplinks; leaves would reach some spines over more links "
                f"than others; use spines: one of {choices}",
            )
        )
        raise InputError(findings)
    leaf_parallel = up // spines
    ratio = parse_ratio(ss.oversubscription)

    def spine_ports(leaves: int) -> tuple[int, int, int]:
        """(downlinks, uplinks, cages) of a pod spine serving ``leaves`` leaves."""
        down = leaves * leaf_parallel
        uplinks = math.ceil(Fraction(down * up_speed, ss_speed) / ratio)
        return down, uplinks, math.ceil(down / down_fanout) + math.ceil(uplinks / up_fanout)

    step = sizing.rails if fabric.topology == "rail-optimized" else 1
    leaves_per_pod = ss.leaves_per_pod or _widest_pod(spine_ports, step, spine_model.ports)
    if leaves_per_pod == 0 or spine_ports(leaves_per_pod)[2] > spine_model.ports or leaves_per_pod % step:
        findings.append(_pod_finding(fabric, spine_ports, leaves_per_pod, step, spine_model.ports, ss_speed=ss_speed))
        raise InputError(findings)
    spine_down, spine_up, _ = spine_ports(leaves_per_pod)
    pods = max(1, math.ceil(sizing.leaves / leaves_per_pod))
    planned = ss.pods or pods
    if planned < pods:
        findings.append(
            Finding(
                (*SS_PATH, "pods"),
                f"the nodes fill {sizing.leaves} leaves = {pods} pods of {leaves_per_pod}, more than the {planned} the super-spines are "
                f"built for; set pods: {pods} or more (this re-cables the super-spines), or remove nodes",
            )
        )
    per_plane = _super_spines_per_plane(
        fabric, sizing, spine_up=spine_up, planned=planned, ss_radix=ss_radix, leaves_per_pod=leaves_per_pod, findings=findings
    )
    if findings:
        raise InputError(findings)
    first_uplink = math.ceil(spine_down / down_fanout) * up_fanout
    return PodSizing(
        leaves_per_pod,
        spines,
        pods,
        planned,
        leaf_parallel,
        spine_down,
        spine_up,
        first_uplink,
        per_plane,
        spine_up // per_plane,
        ss_speed,
        ss_radix,
        up_radix,
    )


def _widest_pod(spine_ports: SpinePorts, step: int, cages: int) -> int:
    """The most leaves (a multiple of ``step``) whose spine ports fit ``cages``; 0 if not even ``step`` fit."""
    leaves = 0
    while spine_ports(leaves + step)[2] <= cages:
        leaves += step
    return leaves


def _pod_finding(fabric: FabricSpec, spine_ports: SpinePorts, leaves: int, step: int, cages: int, *, ss_speed: int) -> Finding:
    model = fabric.spine.model
    if leaves and leaves % step:
        return Finding(
            (*SS_PATH, "leaves_per_pod"),
            f"{leaves} leaves per pod split a scalable unit's {step} rail leaves; a rail-optimized pod holds whole units: use a multiple of {step}",
        )
    ss = fabric.super_spine
    assert ss is not None
    wanted = leaves or step
    down, up, used = spine_ports(wanted)
    path = (*SS_PATH, "leaves_per_pod") if ss.leaves_per_pod else ("fabric", "spine", "model")
    return Finding(
        path,
        f"a pod of {wanted} leaves gives each spine {down} downlinks + {up} uplinks at {ss_speed} Gb/s "
        f"(target {ss.oversubscription}) = {used} cages, but {model} has {cages}; use fewer leaves per pod, fewer uplinks per "
        "leaf, a larger spine, or relax super_spine.oversubscription",
    )


def _super_spines_per_plane(
    fabric: FabricSpec, sizing: FabricSizing, *, spine_up: int, planned: int, ss_radix: int, leaves_per_pod: int, findings: list[Finding]
) -> int:
    """The fewest super-spines per plane (a divisor of a spine's uplinks) whose ports take ``planned`` pods."""
    ss = fabric.super_spine
    assert ss is not None
    fitting = [k for k in range(1, spine_up + 1) if spine_up % k == 0 and planned * (spine_up // k) <= ss_radix]
    forced = ss.super_spines_per_plane
    if forced is not None:
        if spine_up % forced or forced not in fitting:
            findings.append(
                Finding(
                    (*SS_PATH, "super_spines_per_plane"),
                    f"{forced} super-spines per plane must divide a spine's {spine_up} uplinks and take {planned} pods "
                    f"({ss_radix} ports each); use one of {fitting or 'none'}",
                )
            )
        return forced
    if fitting:
        return fitting[0]
    hosts = ss_radix * leaves_per_pod * sizing.host_ports_per_leaf
    findings.append(
        Finding(
            (*SS_PATH, "model"),
            f"three tiers of these switches take at most {ss_radix} pods ({ss.model}: {ss_radix} ports at "
            f"{ss.uplink_speed_gbps or sizing.up_speed} Gb/s, one link from each pod spine of its plane) x {leaves_per_pod} leaves x "
            f"{sizing.host_ports_per_leaf} host ports = {hosts:,} host ports, but the super-spines must take {planned} pods "
            f"({sizing.leaves} leaves today). Use a higher-radix super-spine or spine, more oversubscription "
            f"(fabric.oversubscription {fabric.oversubscription}, super_spine.oversubscription {ss.oversubscription}), or split the cluster",
        )
    )
    return 1


def check_pods(spec: ClusterSpec, fabric: FabricPlan) -> Iterator[Finding]:
    """Pod ASNs stay private and clear of the leaves and super-spines; offsets do not run into each other; redundancy."""
    ss, pods = spec.fabric.super_spine if spec.fabric else None, fabric.pods
    if ss is None or pods is None:
        return
    if fabric.link_layer == "ethernet":
        underlay = fabric.underlay
        first, last = ss.pod_asn_base, ss.pod_asn_base + pods.pods_planned - 1
        if not any(lo <= first and last <= hi for lo, hi in (PRIVATE_ASN_2B, PRIVATE_ASN_4B)):
            yield Finding((*SS_PATH, "pod_asn_base"), f"pod ASNs {first}..{last} leave the private ranges; start lower or use a 4-byte base")
        leaf_first, leaf_last = underlay.leaf_asn_base, underlay.leaf_asn_base + len(fabric.leaves) - 1
        if first <= leaf_last and leaf_first <= last:
            yield Finding(
                (*SS_PATH, "pod_asn_base"),
                f"pod ASNs {first}..{last} (for {pods.pods_planned} pods) overlap the leaf ASNs {leaf_first}..{leaf_last}; move pod_asn_base",
            )
        if first <= ss.asn <= last or leaf_first <= ss.asn <= leaf_last:
            yield Finding((*SS_PATH, "asn"), f"super-spine ASN {ss.asn} falls inside the pod or leaf ASNs; move it")
        spines_planned = pods.pods_planned * pods.spines_per_pod
        if spines_planned >= underlay.leaf_loopback_offset:
            yield Finding(
                ("fabric", "underlay", "leaf_loopback_offset"),
                f"pod spines take loopback_pool[1..{spines_planned}] for {pods.pods_planned} pods, reaching the leaves at "
                f"leaf_loopback_offset {underlay.leaf_loopback_offset}; set leaf_loopback_offset to {_room(spines_planned)} or more",
            )
    spines_planned = pods.pods_planned * pods.spines_per_pod
    if spines_planned + 1 >= fabric.management.mgmt_leaf_offset:
        yield Finding(
            ("fabric", "management", "mgmt_leaf_offset"),
            f"pod spines take mgmt_pool[2..{spines_planned + 1}] for {pods.pods_planned} pods, reaching the leaves at mgmt_leaf_offset "
            f"{fabric.management.mgmt_leaf_offset}; set mgmt_leaf_offset to {_room(spines_planned + 1)} or more (and a mgmt_pool that holds it)",
        )
    if len(pods.super_spines) == 1:
        yield Finding(
            (*SS_PATH, "super_spines_per_plane"),
            f"a single super-spine ({pods.super_spines[0].name}) carries all traffic between the {pods.pods} pods: losing it cuts "
            "every pod off from every other; use two or more spines per pod or super-spines per plane",
            "warning",
        )
    if pods.spines_per_pod == 1 and pods.pods > 1:
        yield Finding(
            ("fabric", "spines"),
            "each pod has a single spine: losing it cuts its leaves off from each other and from every other pod; "
            "set spines: 2 or more (with uplinks_per_leaf a multiple of it)",
            "warning",
        )


def _room(count: int) -> int:
    """The next power of two above ``count`` (room to grow)."""
    return 1 << count.bit_length()
