"""An OOB management switch on Arista EOS: AVD structured config and the CLI text it renders to (design in ``fabric.render.oob``).

The structured config follows pyavd 6.4's ``eos_cli_config_gen`` schema, and the reference test requires pyavd's
``get_device_config`` to give exactly the command set of ``templates/eos/oob.j2``, so the text follows Arista's own
generator. Per EOS:

- access ports: ``switchport access vlan``, ``spanning-tree portfast`` (edge) and ``spanning-tree bpduguard enable``;
- the uplinks: members of ``Port-Channel1`` (LACP, ``channel-group 1 mode active``), a trunk of the OOB VLAN;
- the DHCP relay: ``ip helper-address`` on the VLAN's SVI and ``ip dhcp relay information option`` (option 82);
  the circuit-id comes from ``ip dhcp snooping information option circuit-id type 0 format %h:%p``, which AVD's schema
  documents as "Hostname and interface name" (``ip_dhcp_snooping.information_option.circuit_id_format``), so Kea's
  class for an EOS port tests ``relay4[1].hex == '<hostname>:<interface>'`` (``fabric.render.kea``);
- SSH only from the plane: a standard ACL applied with ``management ssh`` / ``ip access-group <acl> in``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fabric.render.sections import Section, render_sections

if TYPE_CHECKING:
    from fabric.plan.oob.facts import OobSwitchFacts

Structured = dict[str, Any]
PORT_CHANNEL = "Port-Channel1"
ACL = "MGMT-SSH"
CIRCUIT_ID_FORMAT = "%h:%p"
SECTIONS = (Section("eos/oob.j2"),)


def build_oob_structured_config(facts: OobSwitchFacts) -> Structured:
    """The eos_cli_config_gen structured config of one management switch."""
    vlan = facts.vlan
    access = [
        {
            "name": p.name,
            "description": p.description,
            "switchport": {"enabled": True, "mode": "access", "access_vlan": vlan},
            "spanning_tree_portfast": "edge",
            "spanning_tree_bpduguard": "enabled",
        }
        for p in facts.access
    ]
    uplinks = [{"name": u, "description": f"uplink to {facts.core}", "channel_group": {"id": 1, "mode": "active"}} for u in facts.uplinks]
    svi: Structured = {"name": f"Vlan{vlan}", "description": "oob plane", "ip_address": facts.switch.mgmt_address}
    if facts.servers:
        svi["ip_helpers"] = [{"ip_helper": s} for s in facts.servers]
    config: Structured = {
        "hostname": facts.switch.name,
        "spanning_tree": {"mode": "mstp"},
        "vlans": [{"id": vlan, "name": "oob"}],
        "ethernet_interfaces": access + uplinks,
        "port_channel_interfaces": [
            {
                "name": PORT_CHANNEL,
                "description": f"uplinks to {facts.core}",
                "switchport": {"enabled": True, "mode": "trunk", "trunk": {"allowed_vlan": str(vlan)}},
            }
        ]
        if facts.uplinks
        else [],
        "vlan_interfaces": [svi],
        "ip_routing": True,
        "static_routes": [{"prefix": "0.0.0.0/0", "next_hop": facts.gateway}] if facts.gateway else [],
        "standard_access_lists": [{"name": ACL, "sequence_numbers": [{"sequence": 10, "action": f"permit {facts.allowed_prefix}"}]}],
        "management_ssh": {"ip_access_group_in": ACL},
    }
    if facts.servers:
        config["ip_dhcp_relay"] = {"information_option": True}
        config["ip_dhcp_snooping"] = {
            "enabled": True,
            "information_option": {"enabled": True, "circuit_id_type": "0", "circuit_id_format": CIRCUIT_ID_FORMAT},
            "vlan": str(vlan),
        }
    return {k: v for k, v in config.items() if v not in ({}, [], None)}


def render_oob_eos(facts: OobSwitchFacts) -> dict[str, str]:
    """``startup-config`` of one management switch on EOS."""
    text = render_sections(
        SECTIONS,
        facts.switch.nos_version,
        facts=facts,
        switch=facts.switch,
        port_channel=PORT_CHANNEL,
        acl=ACL,
    )
    return {"startup-config": text}
