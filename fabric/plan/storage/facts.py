"""Per-switch facts of the storage / in-band networks: the only code that looks across their devices (peer, spines).

A renderer sees one ``StorageSwitchFacts`` and nothing else: its ports, its bonds (host LAGs, the peerlink, the bond to
the other tier) with their VLANs and MTUs, its gateway SVIs and its MLAG peer.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabric.catalog.switches import SWITCH_MODELS
from fabric.model.qos import RoceSpec
from fabric.plan.buffers import resolved_roce, switch_buffers
from fabric.plan.storage.types import StorageLink, StorageNetworkPlan, StorageSegment, StorageSwitchPlan
from fabric.plan.types import ClusterPlan

MLAG_MAC_BASE = 0x443839FF0000
"""MLAG system MACs come from the range Cumulus reserves for them, 44:38:39:ff:00:00-44:38:39:ff:ff:ff (Cumulus Linux MLAG
guide, "MLAG system MAC"); pair N of a network gets base + 256 * network index + N, the same on both switches."""
SONIC_PEERLINK, SONIC_UPLINK, SONIC_DOWN_BASE = 9999, 9998, 9000
"""SONiC names a LAG ``PortChannel<1-4 digits>`` (sonic-portchannel.yang): a host bond keeps its number, the peerlink is
PortChannel9999, a leaf's bond to the spines PortChannel9998 and a spine's bond to leaf pair p PortChannel(9000 + p)."""


EOS_PEERLINK, EOS_UPLINK, EOS_DOWN_BASE = 2000, 1999, 1000
"""EOS names a LAG ``Port-Channel<N>`` (1-2000 on the 7060X): a host bond keeps its number (below 1000), the peerlink is
Port-Channel2000, a leaf's bond to the spines Port-Channel1999 and a spine's bond to leaf pair p Port-Channel(1000 + p).
NX-OS numbers the same way, ``port-channel<N>`` (Batfish CiscoNxos ``channel_id`` 1-4096)."""


def bond_name(nos: str, bond: str) -> str:
    """The name a NOS gives the plan's bond (``bond7``, ``peerlink``, ``uplink``, ``down2``).

    Example:
        >>> bond_name("sonic", "bond7"), bond_name("sonic", "down2"), bond_name("cumulus", "down2"), bond_name("eos", "peerlink")
        ('PortChannel7', 'PortChannel9002', 'down2', 'Port-Channel2000')
    """
    if nos in ("eos", "nxos"):
        numbers = {"peerlink": EOS_PEERLINK, "uplink": EOS_UPLINK}
        number = numbers.get(bond) or (EOS_DOWN_BASE + int(bond[4:]) if bond.startswith("down") else int(bond.removeprefix("bond")))
        return f"{'Port-Channel' if nos == 'eos' else 'port-channel'}{number}"
    if nos != "sonic":
        return bond
    if bond == "peerlink":
        return f"PortChannel{SONIC_PEERLINK}"
    if bond == "uplink":
        return f"PortChannel{SONIC_UPLINK}"
    if bond.startswith("down"):
        return f"PortChannel{SONIC_DOWN_BASE + int(bond.removeprefix('down'))}"
    return f"PortChannel{bond.removeprefix('bond')}"


def _mlag_id(nos: str, bond: str, planned: int | None) -> int | None:
    """SONiC has no MLAG id and EOS / NX-OS give a port-channel the MLAG / vPC id of its number, so the number stands for the id."""
    if nos not in ("sonic", "eos", "nxos") or planned is None:
        return planned
    return int(bond_name(nos, bond).removeprefix("PortChannel").removeprefix("Port-Channel").removeprefix("port-channel"))


@dataclass(frozen=True, slots=True)
class StoragePort:
    """A cabled port of the switch. ``bond``: the LAG it is a member of; ``vlan``: its access VLAN when it is not in one.

    ``speed_gbps`` is the speed of the cable it ends (the plan's link speed: the NIC's speed, capped at the network's),
    so a 25G in-band NIC meets a 25G switch port; ``mode_gbps`` is the speed of the cage's breakout mode the port is one
    of (the network's ``speed_gbps``), which names the port and picks the cage's breakout and the SONiC SKU.
    """

    name: str
    description: str
    speed_gbps: int
    mtu: int
    bond: str | None
    vlan: int | None
    lossless: bool
    cable_m: int
    mode_gbps: int = 0


@dataclass(frozen=True, slots=True)
class StorageBond:
    """A LAG: a host bond (access VLAN), the peerlink, or the bond to the other tier (trunk of every plane VLAN)."""

    name: str
    kind: str
    members: tuple[str, ...]
    mlag_id: int | None
    vlan: int | None
    trunk: tuple[int, ...]
    mtu: int
    description: str
    lossless: bool


@dataclass(frozen=True, slots=True)
class StorageSwitchFacts:
    """Everything one storage / in-band switch's config is rendered from."""

    cluster: str
    switch: StorageSwitchPlan
    nos_version: str
    segments: tuple[StorageSegment, ...]
    ports: tuple[StoragePort, ...]
    bonds: tuple[StorageBond, ...]
    peer_mgmt_address: str
    mlag_mac: str
    roce: RoceSpec | None
    mgmt_gateway: str | None = None
    """The oob plane's gateway, for the management interface's default route."""
    breakouts: tuple[tuple[str, int], ...] = ()
    """(cage port name at the native speed, ports it splits into) of every cage a cabled port splits."""

    @property
    def vlans(self) -> tuple[int, ...]:
        """The plane VLANs, in plane order."""
        return tuple(s.vlan for s in self.segments)


def build_storage_facts(plan: ClusterPlan) -> tuple[StorageSwitchFacts, ...]:
    """Facts of every storage / in-band switch, network by network, in switch order.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> facts = build_storage_facts(plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml")))
        >>> [(f.switch.name, len(f.bonds)) for f in facts][:3]
        [('stor-spine-a', 4), ('stor-spine-b', 4), ('stor-svc-a', 6)]
    """
    out: list[StorageSwitchFacts] = []
    for index, net in enumerate(plan.storage):
        mgmt = {s.name: s.mgmt_address.split("/")[0] for s in net.switches}
        out.extend(_facts(plan, net, index, switch, mgmt[switch.peer]) for switch in net.switches)
    return tuple(out)


def _port_class(net: StorageNetworkPlan, link: StorageLink) -> tuple[int, bool]:
    """(MTU, lossless) of a switch port on ``link``: a host port takes its segment's, a switch-to-switch trunk the
    largest MTU and is lossless when any segment runs RoCE."""
    mtu = {s.plane: s.mtu for s in net.segments}
    lossless = {s.plane for s in net.segments if s.roce}
    if link.kind in ("storage", "inband"):
        return mtu[link.plane], link.plane in lossless
    return max(mtu.values()), bool(lossless)


def lossless_ports(net: StorageNetworkPlan, name: str) -> list[tuple[int, int, int]]:
    """(speed Gb/s, cable m, MTU B) of every lossless port of storage switch ``name``: the input of its buffers
    (``fabric.plan.buffers.switch_buffers``), as plan.json and the report show them."""
    found: list[tuple[int, int, int]] = []
    for link, _, _, _ in _ends(net, name):
        port_mtu, is_lossless = _port_class(net, link)
        if is_lossless:
            found.append((link.speed_gbps, link.cable_m, port_mtu))
    return found


def _facts(plan: ClusterPlan, net: StorageNetworkPlan, index: int, switch: StorageSwitchPlan, peer_mgmt: str) -> StorageSwitchFacts:
    lossless = {s.plane for s in net.segments if s.roce}
    ports: list[StoragePort] = []
    members: dict[str, list[str]] = {}
    bonds: dict[str, StorageBond] = {}
    nos = switch.nos
    for link, port, far, plan_bond in _ends(net, switch.name):
        bond = bond_name(nos, plan_bond) if plan_bond is not None else None
        host = link.kind in ("storage", "inband")
        port_mtu, is_lossless = _port_class(net, link)
        ports.append(
            StoragePort(
                port, f"{far} {link.plane}" if host else f"{far} {link.kind}", link.speed_gbps, port_mtu, bond,
                link.vlan if host and bond is None else None, is_lossless, link.cable_m, net.speed_gbps,
            )
        )  # fmt: skip
        if bond is None:
            continue
        members.setdefault(bond, []).append(port)
        if bond not in bonds:
            kind = "host" if host else link.kind
            planned = link.mlag_id if link.a_device == switch.name or link.kind == "peerlink" else int(str(plan_bond).removeprefix("down"))
            mlag = _mlag_id(nos, str(plan_bond), planned)
            description = f"{link.b_device} {link.plane}" if host else (f"{far} {link.kind}" if kind != "uplink" else "uplink bond")
            bonds[bond] = StorageBond(
                bond, kind, (), None if kind == "peerlink" else mlag, link.vlan if host else None,
                () if host or kind == "peerlink" else tuple(s.vlan for s in net.segments), port_mtu, description, is_lossless,
            )  # fmt: skip
    built = tuple(
        StorageBond(b.name, b.kind, tuple(members[b.name]), b.mlag_id, b.vlan, b.trunk, b.mtu, b.description, b.lossless)
        for b in sorted(bonds.values(), key=_bond_order)
    )
    pair_number = switch.switch_id // 2
    mac = MLAG_MAC_BASE + 256 * index + pair_number
    return StorageSwitchFacts(
        plan.name, switch, switch.nos_version, net.segments, tuple(ports), built, peer_mgmt,
        ":".join(f"{(mac >> s) & 0xFF:02x}" for s in range(40, -8, -8)), _roce(plan, switch.name, ports) if lossless else None,
        plan.plane("oob").gateway, _breakouts(switch, net.speed_gbps, {p.name for p in ports}),
    )  # fmt: skip


def _roce(plan: ClusterPlan, name: str, ports: list[StoragePort]) -> RoceSpec:
    """The contract this storage switch renders: ECN thresholds derived from its own lossless ports (fabric.plan.buffers),
    the plan's (plan.json ``buffers``) where it has them."""
    lossless = [(p.speed_gbps, p.cable_m, p.mtu) for p in ports if p.lossless]
    return resolved_roce(plan.roce, plan.buffers_of(name) or switch_buffers(name, plan.roce.ecn, lossless))


def _breakouts(switch: StorageSwitchPlan, speed: int, used: set[str]) -> tuple[tuple[str, int], ...]:
    """Cages split into ``fanout`` ports because the network runs below the model's native speed (every port at ``speed``)."""
    model = SWITCH_MODELS[switch.model]
    fanout = model.fanout(speed) or 1
    if speed == model.speed_gbps:
        return ()
    cages = sorted({i // fanout for i in range(switch.ports_total) if model.port_name(switch.nos, i, speed) in used})
    return tuple((model.port_name(switch.nos, c * model.ports_per_cage, model.speed_gbps), fanout) for c in cages)


def _ends(net: StorageNetworkPlan, name: str) -> list[tuple[StorageLink, str, str, str | None]]:
    """(link, own port, far device, own bond) of every cable that ends on switch ``name`` (as ``a``, or ``b`` of a switch cable)."""
    ends: list[tuple[StorageLink, str, str, str | None]] = []
    for link in net.links:
        if link.a_device == name:
            ends.append((link, link.a_port, link.b_device, link.bond))
        elif link.b_device == name and link.kind in ("peerlink", "uplink"):
            ends.append((link, link.b_port, link.a_device, link.b_bond))
    return ends


def _bond_order(bond: StorageBond) -> tuple[int, int, str]:
    rank = {"peerlink": 0, "uplink": 1, "down": 1, "host": 2}
    return rank.get(bond.kind, 1), bond.mlag_id or 0, bond.name
