"""Breakout cages: which front-panel cages of a switch run split into several ports, and into how many.

A port below the model's native speed is one of ``fanout`` ports of its cage (the catalog's ``breakout`` modes); the NOS
only creates those ports once the cage itself is configured as a breakout, so a renderer emits that per cage.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabric.catalog.switches import SWITCH_MODELS
from fabric.plan.facts import SwitchFacts


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
    nos = facts.switch.nos
    found: dict[int, Breakout] = {}
    for speed in sorted({p.speed_gbps for p in facts.ports if p.speed_gbps != model.speed_gbps}):
        fanout, radix = model.fanout(speed), model.radix(speed)
        if fanout is None or radix is None:
            msg = f"{facts.switch.name}: {model.name} has no {speed} Gb/s ports"
            raise ValueError(msg)
        cage_of = {model.port_name(nos, i, speed): i // fanout for i in range(radix)}
        # The planner names every port from this catalog; a name it does not know (a hand-edited plan) is left to
        # the templates' guard, which refuses it naming value and template.
        for port in (p for p in facts.ports if p.speed_gbps == speed and p.name in cage_of):
            cage = cage_of[port.name]
            native = model.port_name(nos, cage * model.ports_per_cage, model.speed_gbps)
            found.setdefault(cage, Breakout(native, cage + 1, fanout, speed))
    return tuple(found[c] for c in sorted(found))
