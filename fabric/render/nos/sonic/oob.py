"""SONiC ``config_db.json`` of an OOB management switch (design in ``fabric.render.oob``).

Tables and fields as sonic-buildimage's YANG models define them (checked with libyang in ``tests/render``):
``VLAN`` with ``dhcp_servers`` (the dhcp_relay container relays for the VLANs that list servers), ``VLAN_MEMBER``
(``tagging_mode``), ``VLAN_INTERFACE``, ``PORTCHANNEL`` / ``PORTCHANNEL_MEMBER``, ``STATIC_ROUTE`` and a CTRLPLANE
``ACL_TABLE``; ``DEVICE_METADATA`` ``type`` ``BmcMgmtToRRouter`` (sonic-device_metadata.yang's name for a switch that
takes BMC ports).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from fabric.catalog.switches import SWITCH_MODELS
from fabric.errors import RenderError
from fabric.render.nos.sonic.compute import set_rs_fec
from fabric.render.nos.sonic.guard import guard_config_db

if TYPE_CHECKING:
    from fabric.plan.oob.facts import OobSwitchFacts

PORTCHANNEL = "PortChannel1"


def sonic_aliases(model: str) -> dict[str, str]:
    """SONiC port name → alias (``Ethernet0`` → ``etp1``) of ``model``'s SKU at its port speed: what ``%p`` puts in circuit-id.

    Example:
        >>> sonic_aliases("sn2201")["Ethernet48"]
        'etp49'
    """
    switch = SWITCH_MODELS[model]
    return {p.name: p.alias for p in switch.sonic_ports(switch.speed_gbps)}


def build_oob_config_db(facts: OobSwitchFacts) -> dict[str, Any]:
    """The config_db tables of one management switch.

    Raises:
        RenderError: the model has no SONiC SKU, or a planned port is not in it.
    """
    s = facts.switch
    model = SWITCH_MODELS[s.model]
    sku = model.sonic.sku(model.speed_gbps) if model.sonic else None
    if model.sonic is None or sku is None:
        msg = f"{s.name}: {s.model} has no SONiC SKU at {model.speed_gbps} Gb/s; run cumulus on it or pick another model"
        raise RenderError(msg)
    ports = model.sonic_ports(model.speed_gbps)
    described = {p.name: p.description for p in facts.access} | dict.fromkeys(facts.uplinks, f"uplink to {facts.core}")
    unknown = sorted(set(described) - {p.name for p in ports})
    if unknown:
        msg = f"{s.name}: ports {unknown} are not in SONiC SKU {sku.hwsku}"
        raise RenderError(msg)
    port: dict[str, Any] = {}
    for p in ports:
        entry = {"alias": p.alias, "index": str(p.index), "lanes": p.lanes, "speed": str(p.speed_gbps * 1000), "mtu": str(model.sonic.default_mtu)}
        entry |= {"admin_status": "up", "description": described[p.name]} if p.name in described else {"admin_status": "down"}
        port[p.name] = entry
    set_rs_fec(port)  # the 100G uplinks (4 x 25G lanes, IEEE 802.3bj clause 91)
    vlan = f"Vlan{facts.vlan}"
    members = {f"{vlan}|{p.name}": {"tagging_mode": "untagged"} for p in facts.access}
    if facts.uplinks:
        members[f"{vlan}|{PORTCHANNEL}"] = {"tagging_mode": "tagged"}
    vlan_entry: dict[str, Any] = {"vlanid": str(facts.vlan), "description": "oob plane"}
    if facts.servers:
        vlan_entry["dhcp_servers"] = list(facts.servers)
    db: dict[str, Any] = {
        "DEVICE_METADATA": {"localhost": {"hostname": s.name, "hwsku": sku.hwsku, "platform": model.sonic.platform, "type": "BmcMgmtToRRouter"}},
        "PORT": port,
        "PORTCHANNEL": {PORTCHANNEL: {"admin_status": "up", "min_links": "1", "mtu": str(model.sonic.default_mtu), "lacp_key": "auto"}}
        if facts.uplinks
        else {},
        "PORTCHANNEL_MEMBER": {f"{PORTCHANNEL}|{u}": {} for u in facts.uplinks},
        "VLAN": {vlan: vlan_entry},
        "VLAN_MEMBER": members,
        "VLAN_INTERFACE": {vlan: {}, f"{vlan}|{s.mgmt_address}": {}},
        "STATIC_ROUTE": {"0.0.0.0/0": {"nexthop": facts.gateway}} if facts.gateway else {},
        "ACL_TABLE": {"SSH_ONLY": {"type": "CTRLPLANE", "services": ["SSH"], "stage": "ingress", "policy_desc": "SSH only from the oob plane"}},
        "ACL_RULE": {
            "SSH_ONLY|RULE_10": {"PRIORITY": "9999", "SRC_IP": facts.allowed_prefix, "PACKET_ACTION": "ACCEPT"},
            "SSH_ONLY|DEFAULT_RULE": {"PRIORITY": "1", "ETHER_TYPE": "0x0800", "PACKET_ACTION": "DROP"},
        },
    }
    return guard_config_db({k: v for k, v in db.items() if v})


def config_db_text(db: dict[str, Any]) -> str:
    """config_db as SONiC's ``config load`` reads it: indented, keys sorted."""
    return json.dumps(db, indent=2, sort_keys=True) + "\n"
