"""The OOB management switches' configs: one L2 segment per plane, DHCP relay with option 82, SSH only from the plane.

Every management switch (``fabric.plan.oob.build``) gets the same design, per NOS:

- every cabled access port (BMC, switch management port, PDU, console) untagged on the OOB VLAN (``planes.oob.vlan``,
  default 100), described with what it takes;
- its uplinks to the OOB core as one LACP bond (Cumulus ``core``, SONiC ``PortChannel1``), tagged on that VLAN;
- its own management address (``mgmt_pool[mgmt_offset + N]``) on the VLAN's SVI and a default route to the plane's gateway;
- a DHCP relay on that SVI to ``dhcp_servers`` that adds option 82 the way ``fabric.render.kea`` matches it: Cumulus
  remote-id = switch name, circuit-id = physical port (``use-pif-circuit-id``); SONiC's dhcrelay runs with
  ``-a %h:%p %P`` (circuit-id ``<hostname>:<port alias>``, sonic-net/SONiC
  ``doc/dhcp_server/port_based_dhcp_server_high_level_design.md``) and relays for the VLANs whose ``VLAN`` entry lists
  ``dhcp_servers`` (sonic-vlan.yang ``leaf-list dhcp_servers``);
- a control-plane ACL: SSH only from the OOB plane.

Every switch of the plane sees each BMC's broadcast (the VLAN spans the core), so every relay forwards it; only the
switch the BMC is cabled to names a port Kea has a class for, so Kea answers that relay only.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabric.errors import RenderError
from fabric.plan.oob.types import OobLink, OobPlan, OobSwitchPlan
from fabric.plan.types import ClusterPlan
from fabric.render.nos.eos.oob import render_oob_eos
from fabric.render.nos.nxos.oob import render_oob_nxos
from fabric.render.nos.sonic.oob import build_oob_config_db, config_db_text
from fabric.render.sections import Section, render_sections

CUMULUS_SECTIONS = (Section("cumulus/oob.j2"),)
CUMULUS_BOND = "core"


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


def render_oob_switch(facts: OobSwitchFacts) -> dict[str, str]:
    """The files of one management switch: Cumulus ``nvue.sh``, SONiC ``config_db.json``, EOS ``startup-config``, NX-OS ``running-config``.

    Raises:
        RenderError: the switch runs a NOS without an OOB renderer, or a value is not safe where it stands.
    """
    nos = facts.switch.nos
    if nos == "cumulus":
        text = render_sections(
            CUMULUS_SECTIONS,
            facts.switch.nos_version,
            s=facts.switch,
            cluster=facts.cluster,
            access=facts.access,
            uplinks=facts.uplinks,
            bond=CUMULUS_BOND,
            core=facts.core,
            vlan=facts.vlan,
            svi=f"vlan{facts.vlan}",
            gateway=facts.gateway,
            servers=facts.servers,
            allowed_prefix=facts.allowed_prefix,
        )
        return {"nvue.sh": text}
    if nos == "sonic":
        return {"config_db.json": config_db_text(build_oob_config_db(facts))}
    if nos == "eos":
        return render_oob_eos(facts)
    if nos == "nxos":
        return render_oob_nxos(facts)
    msg = f"{facts.switch.name}: no OOB switch renderer for {nos}; planes.oob.network.nos supports cumulus, sonic, eos and nxos"
    raise RenderError(msg)


def render_oob(plan: ClusterPlan) -> dict[str, str]:
    """``switches/<name>/<file>`` of every management switch; ``{}`` without an OOB network."""
    files: dict[str, str] = {}
    for facts in build_oob_facts(plan):
        for name, text in render_oob_switch(facts).items():
            files[f"switches/{facts.switch.name}/{name}"] = text
    return files
