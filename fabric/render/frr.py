"""FRR (the local twin's switches, and the BGP half of SONiC): ``frr.conf``."""

from __future__ import annotations

from fabric.plan.facts import SwitchFacts
from fabric.render._jinja import template


def render_frr_conf(facts: SwitchFacts, *, management: bool = True) -> str:
    """The integrated ``frr.conf`` of one switch; ``management`` adds the vty access list (off inside SONiC)."""
    return template("frr.conf.j2").render(f=facts, mgmt=management)


def render_frr(facts: SwitchFacts) -> dict[str, str]:
    """Files of an FRR switch."""
    return {"frr.conf": render_frr_conf(facts)}
