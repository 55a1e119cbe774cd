"""Arista EOS: full CLI text, one template per section (``templates/eos/``), in ``SECTIONS`` order."""

from __future__ import annotations

from fabric.plan.compute.facts import SwitchFacts
from fabric.render.breakout import eos_speed, rs_fec_ports
from fabric.render.nos.eos.vrfs import shared_sections
from fabric.render.sections import Section, render_sections

# The contract's watchdog action on EOS. AVD qos_profiles schema: priority_flow_control.watchdog.action valid values
# "drop", "notify-only" (per profile, `priority-flow-control pause watchdog port action …`); AVD priority_flow_control
# schema: watchdog.action "drop", "no-drop" (global `priority-flow-control pause watchdog action …`, "Action on stuck
# queue"). drop drops the stuck queue; alert only notifies; forward keeps forwarding (the global no-drop action, below).
WATCHDOG_PORT_ACTION = {"drop": "drop", "alert": "notify-only"}

SECTIONS: tuple[Section, ...] = (
    Section("eos/header.j2"),  # hostname and the routing model first: multi-agent must be set before BGP is configured
    Section("eos/management.j2"),  # `vrf instance mgmt` before every line that names the VRF (name servers, ntp, ssh)
    Section("eos/acl.j2"),  # MGMT-SSH exists before `management ssh` applies it
    Section("eos/gnmi.j2"),  # after `vrf instance`: the gNMI transport listens in the management VRF
    Section("eos/qos.j2"),  # `qos profile ROCE` exists before interfaces apply it with service-profile
    Section("eos/interfaces.j2"),
    Section("eos/routing.j2"),  # after the interfaces: `ip routing ipv6 interfaces` acts on interfaces with `ipv6 enable`
    Section("eos/policy.j2"),  # the prefix list and route map exist before `router bgp` references them
    Section("eos/bgp.j2"),
    Section("eos/end.j2"),
)


def render_eos(facts: SwitchFacts) -> dict[str, str]:
    """``startup-config``: the running-config a configure session replaces."""
    unnumbered = any(p.address is None and p.kind == "fabric" for p in facts.ports)
    sections, shared = shared_sections(SECTIONS, facts)  # a shared spine: a VRF per plane (fabric.render.nos.eos.vrfs)
    text = render_sections(
        sections,
        facts.switch.nos_version,
        facts=facts,
        mgmt=facts.management,
        roce=facts.roce,
        unnumbered=unnumbered,
        port_action=WATCHDOG_PORT_ACTION,
        speed={p.name: eos_speed(facts.switch.model, p.speed_gbps) for p in facts.ports},
        rs_fec=rs_fec_ports(facts.switch.model, [(p.name, p.speed_gbps, 0) for p in facts.ports]),
        **shared,
    )
    return {"startup-config": text}
