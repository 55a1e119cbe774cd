"""Cisco NX-OS (Nexus 9000): full CLI text."""

from __future__ import annotations

from fabric.plan.facts import SwitchFacts
from fabric.render._jinja import template


def render_nxos(facts: SwitchFacts) -> dict[str, str]:
    """``running-config`` applied through a checkpoint (rollback on failure)."""
    return {"running-config": template("nxos.cfg.j2").render(f=facts, m=facts.management, r=facts.roce)}
