"""Host bonds on the storage / in-band networks: what a node must build so its ports match the switches' LACP bundles.

With ``attach: mlag`` the switch pair bundles a node's ports on a plane into one MLAG port-channel, an access (untagged)
port of the plane's VLAN (``bridge domain br_default access <vlan>`` on Cumulus, untagged ``VLAN_MEMBER`` on SONiC,
``switchport access vlan`` on EOS). The node side is then one 802.3ad bond of exactly those ports, untagged, carrying the
plane's address and MTU: a DGX joins the storage / in-band network with "a bonded Ethernet interface" of one port of each
ConnectX-7 card (https://docs.nvidia.com/dgx-basepod/deployment-guide-dgx-basepod/latest/network-overview.html).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from fabric.plan.storage.types import StorageNetworkPlan
from fabric.plan.types import ClusterPlan, NodePlan


def bond_name(plane: str) -> str:
    """The host bond of a plane (a Linux interface name, at most 15 characters).

    Example:
        >>> bond_name("storage"), bond_name("inband")
        ('bond-storage', 'bond-inband')
    """
    return f"bond-{plane}"


def _bond_members(storage: Sequence[StorageNetworkPlan], node: NodePlan) -> dict[str, list[str]]:
    """Plane → the node's ports the switches bundle on it, by port index (only planes with two or more such ports)."""
    links = [x for net in storage for x in net.links if x.b_device == node.hostname and x.bond and x.mlag_id]
    index = {i.name: i.index for i in node.interfaces if i.kind == "netdev"}
    members: dict[str, list[str]] = {}
    for plane in dict.fromkeys(x.plane for x in links):
        ports = sorted((x.b_port for x in links if x.plane == plane and x.b_port in index), key=index.__getitem__)
        if len(ports) >= 2:
            members[plane] = ports
    return members


def plan_bond_addresses(nodes: Sequence[NodePlan], storage: Sequence[StorageNetworkPlan]) -> tuple[NodePlan, ...]:
    """The nodes with one address per bond: its first member (index 0) keeps the plane address the bond takes, the
    other members carry none (a bond member has no IP configuration of its own).

    Addresses come from (node id, port index), so dropping a member's address moves no other address: nodes without
    bonds are returned unchanged.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> plan = plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml"))
        >>> [(i.name, i.address) for i in plan.nodes[0].interfaces if i.plane == "storage"]
        [('enp170s0f0np0', '10.101.0.16/16'), ('enp41s0f0np0', None)]
    """
    out: list[NodePlan] = []
    for node in nodes:
        silent = {port for ports in _bond_members(storage, node).values() for port in ports[1:]}
        if not silent:
            out.append(node)
            continue
        interfaces = tuple(replace(i, address=None) if i.kind == "netdev" and i.name in silent else i for i in node.interfaces)
        out.append(replace(node, interfaces=interfaces))
    return tuple(out)


def host_bonds(plan: ClusterPlan, node: NodePlan) -> list[dict[str, Any]]:
    """The node's bonds, one per plane the switches bundle: members, address, MTU and VLAN as the switches expect.

    The bond takes the address of its first member (index 0); its members carry no address. ``vlan`` is None: the
    switches' port-channel is an access port of the plane's VLAN, so the host sends untagged frames (``switch_vlan``
    is that VLAN, for reading).

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> plan = plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml"))
        >>> host_bonds(plan, plan.nodes[0])  # doctest: +NORMALIZE_WHITESPACE
        [{'name': 'bond-storage', 'plane': 'storage', 'members': ['enp170s0f0np0', 'enp41s0f0np0'],
          'address': '10.101.0.16/16', 'mtu': 9000, 'vlan': None, 'switch_vlan': 101, 'mlag_id': 1,
          'switches': ['stor-su1-1-a', 'stor-su1-1-b']}]
    """
    links = [x for net in plan.storage for x in net.links if x.b_device == node.hostname and x.bond and x.mlag_id]
    by_name = {i.name: i for i in node.interfaces if i.kind == "netdev"}
    bonds: list[dict[str, Any]] = []
    for plane in sorted({x.plane for x in links}, key=[x.plane for x in links].index):
        mine = [x for x in links if x.plane == plane]
        members = sorted((by_name[x.b_port] for x in mine if x.b_port in by_name), key=lambda i: i.index)
        if len(members) < 2:
            continue
        bonds.append(
            {
                "name": bond_name(plane),
                "plane": plane,
                "members": [i.name for i in members],
                "address": members[0].address,
                "mtu": min(i.mtu for i in members),
                "vlan": None,
                "switch_vlan": mine[0].vlan,
                "mlag_id": mine[0].mlag_id,
                "switches": sorted({x.a_device for x in mine}),
            }
        )
    return bonds


def bonded_ports(bonds: list[dict[str, Any]]) -> dict[str, str]:
    """Member port → its bond's name.

    Example:
        >>> bonded_ports([{"name": "bond-storage", "members": ["a", "b"]}])
        {'a': 'bond-storage', 'b': 'bond-storage'}
    """
    return {m: b["name"] for b in bonds for m in b["members"]}
