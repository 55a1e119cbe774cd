"""Pure, stable address allocation. Offsets come from stable ids (node id, switch id, port index), never list positions."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network
from socket import inet_ntoa

from fabric.errors import PlanError

RESERVED_LOW = 16
"""Addresses kept free at the start of every plane for gateways, VIPs and services."""


def _host(pool: IPv4Network, offset: int, what: str, fix: str) -> IPv4Address:
    return IPv4Address(_host_int(pool, offset, what, fix))


def _host_int(pool: IPv4Network, offset: int, what: str, fix: str) -> int:
    """The address at ``pool[offset]`` as an integer; PlanError when the offset is outside the pool."""
    size = 1 << (32 - pool.prefixlen)
    if offset < 0 or offset >= size:
        msg = f"{what}: offset {offset} is outside {pool} ({size} addresses); {fix}"
        raise PlanError(msg)
    return int(pool.network_address) + offset


def _dotted(address: int) -> str:
    """``a.b.c.d`` of an integer address: the text ``str(IPv4Address(address))`` gives, without building the object
    (the plan of a 32k-GPU fabric formats some 200,000 addresses)."""
    return inet_ntoa(address.to_bytes(4, "big"))


def allocate_plane_address(cidr: IPv4Network, node_id: int, port: int, stride: int, plane: str) -> str:
    """Address of ``port`` of node ``node_id`` on a flat plane, as ``a.b.c.d/len``.

    Example:
        >>> allocate_plane_address(IPv4Network("10.1.0.0/16"), node_id=1, port=0, stride=2, plane="inband")
        '10.1.0.16/16'
    """
    offset = RESERVED_LOW + (node_id - 1) * stride + port
    fix = f"enlarge planes.{plane}.cidr or lower the node ids"
    if offset >= (1 << (32 - cidr.prefixlen)) - 1:
        msg = f"planes.{plane}: node id {node_id} port {port} needs offset {offset}, beyond {cidr}; {fix}"
        raise PlanError(msg)
    return f"{_dotted(_host_int(cidr, offset, f'planes.{plane}', fix))}/{cidr.prefixlen}"


def allocate_host_link(cidr: IPv4Network, node_id: int, port: int, stride: int) -> tuple[str, str, str]:
    """The /31 of a routed host link: ``(subnet, leaf address, host address)``; the leaf takes the even address.

    Example:
        >>> allocate_host_link(IPv4Network("10.100.0.0/16"), node_id=2, port=1, stride=8)
        ('10.100.0.18/31', '10.100.0.18', '10.100.0.19')
    """
    offset = ((node_id - 1) * stride + port) * 2
    if not 0 <= offset + 1 < 1 << (32 - cidr.prefixlen):  # the message is built only for the error (200,000 links at 100k GPUs)
        fix = "enlarge planes.compute.cidr or lower planes.compute.max_ports_per_node"
        _host_int(cidr, offset + 1, f"planes.compute host link of node {node_id} port {port}", fix)  # raises
    leaf = int(cidr.network_address) + offset
    text = _dotted(leaf)
    return f"{text}/31", text, _dotted(leaf + 1)


def allocate_p2p(pool: IPv4Network, leaf_id: int, uplink: int, stride: int, where: str = "fabric.underlay.p2p_pool") -> tuple[str, str, str]:
    """The /31 of leaf uplink ``uplink``: ``(subnet, spine address, leaf address)``; the spine takes the even address.

    The same scheme numbers a pod spine's uplinks to the super-spines (``leaf_id`` = the spine's id, ``where`` its pool).

    Example:
        >>> allocate_p2p(IPv4Network("10.254.0.0/16"), leaf_id=1, uplink=3, stride=64)
        ('10.254.0.6/31', '10.254.0.6', '10.254.0.7')
    """
    offset = ((leaf_id - 1) * stride + uplink) * 2
    if not 0 <= offset + 1 < 1 << (32 - pool.prefixlen):  # the message is built only for the error
        _host_int(pool, offset + 1, f"{where} link of switch {leaf_id} uplink {uplink}", "enlarge the pool")  # raises
    spine = int(pool.network_address) + offset
    text = _dotted(spine)
    return f"{text}/31", text, _dotted(spine + 1)


def allocate_loopback(pool: IPv4Network, offset: int, what: str) -> str:
    """A /32 loopback at ``pool[offset]``.

    Example:
        >>> allocate_loopback(IPv4Network("10.255.0.0/16"), 257, "leaf 1")
        '10.255.1.1/32'
    """
    return f"{_dotted(_host_int(pool, offset, f'fabric.underlay.loopback_pool ({what})', 'enlarge the pool or lower the offsets'))}/32"


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
