"""NVIDIA Cumulus Linux: NVUE ``nv set`` commands, one template per section (``templates/cumulus/``), by release.

The two per-port sections, the interfaces and the BGP neighbours, are Python (``fabric.render.nos.cumulus.ports``):
a 100k-GPU fabric has 602,112 switch ports, and a template evaluated per port was most of its switch render.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, cast

from fabric.errors import RenderError
from fabric.plan.compute.facts import SwitchFacts
from fabric.plan.load_balancing import cumulus_hash_lines
from fabric.render.breakout import breakouts, rs_fec_ports
from fabric.render.nos.cumulus.ports import interface_lines, neighbor_lines
from fabric.render.nos.cumulus.syntax import nvue_words
from fabric.render.nos.cumulus.vrfs import shared_sections
from fabric.render.sections import Section
from fabric.render.templating import template

if TYPE_CHECKING:
    from jinja2 import Template  # Jinja is imported with the first template (fabric.render.templating), not with this module

INTERFACES, NEIGHBORS = "interfaces", "neighbors"
"""The sections built in Python (``ports.interface_lines``, ``ports.neighbor_lines``), by their place in ``SECTIONS``."""

SECTIONS: tuple[Section | str, ...] = (
    Section("cumulus/header.j2"),
    # management VRF on eth0 before the services that run in it; CL 5.15 moved ntp and dns from `service` to `system`
    Section("cumulus/management.j2", {"5.15": "cumulus/management-system.j2"}),
    Section("cumulus/syslog.j2", {"5.13": "cumulus/syslog-system.j2"}),  # `service syslog` is gone from CL 5.13
    Section("cumulus/acl.j2"),  # the ACL exists before the control plane binds it (same revision; order is for reading)
    Section("cumulus/gnmi.j2"),  # CL >= 5.13 only (the facts give no gNMI port before): the gNMI server on the mgmt address
    INTERFACES,  # the loopback, the broken-out cages, then every port
    Section("cumulus/qos.j2"),
    # fabric.plan.load_balancing: ECMP hash and adaptive routing; CL 5.15 turns adaptive routing on with `state enabled`
    Section("cumulus/load-balancing.j2", {"5.15": "cumulus/load-balancing-state.j2"}),
    Section("cumulus/policy.j2"),  # prefix list and route map before the peer group's outbound policy names them
    Section("cumulus/bgp.j2"),  # the peer group before BFD and the neighbors that join it
    Section("cumulus/bfd.j2", {"5.15": "cumulus/bfd-profile.j2"}),  # CL 5.15: BFD timers live in a profile
    NEIGHBORS,
)


def render_cumulus(facts: SwitchFacts) -> dict[str, str]:
    """``nvue.sh``: one ``nv set`` per line, applied with ``nv config apply --confirm``."""
    release = facts.switch.nos_version
    nv = nvue_words(release)
    cages = breakouts(facts)
    fec = _rs_fec_speeds(facts.switch.model, frozenset(p.speed_gbps for p in facts.ports))
    rs_fec = frozenset(p.name for p in facts.ports if p.speed_gbps in fec)
    context: dict[str, object] = {"facts": facts, "mgmt": facts.management, "roce": facts.roce, "breakouts": cages, "nv": nv}
    context["lb"] = facts.load_balancing
    context["ecmp_hash"] = cumulus_hash_lines(facts.load_balancing, (nv.on, nv.off))
    context["cable_length"] = cable_length(facts.switch.name, [p.cable_m for p in facts.ports] if facts.roce else None)
    watchdog = facts.roce is not None and facts.roce.pfc_watchdog.enabled
    sections, shared = shared_sections(SECTIONS, facts)  # a shared spine: a VRF per plane (fabric.render.nos.cumulus.vrfs)
    context.update(shared)
    port_vrf = cast("dict[str, str]", shared.get("port_vrf", {}))
    built: dict[str, Callable[[], str]] = {
        INTERFACES: lambda: interface_lines(
            facts.switch.loopback, nv.ip, cages, facts.ports, rs_fec, watchdog=watchdog, port_vrf=port_vrf, ip_vrf=nv.ip_vrf
        ),
        NEIGHBORS: lambda: neighbor_lines(facts.neighbors),
    }
    compiled = _sections(release) if sections is SECTIONS else _compiled(sections, release)
    text = "".join(built[s]() if isinstance(s, str) else s.render(**context) for s in compiled)
    return {"nvue.sh": text}


@cache
def _rs_fec_speeds(model: str, speeds: frozenset[int]) -> frozenset[int]:
    """Which of these port speeds need RS-FEC on ``model``: ``rs_fec_ports`` asked once per model and set of speeds,
    not once per port (a compute port's cage runs at the port's own speed: mode 0, as each port was asked before)."""
    return frozenset(s for s in speeds if rs_fec_ports(model, [("", s, 0)]))


@cache
def _sections(release: str) -> tuple[Template | str, ...]:
    """``SECTIONS`` for ``release``: each template section's compiled variant, chosen once per release, not per switch."""
    return _compiled(SECTIONS, release)


def _compiled(sections: tuple[Section | str, ...], release: str) -> tuple[Template | str, ...]:
    """Each template section's compiled variant for ``release``; the Python-built sections by name."""
    return tuple(template(s.template_for(release)) if isinstance(s, Section) else s for s in sections)


def cable_length(switch: str, lengths: list[int] | None) -> int | None:
    """The longest cable on a lossless switch's ports (None: not lossless): what ``qos pfc default-global
    cable-length`` (``cumulus/qos.j2``) sizes PFC headroom for.

    Raises:
        RenderError: a lossless switch without a cabled port.
    """
    if lengths is None:
        return None
    if not lengths:
        msg = f"{switch}: no cabled port, so no cable length to size PFC headroom for"
        raise RenderError(msg)
    return max(lengths)
