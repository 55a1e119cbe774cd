"""Storage / in-band switches on SONiC with docker-iccpd: ``config_db.json`` with PortChannels, VLANs, MCLAG and gateways.

Tables and fields as the YANG models of the release branch define them (sonic-buildimage ``src/sonic-yang-models`` on
202405 / 202411: sonic-portchannel, sonic-vlan, sonic-mclag, sonic-vrf; checked by ``tests/render/sonic_yang.py``).
The model refuses a SONiC storage tier without ``sonic_iccpd: true`` (community images have no iccpd).

- host bonds, the peerlink and the bonds between tiers are ``PORTCHANNEL`` + ``PORTCHANNEL_MEMBER``; a host bond is an
  untagged ``VLAN_MEMBER`` of its plane's VLAN, a bond to the other tier a tagged member of every plane VLAN;
- the pair is one ``MCLAG_DOMAIN`` whose ``peer_link`` is the peerlink PortChannel and whose session runs over VLAN 4094
  on it (a /31 from 169.254.0.0/16 per pair, ``MCLAG_UNIQUE_IP`` so the peers keep their own addresses there), every
  dual-homed PortChannel an ``MCLAG_INTERFACE`` (the SONiC MCLAG HLD: ``config mclag add <domain> <src> <peer> <peer-link>``);
- a plane gateway is MCLAG's same-IP gateway: the plane's gateway address on ``VLAN_INTERFACE`` of both switches (not
  in ``MCLAG_UNIQUE_IP``), in the plane's VRF (SONiC VRFs are named ``Vrf...``). SONiC MCLAG Enhancements HLD
  (sonic-net/SONiC doc/mclag/MCLAG_Enhancements_HLD.md §2.1.9): "Current design mandates configuring same IP address on
  the VLAN interface for each VLAN of which an MCLAG is a member"; iccpd makes the standby answer with the active's MAC.

No static anycast gateway (``SAG``): neither 202405 nor 202411 has sonic-static-anycast-gateway.yang (master got it
2026-06-22, buildimage#27543) and community sonic-swss does not act on it (sonic-swss PRs #1974 and #3167, open).
No VRRP either: neither branch has a VRRP model. docs/switch-references.md, "SONiC features per release".
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

from fabric.catalog.switches import SWITCH_MODELS
from fabric.errors import RenderError
from fabric.plan.compute.facts import SwitchFacts
from fabric.plan.storage.facts import StorageSwitchFacts
from fabric.render._json import dumps_sorted
from fabric.render.nos.sonic.compute import _sku, set_rs_fec, sku_ports  # pyright: ignore[reportPrivateUsage] - the SKU port layout, shared with the compute render
from fabric.render.nos.sonic.guard import guard_config_db

PEER_VLAN = 4094


def sonic_vrf(vrf: str) -> str:
    """A plan VRF (``vrf-inband``) as SONiC must name it (``Vrf[a-zA-Z0-9_-]+``, sonic-vrf.yang): ``Vrf-inband``."""
    return "Vrf" + vrf.removeprefix("vrf")


def build_storage_config_db(facts: StorageSwitchFacts) -> dict[str, Any]:
    """The config_db tables of one storage / in-band switch.

    Raises:
        RenderError: a plane uses VLAN 4094 (the MCLAG session VLAN), or the model has no SKU for the network's speed.
    """
    s = facts.switch
    if PEER_VLAN in facts.vlans:
        msg = f"{s.name}: VLAN {PEER_VLAN} carries the MCLAG session on SONiC; give the plane another VLAN"
        raise RenderError(msg)
    model = SWITCH_MODELS[s.model]
    assert model.sonic is not None
    # The SKU helpers read switch.name/model and ports' name, speed, MTU, description only; they see each port at its
    # cage's breakout speed (which picks the SKU and lanes), then a port cabled to a slower NIC takes the cable's speed.
    by_mode = replace(facts, ports=tuple(replace(p, speed_gbps=p.mode_gbps or p.speed_gbps) for p in facts.ports))
    sku, speed = _sku(cast("SwitchFacts", by_mode))
    port, breakout = sku_ports(cast("SwitchFacts", by_mode), sku, speed)
    _cable_speeds(facts, port)
    set_rs_fec(port)  # after the cable speeds: a port run below its mode's speed may no longer need it (or now needs it)
    portchannel = {b.name: {"admin_status": "up", "mtu": str(b.mtu), "min_links": "1", "description": b.description} for b in facts.bonds}
    members: dict[str, Any] = {f"{b.name}|{m}": {} for b in facts.bonds for m in b.members}
    peerlink = next(b.name for b in facts.bonds if b.kind == "peerlink")
    vlan = {f"Vlan{v}": {"vlanid": str(v)} for v in (*facts.vlans, PEER_VLAN)}
    vlan_member: dict[str, Any] = {f"Vlan{PEER_VLAN}|{peerlink}": {"tagging_mode": "tagged"}}
    for b in facts.bonds:
        if b.vlan is not None:
            vlan_member[f"Vlan{b.vlan}|{b.name}"] = {"tagging_mode": "untagged"}
        vlan_member.update({f"Vlan{v}|{b.name}": {"tagging_mode": "tagged"} for v in b.trunk})
    vlan_member.update({f"Vlan{p.vlan}|{p.name}": {"tagging_mode": "untagged"} for p in facts.ports if p.bond is None and p.vlan})
    own, peer = _session_addresses(facts)
    db: dict[str, Any] = {
        "DEVICE_METADATA": {
            "localhost": {
                "hostname": s.name,
                "hwsku": sku.hwsku,
                "platform": model.sonic.platform,
                "type": "SpineRouter" if s.role == "spine" else "LeafRouter",
                "buffer_model": "dynamic",
            }
        },
        "PORT": port,
        "BREAKOUT_CFG": breakout,
        "PORTCHANNEL": portchannel,
        "PORTCHANNEL_MEMBER": members,
        "VLAN": vlan,
        "VLAN_MEMBER": vlan_member,
        "VLAN_INTERFACE": {f"Vlan{PEER_VLAN}": {}, f"Vlan{PEER_VLAN}|{own}/31": {}, **_gateways(facts)},
        "MCLAG_DOMAIN": {"1": {"source_ip": own, "peer_ip": peer, "peer_link": peerlink}},
        "MCLAG_INTERFACE": {f"1|{b.name}": {"if_type": "PortChannel"} for b in facts.bonds if b.mlag_id is not None},
        "MCLAG_UNIQUE_IP": {f"Vlan{PEER_VLAN}": {"unique_ip": "enable"}},
        # An image built with INCLUDE_ICCPD=y ships iccpd disabled: sonic-buildimage files/build_templates/init_cfg.json.j2
        # (202405 line 49, 202411 line 76) `features.append(("iccpd", "disabled", false, "enabled"))`.
        "FEATURE": {"iccpd": {"state": "enabled"}},
        "VRF": {sonic_vrf(vrf): {} for _, _, vrf, _, _ in s.gateways if vrf},
        "MGMT_VRF_CONFIG": {"vrf_global": {"mgmtVrfEnabled": "true"}},
        "MGMT_PORT": {s.mgmt_interface: {"admin_status": "up", "alias": s.mgmt_interface, "description": "oob management"}},
        "MGMT_INTERFACE": {f"{s.mgmt_interface}|{s.mgmt_address}": {"gwaddr": facts.mgmt_gateway} if facts.mgmt_gateway else {}},
    }
    return guard_config_db({k: v for k, v in db.items() if v})


def _cable_speeds(facts: StorageSwitchFacts, port: dict[str, Any]) -> None:
    """Set each cabled port's ``PORT`` speed to its cable's, where that is below the cage's breakout speed.

    The speed must be one the port's breakout mode lists in brackets (hwsku.json / platform.json breakout modes, e.g.
    ``2x200G[100G,50G,40G,25G,10G,1G]`` on the SN4700: 2 ports per cage at 200G, each also able to run the bracketed
    speeds; sonic-buildimage doc/dynamic-port-breakout "breakout_modes"). Such a port gets no SKU ``fec``; ``set_rs_fec``
    then sets RS where its own speed needs it.

    Raises:
        RenderError: the port's breakout mode does not list the cable's speed.
    """
    if not facts.ports:
        return
    modes = {p.name: p.breakout_mode for p in SWITCH_MODELS[facts.switch.model].sonic_ports(facts.ports[0].mode_gbps or facts.ports[0].speed_gbps)}
    for p in facts.ports:
        if not p.mode_gbps or p.speed_gbps == p.mode_gbps:
            continue
        mode = modes.get(p.name, "")
        allowed = mode.partition("[")[2].rstrip("]").split(",")
        if f"{p.speed_gbps}G" not in allowed:
            msg = (
                f"{facts.switch.name}: {p.name} is cabled at {p.speed_gbps} Gb/s but its breakout mode {mode} does not run that speed; "
                "pick a NIC or network speed the mode lists"
            )
            raise RenderError(msg)
        port[p.name]["speed"] = str(p.speed_gbps * 1000)
        port[p.name].pop("fec", None)


def _session_addresses(facts: StorageSwitchFacts) -> tuple[str, str]:
    """The pair's MCLAG session /31 on VLAN 4094: 169.254.<network>.<2 x pair> (a) and the next address (b)."""
    base = 2 * (facts.switch.switch_id // 2)
    network = int(facts.mlag_mac.split(":")[4], 16)
    a, b = f"169.254.{network}.{base}", f"169.254.{network}.{base + 1}"
    return (a, b) if facts.switch.side == "a" else (b, a)


def _gateways(facts: StorageSwitchFacts) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for _, vlan, vrf, own, virtual in facts.switch.gateways:
        out[f"Vlan{vlan}"] = {"vrf_name": sonic_vrf(vrf)} if vrf else {}
        out[f"Vlan{vlan}|{virtual}/{own.split('/')[1]}"] = {}
    return out


def render_storage_sonic(facts: StorageSwitchFacts) -> dict[str, str]:
    """``config_db.json`` of one storage / in-band switch."""
    return {"config_db.json": dumps_sorted(build_storage_config_db(facts))}
