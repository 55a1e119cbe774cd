"""A shared spine on EOS (fabric.plan.compute.shared_spines): the sections of its VRF per plane.

``eos/vrfs.j2`` (``vrf instance`` per plane) follows the management section; the default VRF's policy and BGP give way
to ``eos/vrf-policy.j2`` and ``eos/vrf-bgp.j2``; the interfaces and routing sections (``fabric.render.nos.eos.text``)
put each port, loopback and ``ip routing vrf`` in its VRF (``port_vrf``, ``vrfs``). Numbered (/31) fabric links only:
an unnumbered shared spine is refused in the plan (fabric.plan.compute.shared_spines), its VRF form not checked against
pyavd. The VRF sections are the only EOS compute sections still in Jinja: loaded only when a shared spine renders.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from functools import partial

from fabric.plan.compute.spine_vrfs import spine_vrfs
from fabric.render.nos.eos.text import EosContext, section_text

SWAPPED = {"policy": "eos/vrf-policy.j2", "bgp": "eos/vrf-bgp.j2"}


def _template(name: str, c: EosContext) -> str:
    """A VRF section's template, given what the templates of every section were given."""
    from fabric.render.templating import template  # Jinja only where a shared spine renders

    f = c.facts
    return template(name).render(
        facts=f,
        mgmt=f.management,
        roce=f.roce,
        unnumbered=c.unnumbered,
        port_action=c.port_action,
        speed=c.speed,
        rs_fec=c.rs_fec,
        vrfs=c.vrfs,
        port_vrf=c.port_vrf,
    )


def shared_sections(names: Sequence[str], c: EosContext) -> list[Callable[[], str]] | None:
    """Each section of ``c``'s switch, to be called in order, when it is a shared spine; None on any other switch."""
    vrfs = spine_vrfs(c.facts)
    if not vrfs:
        return None
    c = dataclasses.replace(c, vrfs=vrfs, port_vrf={p.name: v.name for v in vrfs for p in v.ports})
    out: list[Callable[[], str]] = []
    for name in names:
        out.append(partial(_template, SWAPPED[name], c) if name in SWAPPED else partial(section_text, name, c))
        if name == "management":
            out.append(partial(_template, "eos/vrfs.j2", c))
    return out
