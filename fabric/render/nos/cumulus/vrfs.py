"""A shared spine on Cumulus Linux (fabric.plan.compute.shared_spines): the NVUE sections of its VRF per plane.

The default VRF's policy, BGP, BFD and neighbour sections give way to ``cumulus/vrfs.j2`` (a VRF, its loopback, its
policy and its BGP instance per plane); ``fabric.render.nos.cumulus.ports.interface_lines`` puts each port in its VRF (``port_vrf``).
"""

from __future__ import annotations

from fabric.catalog.releases import release_key
from fabric.plan.compute.facts import SwitchFacts
from fabric.plan.compute.spine_vrfs import spine_vrfs
from fabric.render.sections import Section

PER_VRF = frozenset({"cumulus/policy.j2", "cumulus/bgp.j2", "cumulus/bfd.j2", "neighbors"})
"""The default VRF's sections a shared spine leaves out (templates by name; ``neighbors`` is built in Python,
``fabric.render.nos.cumulus.ports``)."""
BFD_PROFILE_SINCE = "5.15"  # as cumulus/bfd-profile.j2: BFD timers live in a profile from CL 5.15


def shared_sections(sections: tuple[Section | str, ...], facts: SwitchFacts) -> tuple[tuple[Section | str, ...], dict[str, object]]:
    """The sections and extra context of ``facts``' switch: unchanged (and no context) unless it is a shared spine."""
    vrfs = spine_vrfs(facts)
    if not vrfs:
        return sections, {}
    context: dict[str, object] = {"vrfs": vrfs, "port_vrf": {p.name: v.name for v in vrfs for p in v.ports}}
    context["bfd_profile"] = release_key(facts.switch.nos_version) >= release_key(BFD_PROFILE_SINCE)
    kept = (s for s in sections if (s.template if isinstance(s, Section) else s) not in PER_VRF)
    return (*kept, Section("cumulus/vrfs.j2")), context
