"""Shared spines (``fabric.plane_spines: shared``): one spine layer that every plane's leaves uplink to, a VRF per plane.

Each plane is still planned alone (``fabric.plan.compute.planes``); then plane k's spine ``p<k>-spineNN`` and every
other plane's ``spineNN`` become one switch, ``spineNN``, whose ports are plane 1's leaves first, then plane 2's, and so
on. On that switch every port belongs to its leaf's plane's VRF (``Vrf-plane<k>``, :func:`vrf_name`), and BGP runs once
per VRF, so the planes' routing tables stay apart: there is no route leak between the VRFs, and the default VRF carries
no plane's routes (it has no fabric port and no BGP session).

- **ASN**: a shared spine has one ASN, ``underlay.spine_asn``, in every VRF. Each VRF is its own BGP instance, so no
  path ever holds the spine twice (a route never leaves its VRF), and one ASN is what every NOS can run: EOS and NX-OS
  have one ``router bgp`` ASN for all their VRFs (per-VRF ASNs would need ``local-as`` on every neighbour). It is the
  spine layer's single ASN of RFC 7938 section 5.2.1 (all spines share one), which also keeps the leaves from using a
  spine as a transit between two leaves.
- **Router id and loopback per VRF**: plane k's VRF takes the loopback plane k's spine would have in a fabric of
  separate spines (plane k's block of ``underlay.loopback_pool``, the spine's number), so every plane's
  ``FABRIC-OUT`` still advertises only its own blocks; the switch itself has no default-VRF loopback.
- **Port budget**: a shared spine takes every plane's leaves, so the spine count is the fewest dividing each leaf's
  uplinks whose ports take all planes' uplinks (refused, with the reason, where none does).

Refused with the reason: InfiniBand (a switch is in one subnet: it would merge the planes' subnets), three tiers (the
super-spine and pod-spine VRFs are not built), a spine NOS whose renderer gives no VRF per plane (MLNX-OS; FRR, SONiC,
Cumulus, EOS and NX-OS do), and EOS or NX-OS on unnumbered links (their VRF form is checked on /31 links only).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from fabric.catalog.switches import SWITCH_MODELS
from fabric.errors import Finding, InputError
from fabric.model.cluster import ClusterSpec
from fabric.plan.compute.sizing import FabricMember, FabricSizing, size_fabric
from fabric.plan.ports import port_name
from fabric.plan.types import FabricPlan, Link

PATH = ("fabric", "plane_spines")
# The spine NOSes whose renderer gives a shared spine a VRF per plane (each form checked by the NOS's reference:
# FRR's vtysh --dryrun; SONiC's YANG models and FRR's; Cumulus' NVUE OpenAPI schema per release; EOS against pyavd's
# rendering; NX-OS through the cisco.nxos parsers; EOS and NX-OS on numbered links only).
VRF_NOS = frozenset({"frr", "sonic", "cumulus", "eos", "nxos"})
VRF_TABLE_BASE = 1000  # the Linux VRF device's routing table: plane k uses table 1000 + k (any table not main/local/default)


def vrf_name(plane: int) -> str:
    """The VRF of plane ``plane`` on a shared spine: one name on every NOS, so SONiC's rule decides it (sonic-vrf.yang,
    sonic-buildimage src/sonic-yang-models, 202405 and 202411: a VRF's name matches ``Vrf[a-zA-Z0-9_-]+``), and it
    stays a valid Linux interface name (at most 15 characters: FRR's and Cumulus' VRFs are kernel devices).

    Example:
        >>> vrf_name(2)
        'Vrf-plane2'
    """
    return f"Vrf-plane{plane}"


def refusals(spec: ClusterSpec) -> list[Finding]:
    """Why the definition's planes cannot share spines, if they cannot (nothing when they do not share)."""
    fabric = spec.fabric
    assert fabric is not None
    if fabric.plane_spines != "shared":
        return []
    if spec.planes.compute.transport == "infiniband":
        return [
            Finding(
                PATH,
                "InfiniBand planes cannot share spines: a switch belongs to one subnet, so a shared spine would merge the "
                "planes' subnets into one; use plane_spines: separate",
            )
        ]
    findings: list[Finding] = []
    if fabric.super_spine is not None:
        findings.append(
            Finding(
                PATH,
                "shared spines are built on two tiers only: the pod spines' and super-spines' VRFs per plane are not "
                "built yet; use plane_spines: separate, or a two-tier fabric (no super_spine)",
            )
        )
    if fabric.spine.nos not in VRF_NOS:
        findings.append(
            Finding(
                ("fabric", "spine", "nos"),
                f"shared spines need a VRF per plane, and the {fabric.spine.nos} renderer gives a spine none yet; use plane_spines: separate",
            )
        )
    if fabric.spine.nos in ("eos", "nxos") and fabric.underlay.addressing != "p2p-31":
        findings.append(
            Finding(
                ("fabric", "underlay", "addressing"),
                f"a shared {fabric.spine.nos} spine's VRFs are rendered for /31 links only (BGP over IPv6 link-local in a VRF is "
                "not checked against the vendor's reference yet); use addressing: p2p-31, or plane_spines: separate",
            )
        )
    return findings


def widen(spec: ClusterSpec, alone: ClusterSpec, sizing: FabricSizing, members: list[FabricMember]) -> tuple[ClusterSpec, FabricSizing]:
    """One plane's definition and sizing with as many spines as the shared layer needs, and the shared spines' ASN.

    Raises:
        InputError: no spine count dividing a leaf's uplinks has the ports for every plane's leaves.
    """
    fabric = spec.fabric
    assert fabric is not None
    planes, up = fabric.planes, sizing.uplinks_per_leaf
    total = planes * sizing.leaves * up
    fits = [d for d in range(1, up + 1) if up % d == 0 and d * sizing.spine_radix >= total]
    forced = fabric.spines
    if not fits or (forced is not None and forced * sizing.spine_radix < total):
        raise InputError(
            [
                Finding(
                    PATH,
                    f"shared spines of {sizing.spine_radix} ports cannot take the {total} leaf uplinks of {planes} planes "
                    f"({sizing.leaves} leaves x {up} uplinks each) with {forced or up} spines; use plane_spines: separate, "
                    "a higher-radix spine or fewer nodes",
                )
            ]
        )
    plane = alone.fabric
    assert plane is not None
    underlay = plane.underlay.model_copy(update={"spine_asn": fabric.underlay.spine_asn})  # one ASN in every VRF
    wide = alone.model_copy(update={"fabric": plane.model_copy(update={"spines": forced or fits[0], "underlay": underlay})})
    return wide, size_fabric(wide, members)


def share(spec: ClusterSpec, plan: FabricPlan) -> FabricPlan:
    """The merged plan of every plane with each plane's spine ``p<k>-spineNN`` made the one shared ``spineNN``: its
    ports plane by plane, no loopback of its own (each VRF has one, fabric.plan.compute.spine_vrfs), the spine layer's ASN."""
    fabric = spec.fabric
    assert fabric is not None
    tier = next(t for t in plan.tiers if t.tier == "spine")
    per_plane = tier.ports_used_per_switch
    spines = [s for s in plan.spines if s.name.startswith("p1-")]
    model, nos, speed = spines[0].model, spines[0].nos, plan.uplink_speed_gbps
    index = {port_name(model, nos, i, speed): i for i in range(SWITCH_MODELS[model].radix(speed) or 0)}
    shared = {s.name.removeprefix("p1-"): dataclasses.replace(s, name=s.name.removeprefix("p1-"), loopback=None) for s in spines}

    def moved(x: Link) -> Link:
        plane, _, name = x.b_device.partition("-")
        if x.kind != "fabric" or name not in shared:
            return x
        port = port_name(model, nos, (int(plane[1:]) - 1) * per_plane + index[x.b_port], speed)
        return dataclasses.replace(x, b_device=name, b_port=port)

    tiers = tuple(
        dataclasses.replace(t, switches=len(shared), ports_used_per_switch=per_plane * fabric.planes, downlink_gbps=t.downlink_gbps * fabric.planes)
        if t.tier == "spine"
        else t
        for t in plan.tiers
    )
    return dataclasses.replace(plan, spines=tuple(shared.values()), links=tuple(moved(x) for x in plan.links), tiers=tiers)


def planes_of(names: Sequence[str]) -> tuple[int, ...]:
    """The planes of the switches ``names`` (``p<k>-...``), in order, each once.

    Example:
        >>> planes_of(["p1-leaf01", "p2-leaf01", "p1-leaf02"])
        (1, 2)
    """
    found: dict[int, None] = {}
    for name in names:
        if name.startswith("p") and name[1:2].isdigit():
            found[int(name[1])] = None
    return tuple(found)
