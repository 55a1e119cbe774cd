"""Storage / in-band switches on Cumulus Linux: NVUE ``nv set`` lines, one template per section (``templates/cumulus/storage-*``)."""

from __future__ import annotations

from fabric.plan.storage.facts import StorageSwitchFacts
from fabric.render.breakout import rs_fec_ports
from fabric.render.nos.cumulus.compute import cable_length
from fabric.render.nos.cumulus.syntax import nvue_words
from fabric.render.sections import Section, render_sections

VRR_MAC = "44:38:39:ff:ff:ff"
"""The VRR MAC of the DGX BasePOD switch configurations (`nv set interface vlan121 ip vrr mac-address 44:38:39:ff:ff:ff`)."""

SECTIONS: tuple[Section, ...] = (
    Section("cumulus/storage-header.j2"),  # hostname and the management VRF first: the MLAG backup link runs in it
    Section("cumulus/storage-interfaces.j2"),  # cages broken out before their split ports take speed, MTU and members
    Section("cumulus/storage-bridge.j2"),  # the plane VLANs exist before a bond joins them
    Section("cumulus/storage-mlag.j2"),  # after the peerlink bond it runs over
    Section("cumulus/storage-svi.j2"),  # the VLANs exist before their SVIs
    Section("cumulus/qos.j2"),  # the storage RoCE contract: the compute switches' own section, empty unless storage is RoCE
)


def render_storage_cumulus(facts: StorageSwitchFacts) -> dict[str, str]:
    """``nvue.sh`` of one storage / in-band switch.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> from fabric.plan.storage.facts import build_storage_facts
        >>> facts = build_storage_facts(plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml")))
        >>> render_storage_cumulus(facts[0])["nvue.sh"].splitlines()[1]
        'nv set system hostname stor-spine-a'
    """
    length = cable_length(facts.switch.name, [p.cable_m for p in facts.ports] if facts.roce else None)
    context: dict[str, object] = {"facts": facts, "roce": facts.roce, "vrr_mac": VRR_MAC, "cable_length": length}
    context["rs_fec"] = rs_fec_ports(facts.switch.model, [(p.name, p.speed_gbps, p.mode_gbps) for p in facts.ports])
    return {"nvue.sh": render_sections(SECTIONS, facts.nos_version, nv=nvue_words(facts.nos_version), **context)}
