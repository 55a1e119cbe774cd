"""The out-of-band management network: the switches that take every BMC and every switch management port.

The DGX SuperPOD reference architecture builds the OOB network as a physical fabric of its own that "connects the
management ports of all devices including DGX and management servers, storage, networking gear, rack PDUs, and all
other devices" (https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-h100/latest/network-fabrics.html,
section Out-of-Band Management Network), on 1 GbE management switches (SN2201: 48 x 1GbE RJ45 + 4 x 100GbE QSFP28,
``fabric/catalog/data/switches/sn2201.yaml``).
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network
from typing import Annotated, Literal

from pydantic import Field

from fabric.model.base import Name, SpecModel
from fabric.model.strings import CatalogKey
from fabric.model.topology import INHERITED_RELEASE, Release

DEFAULT_VLAN = 100
"""The management switches' VLAN when ``planes.oob.vlan`` is not given (untagged on access ports, tagged to the core)."""

MAX_RACKS_PER_SU = 15
"""Racks of one scalable unit with ``placement: rack`` (the id scheme reserves 16 switch ids per SU: 15 racks + network rack)."""


class OobDeviceSpec(SpecModel):
    """Another device on the OOB network (PDU, console server), on a port the definition names."""

    name: Name
    kind: Literal["pdu", "console"]
    switch: Annotated[str, Field(pattern=r"^oob-[a-z0-9-]{1,59}$")] = Field(description="Management switch, e.g. oob-su1 or oob-su1-r2.")
    port: Annotated[int, Field(ge=1, le=512)] = Field(description="Access port on that switch (1-based), not one a BMC slot reserves.")
    address: IPv4Address = Field(description="The device's address on the oob plane (handed out by the OOB DHCP server).")


class OobNetworkSpec(SpecModel):
    """How the OOB plane is built: one management switch per rack or per scalable unit, uplinked to an OOB core."""

    model: CatalogKey = Field(default="sn2201", description="Management switch model from the catalog (fabric/catalog/data/switches).")
    nos: Literal["cumulus", "sonic", "eos", "nxos"] = Field(default="cumulus", description="NOS of the management switches.")
    nos_version: Release | None = Field(default=None, description=INHERITED_RELEASE)
    placement: Literal["su", "rack"] = Field(
        default="su",
        description="su: one switch per scalable unit takes its node slots (port = slot) and its leaves' management ports. "
        "rack: one switch per rack of nodes_per_rack slots, plus one per SU for its leaves. Spines, nodes outside any SU "
        "(storage, management) and leaves without an SU go to the management-rack switch 'oob-mgmt'.",
    )
    switches_per_su: Annotated[int, Field(ge=1, le=8)] = Field(
        default=1,
        description="placement su only: management switches per scalable unit. Above 1 they are oob-su<s>-<k> (k = 1..N): "
        "with q = ceil(su_size / N), switch k takes node slots (k-1)q+1 to kq on ports 1 to q, and the SU's j-th switch "
        "(its compute leaves, then its storage leaf pairs, j from 0) goes to switch j mod N + 1, port q + j div N + 1. "
        "The PDUs (devices) name their switch and port. The DGX SuperPOD H100 RA's 4-SU build has 8 SN2201 "
        "(README 'SuperPOD switch counts').",
    )
    mgmt_switch: bool = Field(
        default=True,
        description="true: the management-rack switch oob-mgmt takes the compute spines, the storage / in-band switches "
        "outside any SU and the nodes outside any SU. false: no oob-mgmt; those take the spare ports of the other "
        "management switches (the free ports above each one's node slots and leaves), from its last access port down, switch "
        "after switch in switch-id order; too few spare ports is an error with the numbers.",
    )
    nodes_per_rack: Annotated[int, Field(ge=1, le=48)] = Field(
        default=4, description="placement rack only: node slots per rack (4 DGX H100 per rack in the SuperPOD RA)."
    )
    uplinks: Annotated[int, Field(ge=1, le=8)] = Field(default=2, description="Uplinks of every management switch to the OOB core.")
    core: Name = Field(default="oob-core", description="Name of the OOB core (site equipment: its port names are not planned).")
    mgmt_offset: Annotated[int, Field(ge=1, le=65535)] = Field(
        default=768,
        description="Management switch N's own address is mgmt_pool[mgmt_offset + N] (fabric.management.mgmt_pool). "
        "N is 0 for oob-mgmt, s for oob-su<s>, 16(s-1)+k for oob-su<s>-<k>, 16(s-1)+r for oob-su<s>-r<r> and 16s for "
        "oob-su<s>-net.",
    )
    access_cable_m: Annotated[int, Field(ge=1, le=100)] = Field(default=3, description="Cable length of BMC and switch-management ports.")
    uplink_cable_m: Annotated[int, Field(ge=1, le=2000)] = Field(default=30, description="Cable length of an uplink to the core.")
    devices: tuple[OobDeviceSpec, ...] = Field(default=(), max_length=4096, description="PDUs and console servers.")
    dhcp_lease_seconds: Annotated[int, Field(ge=60, le=31536000)] = Field(
        default=86400, description="valid-lifetime of the leases the OOB DHCP server (Kea) hands out."
    )
    dhcp_servers: tuple[IPv4Address, ...] = Field(
        default=(),
        max_length=8,
        description="The OOB DHCP servers (Kea) every management switch relays to, adding option 82; in dhcp_subnet, so "
        "Kea sees each request once, relayed. None given: no relay (a warning: the Kea config keys leases by option 82).",
    )
    dhcp_subnet: IPv4Network | None = Field(
        default=None,
        description="The Kea servers' own subnet, apart from the oob plane and routed to it by the OOB core (the plane's "
        "gateway). The relays listen on the device VLAN only and reach Kea through the gateway, so Kea never shares a "
        "broadcast domain with a BMC and sees each DISCOVER once, relayed with option 82. Not given (Kea on the oob "
        "plane itself): a warning, as Kea may then see a request twice, relayed and broadcast directly.",
    )
