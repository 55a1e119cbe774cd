"""Which compute NOSes the twin can rehearse, and how: FRR natively, SONiC's routing config in FRR; a refusal for the rest
that says why and what to rehearse instead.

SONiC's routing stack is FRR (the ``bgp`` container, split-unified mode: one ``frr.conf``), so the twin runs a SONiC
switch's own rendered ``frr.conf`` in its namespace. On a real SONiC, swss programs the ports' and loopback's
addresses into the kernel from config_db (INTERFACE, LOOPBACK_INTERFACE) and zebra learns them from there; here the twin
programs them with ``ip addr`` from the rendered ``config_db.json``, on veths named as SONiC names its ports
(``Ethernet0``…). SONiC's ``Loopback0`` is a dummy device (intfmgrd runs ``ip link add Loopback0 type dummy``: sonic-swss
``cfgmgr/intfmgr.cpp``); the twin puts its addresses on the namespace's ``lo`` instead, because the dummy driver is a
kernel module that containers often lack (and the rendered frr.conf puts the same address on ``lo``). zebra loads
``dplane_fpm_nl`` as SONiC's does (``-M dplane_fpm_nl``: sonic-buildimage
``dockers/docker-fpm-frr/frr/supervisord/supervisord.conf.j2``), so the rendered ``fpm`` lines are accepted; no
fpmsyncd listens, and zebra programs the namespace's kernel as usual. The daemons start on the twin's base config and
``vtysh -b`` boots the rendered frr.conf into them (``fabric.twin.switches.boot_config``).

A push to such a twin pushes the rendered ``frr.conf`` through the FRR adapter (``adapters_for`` in
``fabric.twin.access``): BGP, ECMP, ``--drain`` and rollback run on the real routing config. config_db (ports,
speeds, breakout, QoS/PFC/ECN, buffers) and the SONiC CLI (``config``, GCU patches, checkpoints) are not rehearsed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from fabric.errors import LabError
from fabric.plan.types import ClusterPlan

NATIVE = "frr"
IN_FRR = frozenset({"sonic"})  # NOSes whose routing config is an frr.conf the twin runs in FRR
ZEBRA_MODULES: Mapping[str, tuple[str, ...]] = {"sonic": ("dplane_fpm_nl",)}  # what SONiC's zebra loads (module docstring)
LOOPBACK = "Loopback0"

SCOPE = (
    "rehearsed on the twin: the SONiC switches' rendered frr.conf in FRR: BGP sessions, ECMP, push --drain, push/rollback "
    "of the routing config; NOT rehearsed: config_db (ports, speeds, breakout, QoS/PFC/ECN, buffers) and the SONiC CLI "
    "(config, GCU patches, checkpoints): check those with render, lint and diff --offline"
)

# Why each other compute NOS has no twin: its routing config is not an frr.conf the twin can run.
_WHY = {
    "cumulus": (
        "Cumulus runs FRR, but its rendered config is NVUE 'nv set' lines (nvue.sh) that NVUE turns into frr.conf on the "
        "switch; the twin has no NVUE to do that"
    ),
    "eos": "EOS routes with Arista's own agents, not FRR: the twin has nothing to run its config in",
    "nxos": "NX-OS routes with Cisco's own BGP, not FRR: the twin has nothing to run its config in",
    "mlnx-os": "MLNX-OS switches an InfiniBand fabric that the subnet manager routes, no BGP: the twin has no InfiniBand",
}
CHECKS = "rehearse instead: 'render', 'lint' (the NOS reference checks) and 'diff --offline' on this definition"
COPY = ", and the push itself on a copy of it with fabric.leaf/spine {model: lab-vswitch, nos: frr}"
ETHERNET_ONLY = frozenset({"mlnx-os"})  # no FRR copy of an InfiniBand fabric to rehearse a push on

Run = Callable[..., object]


def refuse_unrehearsable(plan: ClusterPlan) -> None:
    """Refuse a compute fabric the twin cannot run: it names each NOS, why, and what to rehearse instead.

    Raises:
        LabError: no on-prem fabric, or a compute switch whose NOS is neither FRR nor SONiC.
    """
    fabric = plan.fabric
    if fabric is None:
        msg = f"cluster '{plan.name}': the twin builds an on-prem compute fabric; this definition has none (target: {plan.target})"
        raise LabError(msg)
    other = sorted({s.nos for s in fabric.switches} - {NATIVE, *IN_FRR})
    if other:
        why = "; ".join(f"{nos}: {_WHY.get(nos, 'its routing config is not an frr.conf')}" for nos in other)
        instead = CHECKS + ("" if set(other) <= ETHERNET_ONLY else COPY)
        msg = f"cluster '{plan.name}': the twin runs FRR and SONiC compute switches only, not {', '.join(other)} ({why}); {instead}"
        raise LabError(msg)


def rehearses(plan: ClusterPlan) -> bool:
    """True when a compute switch of ``plan`` is a NOS the twin rehearses in FRR (SONiC)."""
    return plan.fabric is not None and any(s.nos in IN_FRR for s in plan.fabric.switches)


def config_db_addresses(config_db: str) -> list[tuple[str, str]]:
    """(interface, address/prefix) of every INTERFACE and LOOPBACK_INTERFACE key of a rendered ``config_db.json``.

    Example:
        >>> config_db_addresses('{"INTERFACE": {"Ethernet0": {}, "Ethernet0|10.100.0.0/31": {}},'
        ...                     ' "LOOPBACK_INTERFACE": {"Loopback0|10.255.1.1/32": {}}}')
        [('Ethernet0', '10.100.0.0/31'), ('Loopback0', '10.255.1.1/32')]
    """
    tables = json.loads(config_db)
    keys = [key for table in ("INTERFACE", "LOOPBACK_INTERFACE") for key in tables.get(table, {})]
    return [(key.split("|")[0], key.split("|")[1]) for key in keys if "|" in key]


def program_addresses(ns: str, config_db: str, run: Run) -> None:
    """What swss does from config_db, for the routing part: each address on its interface (``Loopback0``'s on ``lo``)."""
    for name, address in config_db_addresses(config_db):
        run("ip", "-n", ns, "addr", "add", address, "dev", "lo" if name == LOOPBACK else name)
