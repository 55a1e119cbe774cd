"""The storage and in-band Ethernet networks: MLAG leaf pairs, a spine pair, port budgets, addresses and every cable.

Design (see ``fabric.model.storage`` for the references): every scalable unit gets ``leaf_pairs_per_su`` MLAG leaf
pairs; nodes outside any SU (storage, management) and the storage appliances go to the services pair ``<net>-svc-a/b``;
every leaf has ``uplinks_per_spine`` cables to each switch of the spine pair, bundled into one MLAG bond per pair on both
tiers. The plane gateways (VRR) live on the spine pair (on the one pair when collapsed). ``topology: collapsed`` is a
single pair taking every node.

``leaf_pairs: packed`` shares leaf pairs ``<net>-leaf<p>-a/b`` across SUs instead: SU slots in order (slot ``g`` =
``(su-1) * su_size + slot - 1`` over the cluster) fill pair 1, then pair 2, as many per pair as its host ports hold
(leaf ports less uplinks and peerlink, over the ports a slot takes per side), so a node's bond stays on one pair.

Ports are reserved, not packed, so adding a node never moves another's cable: slot ``k`` of an SU leaf pair takes a block
of ``sum(ceil(max_ports_per_node / 2))`` ports on each side (over the planes the network carries), node port ``i`` of a
plane on side ``a`` when ``i`` is even and ``b`` when odd. The peerlink takes a switch's last ports, the uplinks the ports
before them. Leaf pair ``p`` (1-based over SUs) lands on spine ports ``p * 2 * uplinks_per_spine`` onwards (the services
pair on the first ones).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from ipaddress import IPv4Network

from fabric.catalog.switch_model import SwitchModel
from fabric.catalog.switches import SWITCH_MODELS
from fabric.errors import Finding
from fabric.model.cluster import ClusterSpec
from fabric.model.topology import tier_release
from fabric.plan import addressing
from fabric.plan.ports import MGMT_INTERFACE
from fabric.plan.storage.checks import StorageNet, check_network, networks, ports_per_side, slots_per_pair
from fabric.plan.storage.types import StorageLink, StorageNetworkPlan, StorageSegment, StorageSwitchPlan
from fabric.plan.types import NodePlan

PREFIX = {"storage": "stor", "inband": "inb"}
MGMT_OFFSET = {"storage": 512, "inband": 640}
"""Default management address offsets: the compute fabric takes 1-256 of the pool, the OOB switches 768 onwards."""


@dataclass(frozen=True, slots=True)
class _Host:
    """What one block of a pair takes: a node's (or appliance's) ports on the carried planes."""

    device: str
    ports: tuple[tuple[str, int, str, int], ...]  # (plane, port index on the plane, port name, speed)
    appliance: bool = False


@dataclass(slots=True)
class _Pair:
    location: str
    pair_id: int  # 0 spine / collapsed, 1 services, p + 1 for leaf pair p
    blocks: dict[int, _Host] = field(default_factory=dict[int, _Host])


def build_storage(spec: ClusterSpec, nodes: tuple[NodePlan, ...]) -> tuple[tuple[StorageNetworkPlan, ...], list[Finding]]:
    """The storage / in-band networks the definition asks for, and every problem found (no plan when there is one).

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> plan = plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml"))
        >>> [(n.name, len(n.leaves), len(n.spines)) for n in plan.storage]
        [('storage', 6, 2)]
    """
    nets = networks(spec)
    findings = [f for net in nets for f in check_network(spec, net)]
    if findings:
        return (), findings
    plans: list[StorageNetworkPlan] = []
    for net in nets:
        plan, problems = _build(spec, net, nodes)
        findings.extend(problems)
        if plan is not None:
            plans.append(plan)
    return (tuple(plans), []) if not findings else ((), findings)


def _pairs(spec: ClusterSpec, net: StorageNet, nodes: tuple[NodePlan, ...]) -> dict[str, _Pair]:
    pairs: dict[str, _Pair] = {}
    collapsed = net.spec.topology == "collapsed"
    su_size = spec.fabric.su_size if spec.fabric else 0
    per_pair = -(-su_size // net.spec.leaf_pairs_per_su) if su_size else 1
    packed = net.spec.leaf_pairs == "packed" and not collapsed
    if packed:
        per_pair = slots_per_pair(spec, net)
    sus = max((n.scalable_unit or 0 for n in nodes), default=0)
    svc_next = sus * su_size if collapsed else 0

    def pair(location: str, pair_id: int) -> _Pair:
        return pairs.setdefault(location, _Pair(location, pair_id))

    for appliance in net.spec.appliances:
        names = tuple(("storage", i, f"p{i + 1}", net.spec.speed_gbps) for i in range(appliance.ports))
        pair("pair" if collapsed else "svc", 1).blocks[svc_next] = _Host(appliance.name, names, appliance=True)
        svc_next += 1
    for node in nodes:
        ports = tuple((i.plane, i.index, i.name, i.speed_gbps) for i in node.interfaces if i.plane in net.planes and i.kind == "netdev")
        if not ports:
            continue
        host = _Host(node.hostname, ports)
        if node.scalable_unit is None or node.slot is None:
            pair("pair" if collapsed else "svc", 1).blocks[svc_next] = host
            svc_next += 1
        elif collapsed:
            pair("pair", 1).blocks[(node.scalable_unit - 1) * su_size + node.slot - 1] = host
        elif packed:
            p, block = divmod((node.scalable_unit - 1) * su_size + node.slot - 1, per_pair)
            pair(f"leaf{p + 1}", p + 2).blocks[block] = host
        else:
            k, block = divmod(node.slot - 1, per_pair)
            p = (node.scalable_unit - 1) * net.spec.leaf_pairs_per_su + k + 1
            pair(f"su{node.scalable_unit}-{k + 1}", p + 1).blocks[block] = host
    return pairs


def _build(spec: ClusterSpec, net: StorageNet, nodes: tuple[NodePlan, ...]) -> tuple[StorageNetworkPlan | None, list[Finding]]:
    leaf_model, spine_model = SWITCH_MODELS[net.spec.leaf.model], SWITCH_MODELS[net.spec.spine.model]
    collapsed = net.spec.topology == "collapsed"
    pairs = _pairs(spec, net, nodes)
    if collapsed:
        pairs.setdefault("pair", _Pair("pair", 1))
    spine_pair = None if collapsed else _Pair("spine", 0)
    leaf_pairs = sorted(pairs.values(), key=lambda p: p.pair_id)
    needed = max(p.pair_id for p in leaf_pairs) * 2 * net.spec.uplinks_per_spine + net.spec.peerlink_ports
    radix = spine_model.radix(net.spec.speed_gbps) or 0
    if spine_pair is not None and needed > radix:  # checked first: the leaves' uplinks name spine ports
        msg = (
            f"{PREFIX[net.name]}-spine-a needs {needed} ports at {net.spec.speed_gbps} Gb/s ({len(leaf_pairs)} leaf pairs x 2 leaves x "
            f"{net.spec.uplinks_per_spine} uplinks + {net.spec.peerlink_ports} peerlink) but the {spine_model.name} has {radix}; "
            "lower uplinks_per_spine or pick a spine with more ports"
        )
        return None, [Finding((*net.path, "spine", "model"), msg)]
    findings: list[Finding] = []
    switches: list[StorageSwitchPlan] = []
    links: list[StorageLink] = []
    ratios: list[float] = []
    for pair in leaf_pairs:
        built = _leaf_pair(spec, net, pair, leaf_model)
        if isinstance(built, Finding):
            findings.append(built)
            continue
        switches.extend(built[0])
        links.extend(built[1])
        ratios.extend(built[2])
    if spine_pair is not None:
        switches[:0] = _switches(spec, net, spine_pair, role="spine", used=needed, radix=radix)
        links.extend(_peerlink(net, spine_pair, spine_model, radix))
    if findings:
        return None, findings
    segments = tuple(
        StorageSegment(
            p,
            getattr(spec.planes, p).vlan or 0,
            getattr(spec.planes, p).mtu,
            f"vrf-{p}" if net.spec.separation == "vrf" else None,
            roce=p == "storage" and net.spec.roce,
        )
        for p in net.planes
    )
    over = f"{max(ratios):.2f}:1" if ratios and not collapsed else "n/a"
    return StorageNetworkPlan(
        net.name, net.planes, net.spec.topology, net.spec.attach, net.spec.separation, net.spec.speed_gbps, segments,
        tuple(switches), tuple(links), over, _per_plane(net.planes, links),
    ), []  # fmt: skip


def _per_plane(planes: tuple[str, ...], links: list[StorageLink]) -> tuple[tuple[str, str], ...]:
    """Per plane: its host bandwidth over the uplink bandwidth of the leaf where that ratio is highest (``n/a`` collapsed)."""
    uplink: dict[str, int] = {}
    for x in links:
        if x.kind == "uplink":
            uplink[x.a_device] = uplink.get(x.a_device, 0) + x.speed_gbps
    out: list[tuple[str, str]] = []
    for plane in planes:
        ratios = [sum(x.speed_gbps for x in links if x.a_device == leaf and x.plane == plane and x.kind == plane) / up for leaf, up in uplink.items()]
        out.append((plane, f"{max(ratios):.2f}:1" if ratios else "n/a"))
    return tuple(out)


def _name(net: StorageNet, location: str, side: str) -> str:
    prefix = PREFIX[net.name]
    return f"{prefix}-{side}" if location == "pair" else f"{prefix}-{location}-{side}"


def _leaf_pair(
    spec: ClusterSpec, net: StorageNet, pair: _Pair, model: SwitchModel
) -> Finding | tuple[list[StorageSwitchPlan], list[StorageLink], list[float]]:
    per_side = ports_per_side(spec, net.planes)
    base = {p: sum(per_side[q] for q in net.planes[: net.planes.index(p)]) for p in net.planes}
    slot_size = sum(per_side.values())
    radix = model.radix(net.spec.speed_gbps) or 0
    uplinks = 0 if net.spec.topology == "collapsed" else 2 * net.spec.uplinks_per_spine
    names = {s: _name(net, pair.location, s) for s in "ab"}
    placed: list[tuple[str, int, StorageLink]] = []
    end = 0
    for block, host in sorted(pair.blocks.items()):
        start = max(block * slot_size, end)
        size = -(-len(host.ports) // 2) if host.appliance else slot_size
        for plane, index, port, speed in host.ports:
            offset = index // 2 if host.appliance else base[plane] + index // 2
            count = sum(1 for p, *_ in host.ports if p == plane)
            bonded = count > 1 and net.spec.attach == "mlag"
            mlag = block * len(net.planes) + net.planes.index(plane) + 1 if bonded else None
            side = names["ab"[index % 2]]
            link = StorageLink(
                "inband" if plane == "inband" else "storage", side,
                model.port_name(net.spec.leaf.nos, start + offset, net.spec.speed_gbps), host.device, port,
                min(speed, net.spec.speed_gbps), net.spec.cable_m, plane,
                bond=f"bond{mlag}" if mlag else None, mlag_id=mlag, vlan=getattr(spec.planes, plane).vlan,
            )  # fmt: skip
            placed.append((side, start + offset, link))
        end = start + size
    needed = end + uplinks + net.spec.peerlink_ports
    if needed > radix:
        return Finding(
            (*net.path, "leaf", "model"),
            f"{names['a']} needs {needed} ports at {net.spec.speed_gbps} Gb/s ({end} host, {uplinks} uplink, {net.spec.peerlink_ports} "
            f"peerlink) but the {model.name} has {radix}; raise leaf_pairs_per_su, lower the planes' max_ports_per_node or pick a "
            "leaf with more ports",
        )
    links = [link for _, _, link in sorted(placed, key=lambda t: (t[0], t[1]))]
    switches = _switches(spec, net, pair, role="leaf", used=needed, radix=radix)
    links.extend(_peerlink(net, pair, model, radix))
    ratios: list[float] = []
    if uplinks:
        links.extend(_uplinks(net, pair, model, radix))
        for side in names.values():
            down = sum(x.speed_gbps for x in links if x.a_device == side and x.kind in ("storage", "inband"))
            ratios.append(down / (uplinks * net.spec.speed_gbps))
    return switches, links, ratios


def _switches(spec: ClusterSpec, net: StorageNet, pair: _Pair, *, role: str, used: int, radix: int) -> list[StorageSwitchPlan]:
    tier = net.spec.spine if role == "spine" else net.spec.leaf
    gateway_pair = role == "spine" or net.spec.topology == "collapsed"
    pool = _mgmt_pool(spec)
    out: list[StorageSwitchPlan] = []
    for side_index, side in enumerate("ab"):
        switch_id = (0 if pair.location == "pair" else 2 * pair.pair_id) + side_index
        name = _name(net, pair.location, side)
        gateways = _gateways(spec, net, side_index) if gateway_pair else ()
        address = addressing.allocate_mgmt(pool, (net.spec.mgmt_offset or MGMT_OFFSET[net.name]) + switch_id, name, spec.planes.oob.cidr.prefixlen)
        out.append(
            StorageSwitchPlan(
                name, net.name, "spine" if role == "spine" else "leaf", switch_id, pair.location, side,
                _name(net, pair.location, "ba"[side_index]), tier.model, tier.nos, MGMT_INTERFACE[tier.nos], address, used, radix, gateways,
                tier_release(tier.nos, tier.nos_version, spec.fabric),
            )
        )  # fmt: skip
    return out


def _gateways(spec: ClusterSpec, net: StorageNet, side_index: int) -> tuple[tuple[str, int, str | None, str, str], ...]:
    """VRR SVIs of the gateway pair: the plane's gateway is the shared address, the pair takes the plane's last two."""
    out: list[tuple[str, int, str | None, str, str]] = []
    for plane in net.planes:
        plane_spec = getattr(spec.planes, plane)
        gateway = getattr(plane_spec, "gateway", None)
        if gateway is None:
            continue
        cidr: IPv4Network = plane_spec.cidr
        own = cidr.broadcast_address - 2 + side_index
        vrf = f"vrf-{plane}" if net.spec.separation == "vrf" else None
        out.append((plane, plane_spec.vlan, vrf, f"{own}/{cidr.prefixlen}", str(gateway)))
    return tuple(out)


def _peerlink(net: StorageNet, pair: _Pair, model: SwitchModel, radix: int) -> list[StorageLink]:
    nos = net.spec.spine.nos if pair.location == "spine" else net.spec.leaf.nos
    a, b = _name(net, pair.location, "a"), _name(net, pair.location, "b")
    ports = [model.port_name(nos, radix - net.spec.peerlink_ports + k, net.spec.speed_gbps) for k in range(net.spec.peerlink_ports)]
    return [StorageLink("peerlink", a, p, b, p, net.spec.speed_gbps, net.spec.cable_m, net.name, bond="peerlink", b_bond="peerlink") for p in ports]


def _uplinks(net: StorageNet, pair: _Pair, model: SwitchModel, radix: int) -> list[StorageLink]:
    u = net.spec.uplinks_per_spine
    spine_model = SWITCH_MODELS[net.spec.spine.model]
    first = radix - net.spec.peerlink_ports - 2 * u
    out: list[StorageLink] = []
    for side_index, side in enumerate("ab"):
        for spine_index, spine in enumerate("ab"):
            for k in range(u):
                leaf_port = model.port_name(net.spec.leaf.nos, first + spine_index * u + k, net.spec.speed_gbps)
                spine_port = spine_model.port_name(net.spec.spine.nos, (pair.pair_id - 1) * 2 * u + side_index * u + k, net.spec.speed_gbps)
                out.append(
                    StorageLink(
                        "uplink", _name(net, pair.location, side), leaf_port, _name(net, "spine", spine), spine_port,
                        net.spec.speed_gbps, net.spec.uplink_cable_m, net.name,
                        bond="uplink", mlag_id=UPLINK_MLAG_ID, b_bond=f"down{pair.pair_id}",
                    )
                )  # fmt: skip
    return out


UPLINK_MLAG_ID = 65535
"""MLAG id of a leaf pair's bond to the spines (host bonds count up from 1; a spine's bond to leaf pair p has id p)."""


def _mgmt_pool(spec: ClusterSpec) -> IPv4Network:
    pool = spec.fabric.management.mgmt_pool if spec.fabric else None
    return pool or addressing.default_mgmt_pool(spec.planes.oob.cidr)
