"""Per-switch facts of the OOB management network: the only code that looks across its devices (cables, plane).

The three switch families share one shape: compute facts (``fabric.plan.compute.facts``), storage / in-band facts
(``fabric.plan.storage.facts``) and these. Each NOS's OOB renderer (``fabric.render.nos.<nos>.oob``) reads one
``OobSwitchFacts`` and nothing else of the plan.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabric.plan.oob.types import OobLink, OobPlan, OobSwitchPlan
from fabric.plan.types import ClusterPlan


@dataclass(frozen=True, slots=True)
class AccessPort:
    """A cabled access port of a management switch and what it says about its far end."""

    name: str
    description: str


@dataclass(frozen=True, slots=True)
class OobSwitchFacts:
    """What one management switch's config needs: its plan, ports, VLAN, relay targets and the plane's gateway."""

    cluster: str
    switch: OobSwitchPlan
    access: tuple[AccessPort, ...]
    uplinks: tuple[str, ...]
    core: str
    vlan: int
    servers: tuple[str, ...]
    gateway: str | None
    allowed_prefix: str


def build_oob_facts(plan: ClusterPlan) -> tuple[OobSwitchFacts, ...]:
    """One facts object per management switch, in switch order; empty without an OOB network.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> facts = build_oob_facts(plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml")))
        >>> facts[1].switch.name, facts[1].access[0], facts[1].uplinks
        ('oob-su1', AccessPort(name='swp1', description='gpu001 bmc'), ('swp49', 'swp50'))
    """
    oob: OobPlan | None = plan.oob
    if oob is None:
        return ()
    plane = plan.plane("oob")
    links: dict[str, list[OobLink]] = {}
    for link in oob.links:
        links.setdefault(link.a_device, []).append(link)
    return tuple(
        OobSwitchFacts(
            cluster=plan.name,
            switch=switch,
            access=tuple(AccessPort(x.a_port, f"{x.b_device} {x.b_port}".strip()) for x in links.get(switch.name, []) if x.kind != "uplink"),
            uplinks=tuple(x.a_port for x in links.get(switch.name, []) if x.kind == "uplink"),
            core=oob.core,
            vlan=oob.vlan,
            servers=oob.dhcp_servers,
            gateway=plane.gateway,
            allowed_prefix=plane.cidr or switch.mgmt_address,
        )
        for switch in oob.switches
    )
