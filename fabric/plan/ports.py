"""Switch port and management-interface names per NOS.

A logical port ``index`` (0-based) at a speed with breakout ``fanout`` sits in cage ``index // fanout + 1``,
lane ``index % fanout``.
"""

from __future__ import annotations

MGMT_INTERFACE = {"sonic": "eth0", "cumulus": "eth0", "eos": "Management1", "nxos": "mgmt0", "frr": "eth0", "mlnx-os": "mgmt0"}


def port_name(nos: str, index: int, fanout: int, lanes_per_cage: int = 8) -> str:
    """Name of logical port ``index`` on a switch running ``nos``.

    Example:
        >>> port_name("cumulus", 3, 2), port_name("sonic", 3, 2), port_name("eos", 3, 2), port_name("nxos", 0, 1)
        ('swp2s1', 'Ethernet12', 'Ethernet2/2', 'Ethernet1/1')
    """
    cage, lane = index // fanout + 1, index % fanout
    split = fanout > 1
    if nos == "frr":
        return f"swp{index + 1}"
    if nos == "cumulus":
        return f"swp{cage}s{lane}" if split else f"swp{cage}"
    if nos == "sonic":
        return f"Ethernet{(cage - 1) * lanes_per_cage + lane * (lanes_per_cage // fanout)}"
    if nos == "eos":
        return f"Ethernet{cage}/{lane + 1}"
    if nos == "nxos":
        return f"Ethernet1/{cage}/{lane + 1}" if split else f"Ethernet1/{cage}"
    if nos == "mlnx-os":
        return f"IB1/{cage}/{lane + 1}" if split else f"IB1/{cage}"
    msg = f"no port naming for NOS {nos!r}"
    raise ValueError(msg)
