"""NVIDIA InfiniBand switches (MLNX-OS): management plane, port descriptions and the switch-hosted subnet manager.

One template per section (``templates/mlnxos/``), in ``SECTIONS`` order.
"""

from __future__ import annotations

from fabric.plan.compute.facts import SwitchFacts
from fabric.render.sections import Section, render_sections

SECTIONS: tuple[Section, ...] = (
    Section("mlnxos/header.j2"),
    Section("mlnxos/management.j2"),  # mgmt0 addressed before services that reach out over it (ntp, logging)
    Section("mlnxos/security.j2"),  # ssh on, then the filter that limits it to the management prefix
    Section("mlnxos/interfaces.j2"),
    Section("mlnxos/sm.j2"),  # the SM is enabled before partitions: they apply only while it runs on the switch
    Section("mlnxos/partitions.j2"),
)


def render_mlnxos(facts: SwitchFacts) -> dict[str, str]:
    """``running-config`` of an IB switch."""
    return {"running-config": render_sections(SECTIONS, facts.switch.nos_version, facts=facts, mgmt=facts.management)}
