"""Arista EOS: full CLI text, one section per part of the config (``fabric.render.nos.eos.text``), in device order."""

from __future__ import annotations

from fabric.plan.compute.facts import SwitchFacts
from fabric.render.breakout import eos_speed, rs_fec_ports
from fabric.render.nos.eos.text import SECTIONS, EosContext, section_text
from fabric.render.nos.eos.vrfs import shared_sections

# The contract's watchdog action on EOS. AVD qos_profiles schema: priority_flow_control.watchdog.action valid values
# "drop", "notify-only" (per profile, `priority-flow-control pause watchdog port action …`); AVD priority_flow_control
# schema: watchdog.action "drop", "no-drop" (global `priority-flow-control pause watchdog action …`, "Action on stuck
# queue"). drop drops the stuck queue; alert only notifies; forward keeps forwarding (the global no-drop action, below).
WATCHDOG_PORT_ACTION = {"drop": "drop", "alert": "notify-only"}

_NAMES = tuple(name for name, _ in SECTIONS)


def render_eos(facts: SwitchFacts) -> dict[str, str]:
    """``startup-config``: the running-config a configure session replaces.

    Example:
        >>> from fabric.validate import validate_file
        >>> from fabric.plan.compute.facts import build_switch_facts
        >>> facts = build_switch_facts(validate_file("tests/data/render/eos/cluster.yaml").plan)[0]
        >>> render_eos(facts)["startup-config"].splitlines()[1:3]
        ['hostname spine01', '!']
    """
    model, ports = facts.switch.model, facts.ports
    speeds = {p.speed_gbps for p in ports}  # a switch has one or two port speeds: each looked up once, not per port
    word = {s: eos_speed(model, s) for s in speeds}
    fec = rs_fec_ports(model, [(str(s), s, 0) for s in speeds])  # the speeds (as names) that need RS-FEC
    context = EosContext(
        facts,
        unnumbered=any(p.address is None and p.kind == "fabric" for p in ports),
        port_action=WATCHDOG_PORT_ACTION,
        speed={p.name: word[p.speed_gbps] for p in ports},
        rs_fec=frozenset(p.name for p in ports if str(p.speed_gbps) in fec),
    )
    shared = shared_sections(_NAMES, context)  # a shared spine: a VRF per plane (fabric.render.nos.eos.vrfs)
    if shared is None:
        return {"startup-config": "".join([section_text(name, context) for name in _NAMES])}
    return {"startup-config": "".join([part() for part in shared])}
