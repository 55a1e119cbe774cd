"""Immutable plan objects of the storage and in-band Ethernet networks (apart from ``types`` so that module stays small)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fabric.plan.cables import Cable

StorageCableKind = Literal["storage", "inband", "peerlink", "uplink"]
StorageRole = Literal["leaf", "spine"]


@dataclass(frozen=True, slots=True)
class StorageLink(Cable):
    """A cable of a storage / in-band network. ``a`` is the switch closer to the hosts (the leaf), ``b`` the node, appliance, peer or spine.

    Attributes:
        plane: the plane the cable carries (``storage``/``inband`` for host cables; the network's name for peerlink and uplink).
        bond: the LAG on switch ``a`` the port is a member of (``peerlink``, ``bond<N>`` for a host, ``up<N>`` for an uplink), or None.
        mlag_id: the MLAG id of that bond on the pair (host and uplink bonds), None for single-homed ports and the peerlink.
        b_bond: the LAG on the far end for switch-to-switch cables (the spine's bond, the peer's peerlink), else None.
    """

    kind: StorageCableKind
    plane: str
    bond: str | None = None
    mlag_id: int | None = None
    b_bond: str | None = None
    vlan: int | None = None


@dataclass(frozen=True, slots=True)
class StorageSwitchPlan:
    """A switch of a storage / in-band network.

    Attributes:
        location: ``su<s>-<k>`` (leaf pair k of SU s), ``svc`` (the services pair: storage, management, appliances),
            ``spine`` or ``pair`` (the one pair of a collapsed network).
        side: ``a`` or ``b`` of its MLAG pair; ``peer`` the other switch.
        gateways: ``(plane, vlan, vrf, address/len, virtual address)`` of every SVI it routes (VRR: the virtual address is shared).
    """

    name: str
    network: str
    role: StorageRole
    switch_id: int
    location: str
    side: str
    peer: str
    model: str
    nos: str
    mgmt_interface: str
    mgmt_address: str
    ports_used: int
    ports_total: int
    gateways: tuple[tuple[str, int, str | None, str, str], ...] = ()
    nos_version: str = ""
    """The release it runs (``fabric.model.topology.tier_release``: its tier's ``nos_version`` or the inherited one)."""


@dataclass(frozen=True, slots=True)
class StorageSegment:
    """A plane on a network: its VLAN, MTU, VRF (separation vrf) and whether the storage RoCE contract applies."""

    plane: str
    vlan: int
    mtu: int
    vrf: str | None
    roce: bool = False


@dataclass(frozen=True, slots=True)
class StorageNetworkPlan:
    """One storage / in-band network: its switches, cables, segments and figures.

    Attributes:
        name: ``storage`` (carries storage, and in-band when converged) or ``inband``.
        oversubscription: host bandwidth over uplink bandwidth of the busiest leaf, e.g. ``"3.50:1"`` (``"n/a"`` collapsed).
    """

    name: str
    planes: tuple[str, ...]
    topology: str
    attach: str
    separation: str
    speed_gbps: int
    segments: tuple[StorageSegment, ...]
    switches: tuple[StorageSwitchPlan, ...]
    links: tuple[StorageLink, ...]
    oversubscription: str
    plane_oversubscription: tuple[tuple[str, str], ...] = ()
    """Per plane, its host bandwidth over the uplink bandwidth of its busiest leaf (what it gets when it alone fills them)."""

    @property
    def leaves(self) -> tuple[StorageSwitchPlan, ...]:
        """The leaf switches (every switch of a collapsed network)."""
        return tuple(s for s in self.switches if s.role == "leaf")

    @property
    def spines(self) -> tuple[StorageSwitchPlan, ...]:
        """The spine pair (none when collapsed)."""
        return tuple(s for s in self.switches if s.role == "spine")
