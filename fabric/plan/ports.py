"""Switch port and management-interface names per NOS.

Port names come from the switch model's data file (``fabric/catalog/data/switches``): logical port ``index``
(0-based, cage after cage) at a speed sits in cage ``index // fanout + 1``, where ``fanout`` is the number of ports a
cage gives at that speed, and each NOS names it by the model's format.
"""

from __future__ import annotations

from functools import cache

from fabric.catalog.switches import SWITCH_MODELS

MGMT_INTERFACE = {"sonic": "eth0", "cumulus": "eth0", "eos": "Management1", "nxos": "mgmt0", "frr": "eth0", "mlnx-os": "mgmt0"}


def port_name(model: str, nos: str, index: int, speed_gbps: int) -> str:
    """Name of logical port ``index`` of a ``model`` switch running ``nos``, at ``speed_gbps``.

    Example:
        >>> port_name("sn5600", "cumulus", 3, 400), port_name("sn5600", "sonic", 3, 400), port_name("7060x6-64pe", "eos", 3, 400)
        ('swp2s1', 'Ethernet12', 'Ethernet2/5')
        >>> port_name("n9k-c9332d-gx2b", "nxos", 0, 400), port_name("qm9700", "mlnx-os", 3, 400), port_name("sn4600c", "sonic", 1, 100)
        ('Ethernet1/1', 'IB1/2/2', 'Ethernet4')
    """
    names = _names(model, nos, speed_gbps)
    name = names[index] if 0 <= index < len(names) else None
    if name is not None:
        return name
    return SWITCH_MODELS[model].port_name(nos, index, speed_gbps)  # raises, naming what is wrong


@cache
def _names(model: str, nos: str, speed_gbps: int) -> tuple[str | None, ...]:
    """Every port name of ``model`` under ``nos`` at ``speed_gbps`` (None where the model names none): a fabric of
    thousands of switches asks for the same few hundred names again and again."""
    switch = SWITCH_MODELS[model]
    names: list[str | None] = []
    for index in range(switch.radix(speed_gbps) or 0):
        try:
            names.append(switch.port_name(nos, index, speed_gbps))
        except ValueError:
            names.append(None)
    return tuple(names)
