"""Breakout cages: which front-panel cages of a switch run split into several ports, and into how many.

A port below the model's native speed is one of ``fanout`` ports of its cage (the catalog's ``breakout`` modes); the NOS
only creates those ports once the cage itself is configured as a breakout, so a renderer emits that per cage.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from fabric.catalog.fec import needs_rs_fec
from fabric.catalog.switches import SWITCH_MODELS
from fabric.plan.compute.facts import SwitchFacts
from fabric.plan.storage.facts import StorageSwitchFacts


@dataclass(frozen=True, slots=True)
class Breakout:
    """One cage run as ``fanout`` ports.

    Attributes:
        cage: the cage's port name at the native speed under the switch's NOS (``swp1``).
        number: the cage's 1-based front-panel number (NX-OS names it in ``interface breakout module 1 port <number>``).
        fanout: ports the cage splits into (2 for 2 x 400G on an 800G cage).
        speed_gbps: the speed of each of those ports.
    """

    cage: str
    number: int
    fanout: int
    speed_gbps: int


def breakouts(facts: SwitchFacts) -> tuple[Breakout, ...]:
    """Every cage of ``facts.switch`` that at least one cabled port splits, in cage order.

    Raises:
        ValueError: a port runs at a speed its model does not have.
    """
    model = SWITCH_MODELS[facts.switch.model]
    found: dict[int, Breakout] = {}
    for speed in sorted({p.speed_gbps for p in facts.ports if p.speed_gbps != model.speed_gbps}):
        split = _split_ports(facts.switch.model, facts.switch.nos, speed)
        if split is None:
            msg = f"{facts.switch.name}: {model.name} has no {speed} Gb/s ports"
            raise ValueError(msg)
        # The planner names every port from this catalog; a name it does not know (a hand-edited plan) is left to
        # the templates' guard, which refuses it naming value and template.
        for port in facts.ports:
            if port.speed_gbps == speed and (breakout := split.get(port.name)) is not None:
                found.setdefault(breakout.number, breakout)
    return tuple(found[c] for c in sorted(found))


@cache
def _split_ports(model_name: str, nos: str, speed: int) -> dict[str, Breakout] | None:
    """Port name at ``speed`` -> the breakout of its cage, for every port of the model; None when it has no such speed.

    The same for every switch of a model and NOS, so built once (a 32k-GPU fabric has 1,280 switches of one model).
    """
    model = SWITCH_MODELS[model_name]
    fanout, radix = model.fanout(speed), model.radix(speed)
    if fanout is None or radix is None:
        return None
    cages = [
        Breakout(model.port_name(nos, cage * model.ports_per_cage, model.speed_gbps), cage + 1, fanout, speed) for cage in range(radix // fanout)
    ]
    return {model.port_name(nos, i, speed): cages[i // fanout] for i in range(radix)}


def eos_speed(model_name: str, speed_gbps: int, mode_gbps: int | None = None) -> str:
    """The EOS ``speed`` value of a port at ``speed_gbps`` on ``model_name``: lanes named on a split port.

    EOS splits a cage by the speed of its lane-1 interface: on an 8-lane cage ``speed 400g-4`` is 2 x 400G and
    ``speed 100g-2`` is 4 x 100G (Intel Gaudi "Arista Switch L2/L3 Configuration Example": "speed 400g-4 for 800G 2
    lines", "speed 200g-2 for 800G 4 lines", "speed 100g-2 for 400G"); a port at the native speed keeps ``<n>g``.

    ``mode_gbps`` is the speed of the cage's breakout mode when the port runs slower than it (a 100G NIC on a port of a
    2 x 200G cage): the port keeps the mode's lanes where the speed splits into whole 10/25/50/100G lanes over them
    (``100g-4``, IEEE 802.3 100GBASE-CR4: 4 x 25G), else the plain ``<n>g`` (a 25G or 10G port is one lane; not
    checked on a device, see docs).

    Example:
        >>> eos_speed("7060x6-64pe", 400), eos_speed("7060x6-64pe", 800), eos_speed("7060x5-64s", 100, 200), eos_speed("7060x5-64s", 25, 200)
        ('400g-4', '800g', '100g-4', '25g')
    """
    model = SWITCH_MODELS[model_name]
    mode = mode_gbps or speed_gbps
    fanout = model.fanout(mode)
    if mode == model.speed_gbps or fanout is None:
        return f"{speed_gbps}g"
    lanes = model.lanes // fanout
    if speed_gbps == mode or (speed_gbps % lanes == 0 and speed_gbps // lanes in (10, 25, 50, 100)):
        return f"{speed_gbps}g-{lanes}"
    return f"{speed_gbps}g"


def eos_l2_mtu(model_name: str) -> bool:
    """Whether EOS has the ``l2 mtu`` interface command on ``model_name`` (the catalog's ``nos.eos.l2_mtu``).

    AVD ``ethernet_interfaces.schema.yml``: "``l2_mtu`` should only be defined for platforms supporting the "l2 mtu"
    CLI"; no bundled EOS model has a reference for it, so none renders the line.

    Example:
        >>> eos_l2_mtu("7060x5-64s")
        False
    """
    support = SWITCH_MODELS[model_name].nos.get("eos")
    return bool(support and support.l2_mtu)


def lane_one_ports(facts: StorageSwitchFacts) -> tuple[tuple[str, str], ...]:
    """(name, speed) of the lane-1 port of every broken-out cage that no cable uses.

    EOS splits a cage by the speed of its lane-1 interface (``breakout.eos_speed``), so a cage whose cabled ports are
    only its later ones (the peerlink on Ethernet64/5 and /7) still needs ``speed`` on Ethernet64/1; it is shut down.
    """
    cabled = {p.name for p in facts.ports}
    mode = next((p.mode_gbps for p in facts.ports), 0)
    return tuple((cage, eos_speed(facts.switch.model, mode)) for cage, _ in facts.breakouts if cage not in cabled)


def rs_fec_ports(model_name: str, ports: Iterable[tuple[str, int, int]]) -> frozenset[str]:
    """Names of the cabled ports, given as (name, speed, cage mode speed or 0), whose speed needs RS-FEC on
    ``model_name`` (``fabric.catalog.fec``, the rule the physical-layer lint checks): each renderer sets it on them.

    Example:
        >>> sorted(rs_fec_ports("sn5600", [("swp1s0", 400, 0), ("swp2s0", 25, 200)]))
        ['swp1s0']
    """
    return frozenset(name for name, speed, mode in ports if needs_rs_fec(model_name, speed, mode or None))
