"""The storage and in-band Ethernet network: the switches that carry the storage and in-band management planes.

The DGX SuperPOD reference architectures carry storage and in-band management on Ethernet switches of their own, apart
from the compute fabric; the GB200 RA names it one physical "Storage and In-band Ethernet Fabric"
(https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-gb200/latest/network-fabrics.html).
A DGX attaches with "a bonded Ethernet interface for in-band management and storage" made of one port of each of its two
ConnectX-7 cards, cabled to a pair of switches (https://docs.nvidia.com/dgx-basepod/deployment-guide-dgx-basepod/latest/network-overview.html),
and the switch pair runs MLAG with a peerlink and VRR gateways on the plane VLANs
(https://docs.nvidia.com/dgx-basepod/deployment-guides/dgx-basepod-a100/latest/switch-configurations.html).
Leaf pairs reach a spine pair over switch-to-switch MLAG bonds, the two-tier L2 design of the Cumulus Linux MLAG guide
(https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-510/Layer-2/Multi-Chassis-Link-Aggregation-MLAG/).
"""

from __future__ import annotations

from ipaddress import IPv4Address
from typing import Annotated, Literal

from pydantic import Field, model_validator

from fabric.model.base import Name, SpecModel
from fabric.model.strings import CatalogKey
from fabric.model.topology import INHERITED_RELEASE, Release

StorageNos = Literal["sonic", "cumulus", "eos", "nxos"]


class EthernetTierSpec(SpecModel):
    """The switch model and NOS of one tier of the storage / in-band network."""

    model: CatalogKey = Field(default="sn5600", description="Switch model from the catalog (fabric/catalog/data/switches).")
    nos: StorageNos = Field(default="cumulus", description="NOS of the switches of this tier.")
    nos_version: Release | None = Field(default=None, description=INHERITED_RELEASE)
    sonic_iccpd: bool = Field(
        default=False,
        description="SONiC only: the switches' image has docker-iccpd, the MCLAG daemon (sonic-buildimage built with "
        "INCLUDE_ICCPD=y). Community images are built without it (rules/config on 202405 and 202411: INCLUDE_ICCPD = n), "
        "and a SONiC storage pair is an MCLAG pair, so a SONiC tier needs true here. docs/switch-references.md.",
    )

    @model_validator(mode="after")
    def _mclag_needs_iccpd(self) -> EthernetTierSpec:
        # sonic-buildimage rules/config (202405, 202411): "# INCLUDE_ICCPD - build docker-iccpd for mclag support" /
        # "INCLUDE_ICCPD = n"; without iccpd the MCLAG_* tables are inert and host bonds see two LACP system IDs.
        if self.nos == "sonic" and not self.sonic_iccpd:
            msg = (
                "a SONiC storage / in-band pair runs MCLAG, which needs docker-iccpd; community SONiC images are built "
                "without it (sonic-buildimage rules/config: INCLUDE_ICCPD = n). Build the image with INCLUDE_ICCPD=y and "
                "set sonic_iccpd: true on this tier, or use another NOS for it"
            )
            raise ValueError(msg)
        if self.sonic_iccpd and self.nos != "sonic":
            msg = f"sonic_iccpd applies to SONiC tiers only; this tier runs {self.nos}: remove sonic_iccpd"
            raise ValueError(msg)
        return self


class ApplianceSpec(SpecModel):
    """A storage appliance (file system or object store head) attached dual-homed to the services leaf pair."""

    name: Name
    ports: Annotated[int, Field(ge=1, le=16)] = Field(default=2, description="Ports, split over the pair (even on a, odd on b).")
    address: IPv4Address = Field(description="The appliance's address on the storage plane.")


class EthernetNetworkSpec(SpecModel):
    """How a storage or in-band network is built: MLAG leaf pairs per scalable unit, a services pair and a spine pair.

    ``topology: collapsed`` puts every node on one MLAG pair (no spines): the small-cluster form of the same design.
    """

    converged: bool = Field(
        default=True,
        description="planes.storage.network only: the in-band plane rides the same switches on its own VLAN (the SuperPOD "
        "way). false: planes.inband.network builds a second network.",
    )
    topology: Literal["leaf-spine", "collapsed"] = "leaf-spine"
    leaf: EthernetTierSpec = Field(default_factory=EthernetTierSpec)
    spine: EthernetTierSpec = Field(default_factory=EthernetTierSpec)
    speed_gbps: Annotated[int, Field(ge=1, le=1600)] = Field(
        default=200, description="Port speed of every switch port (host, peerlink and uplink); the model must run it."
    )
    attach: Literal["mlag", "per-port"] = Field(
        default="mlag",
        description="How nodes attach: mlag = an LACP bond over the two switches of a pair (one port each side; the "
        "network_planes role bonds them on the host, 802.3ad); per-port = each port an access port of its plane's VLAN "
        "with its own address (source routing per port on the host).",
    )
    separation: Literal["vlan", "vrf"] = Field(
        default="vrf", description="vlan: one VLAN per plane. vrf: also one VRF per plane for its gateway, so no route joins them."
    )
    leaf_pairs: Literal["per-su", "packed"] = Field(
        default="per-su",
        description="per-su: leaf_pairs_per_su MLAG leaf pairs in every scalable unit (<net>-su<s>-<k>-a/b). packed: leaf "
        "pairs shared across SUs, as many SU slots on each as its port budget holds ((leaf ports - 2 x uplinks_per_spine - "
        "peerlink_ports) // ports a slot takes per side): slot g = (su-1) x su_size + slot - 1 goes to pair "
        "<net>-leaf<g // slots_per_pair + 1>-a/b, so slots are reserved, adding a node moves no other cable and a node's "
        "bond never spans two pairs (the DGX SuperPOD H100 RA's in-band network, README 'SuperPOD switch counts'). "
        "leaf-spine only.",
    )
    leaf_pairs_per_su: Annotated[int, Field(ge=1, le=8)] = Field(default=1, description="leaf_pairs: per-su only: MLAG leaf pairs per scalable unit.")
    uplinks_per_spine: Annotated[int, Field(ge=1, le=16)] = Field(default=4, description="Cables from every leaf to each spine.")
    peerlink_ports: Annotated[int, Field(ge=1, le=8)] = Field(default=2, description="Members of the MLAG peerlink bond.")
    roce: bool = Field(
        default=False,
        description="Storage traffic is RoCE (GPUDirect Storage, NVMe-oF): the storage ports get the cluster's roce "
        "lossless contract (PFC on its priority, ECN).",
    )
    appliances: tuple[ApplianceSpec, ...] = Field(default=(), max_length=256, description="Storage appliances on the services pair.")
    mgmt_offset: Annotated[int, Field(ge=1, le=65535)] | None = Field(
        default=None,
        description="Default 512 for planes.storage.network, 640 for planes.inband.network. "
        "Switch N's management address is mgmt_pool[mgmt_offset + N]; N is 0/1 for the spines, 2/3 for the services "
        "pair and 2(p+1)/2(p+1)+1 for leaf pair p (p = (su-1)*leaf_pairs_per_su + k; packed: p of <net>-leaf<p>).",
    )
    cable_m: Annotated[int, Field(ge=1, le=2000)] = Field(default=5, description="Cable length of host and peerlink cables.")
    uplink_cable_m: Annotated[int, Field(ge=1, le=2000)] = Field(default=30, description="Cable length of leaf-spine cables.")
