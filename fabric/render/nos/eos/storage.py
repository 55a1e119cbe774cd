"""Storage / in-band switches on Arista EOS: full CLI text, one template per section (``templates/eos/storage-*``).

The text is what AVD's eos_cli_config_gen renders from ``fabric.render.avd.storage``'s structured config (the reference test compares
the two command sets); the MLAG, VARP and switchport design is described there.
"""

from __future__ import annotations

from fabric.plan.storage.facts import StorageSwitchFacts
from fabric.render.avd.storage import PEER_VLAN, VARP_MAC, peer_addresses
from fabric.render.breakout import eos_l2_mtu, eos_speed, lane_one_ports, rs_fec_ports
from fabric.render.sections import Section, render_sections

SECTIONS: tuple[Section, ...] = (
    Section("eos/storage-header.j2"),  # VLANs and VRFs exist before the interfaces that join them
    Section("eos/storage-interfaces.j2"),  # port-channels before their members' channel-group lines (as AVD orders them)
    Section("eos/storage-mlag.j2"),  # the peer SVI and the peerlink exist before `mlag configuration` names them
)


def render_storage_eos(facts: StorageSwitchFacts) -> dict[str, str]:
    """``startup-config`` of one storage / in-band switch."""
    own, peer = peer_addresses(facts)
    text = render_sections(
        SECTIONS,
        facts.nos_version,
        facts=facts,
        peer_vlan=PEER_VLAN,
        varp_mac=VARP_MAC,
        own=own,
        peer=peer,
        peerlink=next(b.name for b in facts.bonds if b.kind == "peerlink"),
        vrfs=sorted({vrf for _, _, vrf, _, _ in facts.switch.gateways if vrf}),
        l2_mtu=eos_l2_mtu(facts.switch.model),
        lane_one=lane_one_ports(facts),
        speed={p.name: eos_speed(facts.switch.model, p.speed_gbps, p.mode_gbps) for p in facts.ports},
        rs_fec=rs_fec_ports(facts.switch.model, [(p.name, p.speed_gbps, p.mode_gbps) for p in facts.ports]),
    )
    return {"startup-config": text}
