"""FRR (the local twin's switches, and the BGP half of SONiC): ``frr.conf``."""

from __future__ import annotations

from fabric.plan.compute.facts import SwitchFacts
from fabric.render._jinja import template


def render_frr_conf(facts: SwitchFacts, *, management: bool = True, sonic: bool = False) -> str:
    """The integrated ``frr.conf`` of one switch.

    Args:
        facts: the switch.
        management: add the vty access list (off inside SONiC, whose management lives in config_db).
        sonic: SONiC's FRR: traditional defaults with an explicit ``no bgp ebgp-requires-policy``, and the FPM lines
            SONiC's ``docker_init.sh`` would append.
    """
    return template("frr.conf.j2").render(facts=facts, mgmt=management, sonic=sonic)


def render_frr(facts: SwitchFacts) -> dict[str, str]:
    """Files of an FRR switch."""
    return {"frr.conf": render_frr_conf(facts)}
