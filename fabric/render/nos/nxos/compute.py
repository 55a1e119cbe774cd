"""Cisco NX-OS (Nexus 9000): full CLI text, one template per section (``templates/nxos/``), in ``SECTIONS`` order."""

from __future__ import annotations

from dataclasses import dataclass

from fabric.model.qos import PfcWatchdogSpec
from fabric.plan.compute.facts import SwitchFacts
from fabric.plan.load_balancing import nxos_load_sharing
from fabric.render.breakout import breakouts, rs_fec_ports
from fabric.render.nos.nxos.vrfs import shared_sections
from fabric.render.sections import Section, render_sections

SECTIONS: tuple[Section, ...] = (
    Section("nxos/header.j2"),  # `feature bgp` / `feature bfd` before any bgp or bfd command is accepted
    Section("nxos/tcam.j2"),  # the TCAM carve is global; it waits for a reload, so its place only matters for reading
    Section("nxos/load-sharing.j2"),  # the ECMP hash is global, in no block
    Section("nxos/management.j2"),
    Section("nxos/acl.j2"),  # MGMT-SSH defined before `line vty` applies it
    Section("nxos/gnmi.j2"),  # `feature grpc` before `grpc port`
    Section("nxos/qos.j2"),  # class maps, then the policies that use them, then `system qos`, before interfaces attach QOS_CLASSIFY
    Section("nxos/interfaces.j2"),
    Section("nxos/policy.j2"),  # prefix list and route map before the BGP template references them
    Section("nxos/bgp.j2"),
)


@dataclass(frozen=True, slots=True)
class NxosWatchdog:
    """The contract's watchdog timers as NX-OS multipliers of the watchdog interval (the polling time)."""

    shutdown_multiplier: int
    restore_multiplier: int


def nxos_watchdog(wd: PfcWatchdogSpec) -> NxosWatchdog:
    """Detection and restoration times as whole multiples of the polling interval, rounded up.

    The model's rules refuse timers NX-OS cannot express (``fabric.model.rules.check_switch_tiers``).

    Example:
        >>> nxos_watchdog(PfcWatchdogSpec(detection_ms=200, restoration_ms=300, polling_ms=100))
        NxosWatchdog(shutdown_multiplier=2, restore_multiplier=3)
    """
    return NxosWatchdog(-(-wd.detection_ms // wd.polling_ms), -(-wd.restoration_ms // wd.polling_ms))


def render_nxos(facts: SwitchFacts) -> dict[str, str]:
    """``running-config`` applied through a checkpoint (rollback on failure)."""
    unnumbered = any(p.address is None and p.kind == "fabric" for p in facts.ports)
    watchdog = nxos_watchdog(facts.roce.pfc_watchdog) if facts.roce else None
    context = {
        "facts": facts,
        "mgmt": facts.management,
        "roce": facts.roce,
        "unnumbered": unnumbered,
        "watchdog": watchdog,
        "load_sharing": (nxos_load_sharing(facts.load_balancing) or "").split()[3:],  # the options after `ip load-sharing address`
        "breakouts": breakouts(facts),
        "rs_fec": rs_fec_ports(facts.switch.model, [(p.name, p.speed_gbps, 0) for p in facts.ports]),
    }
    sections, shared = shared_sections(SECTIONS, facts)  # a shared spine: a VRF per plane (fabric.render.nos.nxos.vrfs)
    return {"running-config": render_sections(sections, facts.switch.nos_version, **context, **shared)}
