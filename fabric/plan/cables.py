"""The fields every cable of every plane has: compute (``types.Link``), storage / in-band (``storage.types.StorageLink``)
and OOB (``oob.types.OobLink``) cables extend it with their own."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Cable:
    """A cable. ``a`` is the switch closer to the hosts, ``b`` the node, BMC, peer, spine or core.

    Attributes:
        kind: what it connects (each plane narrows it to its own kinds).
        speed_gbps: the port speed at both ends.
        cable_m: the planned cable length.
    """

    kind: str
    a_device: str
    a_port: str
    b_device: str
    b_port: str
    speed_gbps: int
    cable_m: int
