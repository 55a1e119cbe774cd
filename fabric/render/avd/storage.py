"""Arista AVD structured config of one storage / in-band EOS switch (pyavd 6.4 ``eos_cli_config_gen`` schema).

The same intent as ``fabric.render.nos.eos.storage``'s text: the reference test renders this with pyavd's ``get_device_config`` and
compares the command sets, so the EOS text follows Arista's own generator line for line. The MLAG pair follows AVD's
``eos_designs`` MLAG layout: VLAN 4094 in trunk group ``MLAG`` without spanning tree, an SVI on it for the peer session,
``mlag configuration`` with that SVI as local interface and the peerlink port-channel; a host or tier bond is a
port-channel with ``mlag <id>``; a plane gateway is a VARP address (``ip virtual-router address``) on the plane's SVI
in its VRF, with one ``ip virtual-router mac-address``. Switchports carry their plane's MTU as ``l2_mtu`` (``l2 mtu``),
the frame size a switched port takes; ``mtu`` would only apply to routed traffic.
"""

from __future__ import annotations

from typing import Any

from fabric.catalog.fec import needs_rs_fec
from fabric.plan.storage.facts import StorageBond, StoragePort, StorageSwitchFacts
from fabric.render.breakout import eos_l2_mtu, eos_speed, lane_one_ports
from fabric.render.vlan_list import vlan_ranges

Structured = dict[str, Any]
PEER_VLAN = 4094
MLAG_TRUNK_GROUP = "MLAG"
VARP_MAC = "00:1c:73:00:00:99"
"""The virtual-router MAC AVD's l3ls designs use (eos_designs default ``virtual_router_mac_address``)."""


def peer_addresses(facts: StorageSwitchFacts) -> tuple[str, str]:
    """(own, peer) address of the pair's MLAG session on VLAN 4094: a /31 in 169.254.<network>.0/24 per pair."""
    base = 2 * (facts.switch.switch_id // 2)
    network = int(facts.mlag_mac.split(":")[4], 16)
    a, b = f"169.254.{network}.{base}", f"169.254.{network}.{base + 1}"
    return (a, b) if facts.switch.side == "a" else (b, a)


def build_storage_structured_config(facts: StorageSwitchFacts) -> Structured:
    """The eos_cli_config_gen structured config of one storage / in-band EOS switch."""
    s = facts.switch
    own, peer = peer_addresses(facts)
    peerlink = next(b.name for b in facts.bonds if b.kind == "peerlink")
    vrfs = sorted({vrf for _, _, vrf, _, _ in s.gateways if vrf})
    names = {seg.vlan: seg.plane for seg in facts.segments}
    config: Structured = {
        "hostname": s.name,
        "spanning_tree": {"mode": "mstp", "no_spanning_tree_vlan": str(PEER_VLAN)},
        "vlans": [{"id": v, "name": names[v]} for v in facts.vlans] + [{"id": PEER_VLAN, "name": "MLAG_PEER", "trunk_groups": [MLAG_TRUNK_GROUP]}],
        "vrfs": [{"name": "mgmt", "ip_routing": False}] + [{"name": v, "ip_routing": True} for v in vrfs],
        "management_interfaces": [{"name": s.mgmt_interface, "description": "oob management", "vrf": "mgmt", "ip_address": s.mgmt_address}],
        "ethernet_interfaces": [_ethernet(facts, p) for p in facts.ports]
        + [{"name": n, "description": "breakout lane 1", "shutdown": True, "speed": v} for n, v in lane_one_ports(facts)],
        "port_channel_interfaces": [_port_channel(b, s.model) for b in facts.bonds],
        "vlan_interfaces": [
            {"name": f"Vlan{PEER_VLAN}", "description": "MLAG peer", "no_autostate": True, "ip_address": f"{own}/31"},
            *(_gateway(plane, vlan, vrf, address, virtual) for plane, vlan, vrf, address, virtual in s.gateways),
        ],
        "mlag_configuration": {
            "domain_id": s.location,
            "local_interface": f"Vlan{PEER_VLAN}",
            "peer_address": peer,
            "peer_link": peerlink,
        },
        "ip_routing": bool(s.gateways),
        "static_routes": [{"vrf": "mgmt", "prefix": "0.0.0.0/0", "next_hop": facts.mgmt_gateway}] if facts.mgmt_gateway else [],
    }
    if s.gateways:
        config["ip_virtual_router_mac_address"] = VARP_MAC
    return {k: v for k, v in config.items() if v not in ({}, [], None)}


def _gateway(plane: str, vlan: int, vrf: str | None, address: str, virtual: str) -> Structured:
    entry: Structured = {"name": f"Vlan{vlan}", "description": f"{plane} gateway", "ip_address": address, "ip_virtual_router_addresses": [virtual]}
    return entry | ({"vrf": vrf} if vrf else {})


def _ethernet(facts: StorageSwitchFacts, port: StoragePort) -> Structured:
    entry: Structured = {
        "name": port.name,
        "description": port.description,
        "speed": eos_speed(facts.switch.model, port.speed_gbps, port.mode_gbps),
    } | ({"l2_mtu": port.mtu} if eos_l2_mtu(facts.switch.model) else {})
    if needs_rs_fec(facts.switch.model, port.speed_gbps, port.mode_gbps or None):  # AVD 6.4 error_correction_encoding
        entry["error_correction_encoding"] = {"enabled": True, "reed_solomon": True}
    if port.bond is not None:
        entry["channel_group"] = {"id": int(port.bond.removeprefix("Port-Channel")), "mode": "active"}
    else:
        entry["switchport"] = {"enabled": True, "mode": "access", "access_vlan": port.vlan}
    return entry


def _port_channel(bond: StorageBond, model: str) -> Structured:
    entry: Structured = {"name": bond.name, "description": bond.description} | ({"l2_mtu": bond.mtu} if eos_l2_mtu(model) else {})
    if bond.kind == "peerlink":
        entry["switchport"] = {"enabled": True, "mode": "trunk", "trunk": {"groups": [MLAG_TRUNK_GROUP]}}
    elif bond.vlan is not None:
        entry["switchport"] = {"enabled": True, "mode": "access", "access_vlan": bond.vlan}
    else:
        entry["switchport"] = {"enabled": True, "mode": "trunk", "trunk": {"allowed_vlan": vlan_ranges(bond.trunk)}}
    if bond.mlag_id is not None:
        entry["mlag"] = bond.mlag_id
    return entry
