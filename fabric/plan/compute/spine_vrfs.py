"""The VRFs of a shared spine (fabric.plan.compute.shared_spines), from its facts: one per plane, each with the ports
cabled to that plane's leaves, the BGP sessions over them, its own loopback (router id) and its plane's prefixes.

A port's plane is its peer's (``p<k>-leaf...``); a port whose peer has no plane would be in no VRF, and is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Network

from fabric.plan import addressing
from fabric.plan.compute.facts import NeighborFacts, PortFacts, SwitchFacts
from fabric.plan.compute.planes import block, plane_of
from fabric.plan.compute.shared_spines import VRF_TABLE_BASE, vrf_name


@dataclass(frozen=True, slots=True)
class VrfFacts:
    """One plane's VRF on a shared spine.

    Attributes:
        table: the Linux VRF device's routing table (FRR on Linux: a VRF is a kernel VRF device bound to a table).
        loopback: the VRF's /32, the address plane k's spine of this number has on separate spines.
        fabric_prefixes: what the VRF may advertise, its plane's blocks only (as ``SwitchFacts.fabric_prefixes``).
    """

    name: str
    plane: int
    table: int
    loopback: str
    ports: tuple[PortFacts, ...]
    neighbors: tuple[NeighborFacts, ...]
    fabric_prefixes: tuple[tuple[str, int], ...]

    @property
    def router_id(self) -> str:
        """The VRF's loopback address without its length."""
        return self.loopback.split("/")[0]


def spine_vrfs(facts: SwitchFacts) -> tuple[VrfFacts, ...]:
    """The VRFs of a shared spine, plane by plane; none on any other switch.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> from fabric.plan.compute.facts import build_switch_facts
        >>> plan = plan_cluster(load_cluster("tests/data/render/frr-shared/cluster.yaml"))
        >>> [(v.name, v.loopback, [p.name for p in v.ports]) for v in spine_vrfs(build_switch_facts(plan, ["spine01"])[0])]
        [('Vrf-plane1', '10.255.0.1/32', ['swp1', 'swp2']), ('Vrf-plane2', '10.255.128.1/32', ['swp3', 'swp4'])]
    """
    planes = len(facts.plane_prefixes)
    if not planes:
        return ()
    for p in facts.ports:
        if plane_of(p.peer) is None:
            msg = f"shared spine {facts.switch.name} port {p.name} is cabled to {p.peer}, which is in no plane: it would be in no VRF"
            raise ValueError(msg)
    pool, name = IPv4Network(facts.underlay.loopback_pool), facts.switch.name
    return tuple(
        VrfFacts(
            name=vrf_name(k),
            plane=k,
            table=VRF_TABLE_BASE + k,
            loopback=addressing.allocate_loopback(block(pool, k, planes), facts.switch.switch_id, f"{vrf_name(k)} of {name}"),
            ports=tuple(p for p in facts.ports if plane_of(p.peer) == k),
            neighbors=tuple(n for n in facts.neighbors if plane_of(n.peer) == k),
            fabric_prefixes=facts.plane_prefixes[k - 1],
        )
        for k in range(1, planes + 1)
    )


def vrf_of_ports(facts: SwitchFacts) -> dict[str, str]:
    """Each port of a shared spine and the VRF it belongs to (what lint checks a config against)."""
    return {p.name: v.name for v in spine_vrfs(facts) for p in v.ports}
