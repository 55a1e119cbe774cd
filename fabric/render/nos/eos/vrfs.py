"""A shared spine on EOS (fabric.plan.compute.shared_spines): the sections of its VRF per plane.

``eos/vrfs.j2`` (``vrf instance`` per plane) follows the management section; the default VRF's policy and BGP give way
to ``eos/vrf-policy.j2`` and ``eos/vrf-bgp.j2``; ``eos/interfaces.j2`` and ``eos/routing.j2`` put each port, loopback
and ``ip routing vrf`` in its VRF (``port_vrf``, ``vrfs``). Numbered (/31) fabric links only: an unnumbered shared
spine is refused in the plan (fabric.plan.compute.shared_spines), its VRF form not checked against pyavd.
"""

from __future__ import annotations

from fabric.plan.compute.facts import SwitchFacts
from fabric.plan.compute.spine_vrfs import spine_vrfs
from fabric.render.sections import Section

SWAPPED = {"eos/policy.j2": "eos/vrf-policy.j2", "eos/bgp.j2": "eos/vrf-bgp.j2"}


def shared_sections(sections: tuple[Section, ...], facts: SwitchFacts) -> tuple[tuple[Section, ...], dict[str, object]]:
    """The sections and the VRF context of ``facts``' switch: unchanged, with no VRF, unless it is a shared spine."""
    vrfs = spine_vrfs(facts)
    if not vrfs:
        return sections, {"vrfs": (), "port_vrf": {}}
    out: list[Section] = []
    for s in sections:
        out.append(Section(SWAPPED[s.template]) if s.template in SWAPPED else s)
        if s.template == "eos/management.j2":
            out.append(Section("eos/vrfs.j2"))
    return tuple(out), {"vrfs": vrfs, "port_vrf": {p.name: v.name for v in vrfs for p in v.ports}}
