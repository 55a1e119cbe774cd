"""NVIDIA Cumulus Linux: NVUE ``nv set`` commands, one template per section (``templates/cumulus/``), by release."""

from __future__ import annotations

from fabric.errors import RenderError
from fabric.plan.compute.facts import SwitchFacts
from fabric.plan.load_balancing import cumulus_hash_lines
from fabric.render.breakout import breakouts, rs_fec_ports
from fabric.render.nos.cumulus.syntax import nvue_words
from fabric.render.nos.cumulus.vrfs import shared_sections
from fabric.render.sections import Section, render_sections

SECTIONS: tuple[Section, ...] = (
    Section("cumulus/header.j2"),
    # management VRF on eth0 before the services that run in it; CL 5.15 moved ntp and dns from `service` to `system`
    Section("cumulus/management.j2", {"5.15": "cumulus/management-system.j2"}),
    Section("cumulus/syslog.j2", {"5.13": "cumulus/syslog-system.j2"}),  # `service syslog` is gone from CL 5.13
    Section("cumulus/acl.j2"),  # the ACL exists before the control plane binds it (same revision; order is for reading)
    Section("cumulus/gnmi.j2"),  # CL >= 5.13 only (the facts give no gNMI port before): the gNMI server on the mgmt address
    Section("cumulus/interfaces.j2"),
    Section("cumulus/qos.j2"),
    # fabric.plan.load_balancing: ECMP hash and adaptive routing; CL 5.15 turns adaptive routing on with `state enabled`
    Section("cumulus/load-balancing.j2", {"5.15": "cumulus/load-balancing-state.j2"}),
    Section("cumulus/policy.j2"),  # prefix list and route map before the peer group's outbound policy names them
    Section("cumulus/bgp.j2"),  # the peer group before BFD and the neighbors that join it
    Section("cumulus/bfd.j2", {"5.15": "cumulus/bfd-profile.j2"}),  # CL 5.15: BFD timers live in a profile
    Section("cumulus/neighbors.j2"),
)


def render_cumulus(facts: SwitchFacts) -> dict[str, str]:
    """``nvue.sh``: one ``nv set`` per line, applied with ``nv config apply --confirm``."""
    context: dict[str, object] = {"facts": facts, "mgmt": facts.management, "roce": facts.roce, "breakouts": breakouts(facts)}
    context["nv"] = nvue_words(facts.switch.nos_version)
    context["rs_fec"] = rs_fec_ports(facts.switch.model, [(p.name, p.speed_gbps, 0) for p in facts.ports])
    context["lb"] = facts.load_balancing
    context["ecmp_hash"] = cumulus_hash_lines(facts.load_balancing, (context["nv"].on, context["nv"].off))
    context["cable_length"] = cable_length(facts.switch.name, [p.cable_m for p in facts.ports] if facts.roce else None)
    sections, shared = shared_sections(SECTIONS, facts)  # a shared spine: a VRF per plane (fabric.render.nos.cumulus.vrfs)
    context["port_vrf"] = {}
    context.update(shared)
    return {"nvue.sh": render_sections(sections, facts.switch.nos_version, **context)}


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
