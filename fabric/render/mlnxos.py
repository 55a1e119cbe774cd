"""NVIDIA InfiniBand switches (MLNX-OS): management plane and the switch-hosted subnet manager."""

from __future__ import annotations

from fabric.plan.facts import SwitchFacts
from fabric.render._jinja import template


def render_mlnxos(facts: SwitchFacts) -> dict[str, str]:
    """``running-config`` of an IB switch."""
    return {"running-config": template("mlnx-os.cfg.j2").render(f=facts, m=facts.management)}
