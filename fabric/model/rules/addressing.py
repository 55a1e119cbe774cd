"""Address rules: pools that do not overlap one another or the clouds' reserved ranges, explicit addresses inside their pool."""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import IPv4Network

from fabric.errors import Finding, format_path
from fabric.model.cluster import ClusterSpec
from fabric.model.planes import PLANE_NAMES
from fabric.model.topology import FabricSpec

AZURE_RDMA_RESERVED = IPv4Network("172.16.0.0/16")


def _fabric_pools(fabric: FabricSpec) -> list[tuple[tuple[str | int, ...], IPv4Network]]:
    """The fabric's address pools with their paths: loopbacks and, on numbered underlays, the /31 pools of each tier."""
    underlay = fabric.underlay
    pools: list[tuple[tuple[str | int, ...], IPv4Network]] = [(("fabric", "underlay", "loopback_pool"), underlay.loopback_pool)]
    if underlay.addressing == "p2p-31":
        pools.append((("fabric", "underlay", "p2p_pool"), underlay.p2p_pool))
        if fabric.super_spine is not None:
            pools.append((("fabric", "super_spine", "p2p_pool"), fabric.super_spine.p2p_pool))
    return pools


def check_cidrs(spec: ClusterSpec) -> Iterator[Finding]:
    """Planes and underlay pools never overlap; Azure VNets stay clear of 172.16.0.0/16."""
    blocks: list[tuple[tuple[str | int, ...], IPv4Network]] = []
    for name in PLANE_NAMES:
        cidr = getattr(spec.planes, name).cidr
        if cidr is not None:
            blocks.append((("planes", name, "cidr"), cidr))
    if spec.fabric is not None:
        blocks.extend(_fabric_pools(spec.fabric))
    for i, (path_a, a) in enumerate(blocks):
        for path_b, b in blocks[i + 1 :]:
            if a.overlaps(b):
                yield Finding(path_b, f"{b} overlaps {a} ({format_path(path_a)}); every plane and pool needs its own block")
    if spec.target == "azure":
        for path, block in blocks:
            if block.overlaps(AZURE_RDMA_RESERVED):
                yield Finding(path, f"{block} overlaps 172.16.0.0/16, which Azure reserves for its InfiniBand/RDMA network; move it")
    if spec.fabric is not None and spec.fabric.management.mgmt_pool is not None:
        pool = spec.fabric.management.mgmt_pool
        if not pool.subnet_of(spec.planes.oob.cidr):
            yield Finding(
                ("fabric", "management", "mgmt_pool"),
                f"{pool} is not inside the oob plane {spec.planes.oob.cidr}; switch management lives on the oob plane",
            )


def check_explicit_addresses(spec: ClusterSpec) -> Iterator[Finding]:
    """Explicit addresses name real hosts, sit inside their plane and are used once."""
    used: dict[tuple[str, str], tuple[str | int, ...]] = {}
    for gi, group in enumerate(spec.nodes):
        names = set(group.hostnames())
        for host, planes in sorted(group.addresses.items()):
            path = ("nodes", gi, "addresses", host)
            if host not in names:
                yield Finding(path, f"'{host}' is not a hostname of group '{group.group}'; use one of its hostnames")
            for plane, address in sorted(planes.items()):
                cidr = getattr(spec.planes, plane).cidr
                if cidr is not None and address not in cidr:
                    yield Finding((*path, plane), f"{address} is outside planes.{plane}.cidr {cidr}; pick an address inside it")
                key = (plane, str(address))
                if key in used:
                    yield Finding((*path, plane), f"{address} is already assigned at {format_path(used[key])}; addresses must be unique")
                used.setdefault(key, (*path, plane))
