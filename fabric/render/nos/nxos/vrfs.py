"""A shared spine on NX-OS (fabric.plan.compute.shared_spines): the sections of its VRF per plane.

``nxos/vrfs.j2`` (``vrf context`` per plane) follows the management section; the default VRF's policy and BGP give way
to ``nxos/vrf-policy.j2`` and ``nxos/vrf-bgp.j2``; ``nxos/interfaces.j2`` puts each port and loopback in its VRF with
``vrf member`` (``port_vrf``, ``vrfs``). Numbered (/31) fabric links only (refused otherwise in the plan).
"""

from __future__ import annotations

from fabric.plan.compute.facts import SwitchFacts
from fabric.plan.compute.spine_vrfs import spine_vrfs
from fabric.render.sections import Section

SWAPPED = {"nxos/policy.j2": "nxos/vrf-policy.j2", "nxos/bgp.j2": "nxos/vrf-bgp.j2"}


def shared_sections(sections: tuple[Section, ...], facts: SwitchFacts) -> tuple[tuple[Section, ...], dict[str, object]]:
    """The sections and the VRF context of ``facts``' switch: unchanged, with no VRF, unless it is a shared spine."""
    vrfs = spine_vrfs(facts)
    if not vrfs:
        return sections, {"vrfs": (), "port_vrf": {}}
    out: list[Section] = []
    for s in sections:
        out.append(Section(SWAPPED[s.template]) if s.template in SWAPPED else s)
        if s.template == "nxos/management.j2":
            out.append(Section("nxos/vrfs.j2"))
    return tuple(out), {"vrfs": vrfs, "port_vrf": {p.name: v.name for v in vrfs for p in v.ports}}
