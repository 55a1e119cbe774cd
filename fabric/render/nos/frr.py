"""FRR (the local twin's switches, and the BGP half of SONiC): ``frr.conf``."""

from __future__ import annotations

from fabric.plan.compute.facts import SwitchFacts
from fabric.plan.compute.spine_vrfs import VrfFacts, spine_vrfs
from fabric.render._jinja import template


def render_frr_conf(facts: SwitchFacts, *, management: bool = True, sonic: bool = False) -> str:
    """The integrated ``frr.conf`` of one switch.

    Args:
        facts: the switch.
        management: add the vty access list (off inside SONiC, whose management lives in config_db).
        sonic: SONiC's FRR: traditional defaults with an explicit ``no bgp ebgp-requires-policy``, and the FPM lines
            SONiC's ``docker_init.sh`` would append.
    """
    vrfs = spine_vrfs(facts)
    if vrfs:  # a shared spine (fabric.plan.compute.shared_spines): a VRF and a BGP instance per plane
        return template("frr-vrfs.conf.j2").render(facts=facts, vrfs=vrfs, mgmt=management, sonic=sonic)
    return template("frr.conf.j2").render(facts=facts, mgmt=management, sonic=sonic)


def render_vrf_devices(vrfs: tuple[VrfFacts, ...]) -> str:
    """``vrfs.ip``: the Linux VRF devices of a shared spine and their ports, for ``ip -batch`` (iproute2, ip(8)).

    FRR runs on Linux's VRFs and does not create them: each is a ``vrf`` device bound to its own routing table, and a
    port joins it by ``master`` (docs.kernel.org/networking/vrf.html, "Virtual Routing and Forwarding (VRF)").

    Example:
        >>> from fabric.plan.compute.facts import PortFacts
        >>> port = PortFacts("swp3", "fabric", "p2-leaf01", "swp3", 100, 9216, 3, None, None, True)
        >>> print(render_vrf_devices((VrfFacts("Vrf-plane2", 2, 1002, "10.255.128.1/32", (port,), (), ()),)), end="")
        link add Vrf-plane2 type vrf table 1002
        link set Vrf-plane2 up
        link set swp3 master Vrf-plane2
    """
    lines: list[str] = []
    for v in vrfs:
        lines += [f"link add {v.name} type vrf table {v.table}", f"link set {v.name} up"]
        lines += [f"link set {p.name} master {v.name}" for p in v.ports]
    return "".join(f"{line}\n" for line in lines)


def render_frr(facts: SwitchFacts) -> dict[str, str]:
    """Files of an FRR switch."""
    vrfs = spine_vrfs(facts)
    return {"frr.conf": render_frr_conf(facts), **({"vrfs.ip": render_vrf_devices(vrfs)} if vrfs else {})}
