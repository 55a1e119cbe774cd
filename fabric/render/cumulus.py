"""NVIDIA Cumulus Linux: NVUE ``nv set`` commands, including ``qos roce`` with the contract's values."""

from __future__ import annotations

from fabric.plan.facts import SwitchFacts
from fabric.render._jinja import template


def render_cumulus(facts: SwitchFacts) -> dict[str, str]:
    """``nvue.sh``: one ``nv set`` per line, applied with ``nv config apply --confirm``."""
    return {"nvue.sh": template("nvue.sh.j2").render(f=facts, m=facts.management, r=facts.roce)}
