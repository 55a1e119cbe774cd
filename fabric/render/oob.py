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

from fabric.errors import RenderError
from fabric.plan.oob.facts import OobSwitchFacts, build_oob_facts
from fabric.plan.types import ClusterPlan
from fabric.render.nos.cumulus.syntax import nvue_words
from fabric.render.nos.eos.oob import render_oob_eos
from fabric.render.nos.nxos.oob import render_oob_nxos
from fabric.render.nos.sonic.oob import build_oob_config_db, config_db_text
from fabric.render.sections import Section, render_sections

CUMULUS_SECTIONS = (
    Section("cumulus/oob.j2"),
    # CL 5.14 replaced the relay's `interface` / `server` with server groups (NVUE reference, DHCP-Relay)
    Section("cumulus/oob-relay.j2", {"5.14": "cumulus/oob-relay-groups.j2"}),
    Section("cumulus/oob-acl.j2"),
)
CUMULUS_BOND = "core"


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
            switch=facts.switch,
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
            nv=nvue_words(facts.switch.nos_version),
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
