"""Arista EOS: full CLI text."""

from __future__ import annotations

from fabric.plan.facts import SwitchFacts
from fabric.render._jinja import template


def render_eos(facts: SwitchFacts) -> dict[str, str]:
    """``<switch>.cfg``: the running-config a configure session replaces."""
    return {"startup-config": template("eos.cfg.j2").render(f=facts, m=facts.management, r=facts.roce)}
