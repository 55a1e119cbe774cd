"""The storage / in-band network on the twin: the cables of every plane, host addresses, and nothing configured on the switches.

What ``fabric.plan.storage.build`` plans, at L2/L3, on kernels without bridge VLAN filtering, 802.1Q or VRF devices (this
machine's: each is "Operation not supported" / "Unknown device type"): each switch is a namespace; a host cable is a
veth from the switch port to the node's plane interface (``eth2``, its planned address and MTU); a peerlink or uplink
is one veth per plane VLAN (``swp64s3v101``), standing for the tagged trunk. The switch side is left bare: the switch's
own config (its rendered ``nv set`` lines, booted as its startup revision and changed by the push) builds a bridge per
plane VLAN (``br101``), enslaves the ports and puts the gateway SVIs on it (``fabric.twin.nvue_standin``). Forwarding
stays off in the switch namespaces, so no plane routes to another (on the switches the plan's VRFs do that). Only the
first member of a bundle is cabled and host bonds (``attach: mlag``) are refused: plain bridges run no LACP, and two
members would loop.
"""

from __future__ import annotations

from collections.abc import Callable

from fabric.errors import FabricError
from fabric.plan.storage.types import StorageNetworkPlan
from fabric.plan.types import ClusterPlan
from fabric.twin.oob import PlaneCheck, bmc_device, probe

RunFn = Callable[..., object]
_HOST_KINDS = ("storage", "inband", "appliance")


def storage_devices(plan: ClusterPlan) -> tuple[str, ...]:
    """Every storage / in-band switch of the plan: one twin namespace each."""
    return tuple(s.name for net in plan.storage for s in net.switches)


def storage_hosts(plan: ClusterPlan) -> tuple[str, ...]:
    """The nodes cabled to a storage / in-band network (each needs a twin namespace)."""
    nodes = {n.hostname for n in plan.nodes}
    return tuple(sorted({x.b_device for net in plan.storage for x in net.links if x.kind in _HOST_KINDS and x.b_device in nodes}))


def cable_storage(plan: ClusterPlan, ns: dict[str, str], run: RunFn) -> None:
    """The veths and host addresses of every storage / in-band network, in namespaces the caller created (``ns``: device → name).

    Raises:
        FabricError: a network bonds its host ports (``attach: mlag``), which plain bridges cannot carry loop-free.
    """
    for net in plan.storage:
        _cable_network(plan, net, ns, run)


def _cable_network(plan: ClusterPlan, net: StorageNetworkPlan, ns: dict[str, str], run: RunFn) -> None:
    if any(x.bond for x in net.links if x.kind in _HOST_KINDS):
        msg = f"storage network '{net.name}': the twin cables per-port host attachments only; set attach: per-port to run it on the twin"
        raise FabricError(msg)
    vlans = {seg.plane: seg.vlan for seg in net.segments}
    mtus = {seg.plane: seg.mtu for seg in net.segments}
    addresses = {(n.hostname, i.name): i for n in plan.nodes for i in n.interfaces}
    for host in sorted({x.b_device for x in net.links if x.kind in _HOST_KINDS and x.b_device in ns}):
        # multi-homed hosts answer ARP only on the interface that holds the address, as roles/network_planes sets them
        run("ip", "netns", "exec", ns[host], "sysctl", "-qw", "net.ipv4.conf.all.arp_ignore=1", "net.ipv4.conf.all.arp_announce=2")
    bundled: set[tuple[str, str]] = set()
    for link in net.links:
        a, b = ns[link.a_device], ns.get(link.b_device)
        if b is None:
            continue  # an appliance without a twin namespace
        if link.kind in _HOST_KINDS:
            _veth(a, link.a_port, b, link.b_port, mtu=mtus.get(link.plane, 1500), run=run)
            host = addresses.get((link.b_device, link.b_port))
            if host is not None and host.address:
                run("ip", "-n", b, "addr", "add", host.address, "dev", link.b_port)
        elif (link.a_device, link.b_device) not in bundled:  # peerlink / uplink: the first member, one veth per VLAN
            bundled.add((link.a_device, link.b_device))
            for plane, vlan in sorted(vlans.items()):
                a_port, b_port = f"{link.a_port}v{vlan}", f"{link.b_port}v{vlan}"
                _veth(a, a_port, b, b_port, mtu=mtus[plane], run=run)


def _veth(a_ns: str, a_port: str, b_ns: str, b_port: str, *, mtu: int, run: RunFn) -> None:
    run("ip", "-n", a_ns, "link", "add", a_port, "mtu", str(mtu), "type", "veth", "peer", "name", b_port, "netns", b_ns, "mtu", str(mtu))
    run("ip", "-n", a_ns, "link", "set", a_port, "up")
    run("ip", "-n", b_ns, "link", "set", b_port, "up")


def storage_checks(plan: ClusterPlan, ns: dict[str, str]) -> list[PlaneCheck]:
    """Node → another node over the storage plane and → the in-band gateway: answered; node's storage port → another
    node's in-band address, and a BMC → a node's storage address: no route (the planes stay apart).

    Args:
        plan: the twin's plan; ns: device → namespace of every twin device.
    """
    ports = {
        (n.hostname, i.plane): i
        for n in plan.nodes
        for i in n.interfaces
        if i.address and any(x.b_device == n.hostname and x.b_port == i.name for net in plan.storage for x in net.links)
    }
    hosts = sorted({h for h, plane in ports if plane == "storage"})
    if len(hosts) < 2:
        return []
    first, second = hosts[0], hosts[-1]
    source = ports[first, "storage"]
    probes: list[tuple[str, str, str, str, str | None, bool]] = [
        (first, second, "storage", _ip(ports[second, "storage"].address), None, True),
    ]
    inband = plan.plane("inband")
    if (first, "inband") in ports and inband.gateway:
        probes.append((first, "inband gateway", "inband", inband.gateway, None, True))
    if (second, "inband") in ports:
        probes.append((first, second, "inband", _ip(ports[second, "inband"].address), source.name, False))
    bmc = bmc_device(first)
    if bmc in ns:
        probes.append((bmc, second, "storage", _ip(ports[second, "storage"].address), None, False))
    return [probe(ns[src], src, f"{dst} ({plane})", address, expect=expect, device=device) for src, dst, plane, address, device, expect in probes]


def _ip(interface: str | None) -> str:
    return (interface or "").split("/")[0]
