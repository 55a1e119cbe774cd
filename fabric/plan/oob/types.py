"""Immutable plan objects of the out-of-band management network (kept apart from ``types`` so that module stays small)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fabric.plan.cables import Cable

OobCableKind = Literal["bmc", "switch-mgmt", "device", "uplink"]


@dataclass(frozen=True, slots=True)
class OobLink(Cable):
    """A cable of the OOB network. ``a`` is the management switch, ``b`` the BMC, the managed switch, a PDU/console or the core.

    Attributes:
        b_address: the planned address of the far end (the BMC's or the switch's management address), None for uplinks.
    """

    kind: OobCableKind
    plane: str = "oob"
    b_address: str | None = None


@dataclass(frozen=True, slots=True)
class OobSwitchPlan:
    """A management switch: where it sits, its own address and how full it is.

    Attributes:
        location: ``su<s>``, ``su<s>-<k>``, ``su<s>-r<r>``, ``su<s>-net`` or ``mgmt`` (the management rack).
        ports_used: highest access port index in use (slots are reserved: an SU's empty slots keep their ports).
    """

    name: str
    switch_id: int
    location: str
    model: str
    nos: str
    mgmt_interface: str
    mgmt_address: str
    ports_used: int
    ports_total: int
    uplinks: int
    nos_version: str = ""


@dataclass(frozen=True, slots=True)
class OobPlan:
    """The OOB network: management switches and every cable, in switch order then port order.

    Attributes:
        vlan: the one L2 segment of the plane: access ports untagged, the uplink bond to the core tagged, the switch's SVI.
        dhcp_servers: where each switch's DHCP relay sends what it hears on that VLAN (with option 82).
        dhcp_subnet: the Kea servers' own subnet (routed by the OOB core), or None when they sit on the plane itself.
    """

    placement: str
    core: str
    dhcp_lease_seconds: int
    switches: tuple[OobSwitchPlan, ...]
    links: tuple[OobLink, ...]
    vlan: int = 0
    dhcp_servers: tuple[str, ...] = ()
    dhcp_subnet: str | None = None
