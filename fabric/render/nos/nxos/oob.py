"""An OOB management switch on Cisco NX-OS: running-config text (design in ``fabric.render.oob``).

Access ports untagged on the OOB VLAN as STP edge ports with BPDU guard, the uplinks in ``port-channel1`` (LACP)
trunking the VLAN, the switch's address on the VLAN's SVI with a default route to the plane's gateway, and SSH (the
vty lines) limited to the OOB plane by ``MGMT-SSH`` (the compute switches' ACL form). No DHCP relay: NX-OS's relay
encodes option 82 in a binary ifindex format by default, which the Kea classes cannot key a port by, so the plan
refuses ``dhcp_servers`` on NX-OS (``fabric.plan.oob.build``). Every line matches a cited form in ``fabric/lint/forms/nxos.yaml``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabric.render.sections import Section, render_sections

if TYPE_CHECKING:
    from fabric.plan.oob.facts import OobSwitchFacts

SECTIONS = (Section("nxos/oob.j2"),)
PORT_CHANNEL = "port-channel1"


def render_oob_nxos(facts: OobSwitchFacts) -> dict[str, str]:
    """``running-config`` of one management switch on NX-OS."""
    text = render_sections(SECTIONS, facts.switch.nos_version, facts=facts, switch=facts.switch, port_channel=PORT_CHANNEL)
    return {"running-config": text}
