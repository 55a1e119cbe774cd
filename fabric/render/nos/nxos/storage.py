"""Storage / in-band switches on Cisco NX-OS: running-config text, one template per section (``templates/nxos/storage-*``).

The pair runs vPC (Cisco's MLAG): ``vpc domain <id>`` with a peer keepalive over the management VRF, the peerlink
port-channel as ``vpc peer-link`` trunking the plane VLANs, and every dual-homed port-channel (host bonds, the bond to
the other tier) with ``vpc <id>`` = its port-channel number on both switches (developer.cisco.com NX-API REST 10.3x,
"Configuring Virtual Port Channels"; netascode NX-OS data model, vPC: ``domain_id`` 1-1000, keepalive destination,
source and VRF). A plane gateway is an SVI in the plane's VRF with its own address and an HSRP group holding the
plane's virtual address (Batfish CiscoNxos_interface.g4 ``i_hsrp`` / ``ihg4_ip``); ``peer-gateway`` lets either switch
route frames sent to its peer's MAC. Every line matches a cited form in ``fabric/lint/forms/nxos.yaml``.
"""

from __future__ import annotations

from fabric.catalog.switches import SWITCH_MODELS
from fabric.plan.storage.facts import StorageSwitchFacts
from fabric.render.breakout import rs_fec_ports
from fabric.render.sections import Section, render_sections

SECTIONS: tuple[Section, ...] = (
    Section("nxos/storage-header.j2"),  # features before their commands; VLANs and VRFs before the interfaces that join them
    Section("nxos/storage-vpc.j2"),  # the vPC domain exists before a port-channel names `vpc peer-link` or `vpc <id>`
    Section("nxos/storage-interfaces.j2"),  # cages broken out, then port-channels before their members' channel-group lines
)
HSRP_GROUP = 1
"""One HSRP group per SVI; groups are per interface, so every plane's SVI can use group 1."""


def vpc_domain(facts: StorageSwitchFacts) -> int:
    """The pair's vPC domain id (1-1000): the same on both switches, one per pair of the network.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> from fabric.plan.storage.facts import build_storage_facts
        >>> facts = build_storage_facts(plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml")))
        >>> [vpc_domain(f) for f in facts[:4]]
        [1, 1, 2, 2]
    """
    return facts.switch.switch_id // 2 + 1


def breakout_cages(facts: StorageSwitchFacts) -> tuple[tuple[int, int, int], ...]:
    """(cage number, speed in Gb/s, fanout) of every cage a cabled port splits, for ``interface breakout``."""
    model = SWITCH_MODELS[facts.switch.model]
    speeds = {p.name: p.mode_gbps for p in facts.ports}  # the cage's breakout speed, not a slower NIC's
    found: list[tuple[int, int, int]] = []
    for native, fanout in facts.breakouts:
        cage = int(native.rsplit("/", 1)[1])
        split = model.port_name("nxos", (cage - 1) * fanout, next(s for s in model.speeds() if model.fanout(s) == fanout))
        found.append((cage, speeds.get(split, model.speed_gbps // fanout), fanout))
    return tuple(found)


def render_storage_nxos(facts: StorageSwitchFacts) -> dict[str, str]:
    """``running-config`` of one storage / in-band switch."""
    own = facts.switch.mgmt_address.split("/")[0]
    peer = facts.peer_mgmt_address.split("/")[0]
    text = render_sections(
        SECTIONS,
        facts.nos_version,
        facts=facts,
        switch=facts.switch,
        domain=vpc_domain(facts),
        own=own,
        peer=peer,
        hsrp_group=HSRP_GROUP,
        vrfs=sorted({vrf for _, _, vrf, _, _ in facts.switch.gateways if vrf}),
        breakouts=breakout_cages(facts),
        rs_fec=rs_fec_ports(facts.switch.model, [(p.name, p.speed_gbps, p.mode_gbps) for p in facts.ports]),
    )
    return {"running-config": text}
