"""Pure, stable address allocation. Offsets come from stable ids (node id, switch id, port index), never list positions."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network

from fabric.errors import PlanError

RESERVED_LOW = 16
"""Addresses kept free at the start of every plane for gateways, VIPs and services."""


def _host(pool: IPv4Network, offset: int, what: str, fix: str) -> IPv4Address:
    if offset < 0 or offset >= pool.num_addresses:
        msg = f"{what}: offset {offset} is outside {pool} ({pool.num_addresses} addresses); {fix}"
        raise PlanError(msg)
    return IPv4Address(int(pool.network_address) + offset)


def allocate_plane_address(cidr: IPv4Network, node_id: int, port: int, stride: int, plane: str) -> str:
    """Address of ``port`` of node ``node_id`` on a flat plane, as ``a.b.c.d/len``.

    Example:
        >>> allocate_plane_address(IPv4Network("10.1.0.0/16"), node_id=1, port=0, stride=2, plane="inband")
        '10.1.0.16/16'
    """
    offset = RESERVED_LOW + (node_id - 1) * stride + port
    fix = f"enlarge planes.{plane}.cidr or lower the node ids"
    if offset >= cidr.num_addresses - 1:
        msg = f"planes.{plane}: node id {node_id} port {port} needs offset {offset}, beyond {cidr}; {fix}"
        raise PlanError(msg)
    return f"{_host(cidr, offset, f'planes.{plane}', fix)}/{cidr.prefixlen}"


def allocate_host_link(cidr: IPv4Network, node_id: int, port: int, stride: int) -> tuple[str, str, str]:
    """The /31 of a routed host link: ``(subnet, leaf address, host address)``; the leaf takes the even address.

    Example:
        >>> allocate_host_link(IPv4Network("10.100.0.0/16"), node_id=2, port=1, stride=8)
        ('10.100.0.18/31', '10.100.0.18', '10.100.0.19')
    """
    offset = ((node_id - 1) * stride + port) * 2
    fix = "enlarge planes.compute.cidr or lower planes.compute.max_ports_per_node"
    leaf = _host(cidr, offset + 1, f"planes.compute host link of node {node_id} port {port}", fix) - 1
    return f"{leaf}/31", str(leaf), str(leaf + 1)


def allocate_p2p(pool: IPv4Network, leaf_id: int, uplink: int, stride: int, where: str = "fabric.underlay.p2p_pool") -> tuple[str, str, str]:
    """The /31 of leaf uplink ``uplink``: ``(subnet, spine address, leaf address)``; the spine takes the even address.

    The same scheme numbers a pod spine's uplinks to the super-spines (``leaf_id`` = the spine's id, ``where`` its pool).

    Example:
        >>> allocate_p2p(IPv4Network("10.254.0.0/16"), leaf_id=1, uplink=3, stride=64)
        ('10.254.0.6/31', '10.254.0.6', '10.254.0.7')
    """
    offset = ((leaf_id - 1) * stride + uplink) * 2
    spine = _host(pool, offset + 1, f"{where} link of switch {leaf_id} uplink {uplink}", "enlarge the pool") - 1
    return f"{spine}/31", str(spine), str(spine + 1)


def allocate_loopback(pool: IPv4Network, offset: int, what: str) -> str:
    """A /32 loopback at ``pool[offset]``.

    Example:
        >>> allocate_loopback(IPv4Network("10.255.0.0/16"), 257, "leaf 1")
        '10.255.1.1/32'
    """
    return f"{_host(pool, offset, f'fabric.underlay.loopback_pool ({what})', 'enlarge the pool or lower the offsets')}/32"


def allocate_mgmt(pool: IPv4Network, offset: int, what: str, prefixlen: int) -> str:
    """A switch management address at ``pool[offset]`` with the oob plane's prefix length."""
    address = _host(pool, offset, f"fabric.management.mgmt_pool ({what})", "enlarge the pool or lower mgmt_leaf_offset")
    return f"{address}/{prefixlen}"


def default_mgmt_pool(oob: IPv4Network) -> IPv4Network:
    """The switch management pool when none is given: the oob plane's last /22 (or the whole plane if smaller).

    Example:
        >>> default_mgmt_pool(IPv4Network("10.103.0.0/16"))
        IPv4Network('10.103.252.0/22')
    """
    if oob.prefixlen >= 22:
        return oob
    return IPv4Network((int(oob.broadcast_address) & ~0x3FF, 22))
