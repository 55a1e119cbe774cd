"""The out-of-band network: management switches, their port budget, addresses and every OOB cable.

Placement follows the SuperPOD way of building a separate OOB fabric per scalable unit or per rack (see
``fabric.model.oob``). Ports are reserved, not packed, so that adding a node never moves another's cable:

- ``placement: su``: switch ``oob-su<s>`` takes node slot ``k`` of SU ``s`` on access port ``k`` and the SU's leaves after
  the ``su_size`` slots (leaf ``j`` of the SU, in switch-id order, on port ``su_size + j``).
- ``placement: rack``: switch ``oob-su<s>-r<r>`` takes the ``nodes_per_rack`` slots of rack ``r``; ``oob-su<s>-net`` the
  SU's leaves.
- ``switches_per_su: N`` (placement su) splits the SU switch into ``oob-su<s>-<k>``: switch ``k`` takes a block of
  ``q = ceil(su_size / N)`` slots on ports 1 to ``q``, the SU's leaves go round the N switches after them.
- ``oob-mgmt`` (the management rack) takes the spines, then leaves without an SU, then nodes outside any SU (storage,
  management) in node-id order: only this switch's ports move when such a node is added. ``mgmt_switch: false`` puts
  them on the other switches' spare ports instead, from the last access port down, switch after switch.

Every switch has ``uplinks`` cables to the OOB core on its dedicated uplink cages where the model has them (SN2201:
4 x 100G QSFP28, SONiC ``other_ports`` etp49-etp52, Cumulus ``swp49``-``swp52``), else on its last access ports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from ipaddress import IPv4Network

from fabric.catalog.switch_model import SwitchModel
from fabric.catalog.switches import SWITCH_MODELS
from fabric.errors import Finding
from fabric.model.cluster import ClusterSpec
from fabric.model.oob import DEFAULT_VLAN, MAX_RACKS_PER_SU, OobNetworkSpec
from fabric.model.topology import tier_release, unsupported_release
from fabric.plan import addressing
from fabric.plan.oob.types import OobCableKind, OobLink, OobPlan, OobSwitchPlan
from fabric.plan.ports import MGMT_INTERFACE
from fabric.plan.storage.types import StorageNetworkPlan
from fabric.plan.types import FabricPlan, NodePlan

_PATH = ("planes", "oob", "network")
_IDS_PER_SU = MAX_RACKS_PER_SU + 1


@dataclass(frozen=True, slots=True)
class _Endpoint:
    kind: OobCableKind
    device: str
    port: str
    address: str | None


@dataclass(slots=True)
class _Group:
    location: str
    switch_id: int
    ports: dict[int, _Endpoint] = field(default_factory=dict[int, _Endpoint])
    reserved: int = 0  # slots kept for nodes that are not there (yet)


def build_oob(
    spec: ClusterSpec, nodes: tuple[NodePlan, ...], fabric: FabricPlan | None, storage: tuple[StorageNetworkPlan, ...] = ()
) -> tuple[OobPlan | None, list[Finding]]:
    """The OOB plan, or None without ``planes.oob.network``; and every problem found (the plan is None if there is one).

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> plan = plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml"))
        >>> [(s.name, s.ports_used) for s in plan.oob.switches]
        [('oob-mgmt', 14), ('oob-su1', 42), ('oob-su2', 42)]
    """
    net = spec.planes.oob.network
    if net is None:
        return None, []
    findings = _check_definition(spec, net)
    if findings:
        return None, findings
    model = SWITCH_MODELS[net.model]
    uplink_ports = _uplink_ports(model, net)
    access_total = model.radix(model.speed_gbps) or 0
    if len(uplink_ports) < net.uplinks:  # no dedicated uplink cages: the last access ports carry the uplinks
        access_total -= net.uplinks
        uplink_ports = tuple(model.port_name(net.nos, access_total + k, model.speed_gbps) for k in range(net.uplinks))
    groups, mgmt = _groups(spec, net, nodes, fabric, storage)
    findings.extend(_place_devices(spec, net, groups))
    findings.extend(_spill(net, groups, mgmt, access_total))
    switches: list[OobSwitchPlan] = []
    links: list[OobLink] = []
    mgmt_pool = _mgmt_pool(spec)
    for group in sorted(groups.values(), key=lambda g: g.switch_id):
        name = f"oob-{group.location}"
        used = max(group.ports, default=0)
        if used > access_total:
            findings.append(_over_budget(net, group, name, used, access_total))
            continue
        address = addressing.allocate_mgmt(mgmt_pool, net.mgmt_offset + group.switch_id, name, spec.planes.oob.cidr.prefixlen)
        switches.append(
            OobSwitchPlan(
                name,
                group.switch_id,
                group.location,
                net.model,
                net.nos,
                MGMT_INTERFACE[net.nos],
                address,
                used,
                access_total,
                net.uplinks,
                tier_release(net.nos, net.nos_version, spec.fabric),
            )
        )
        for index, end in sorted(group.ports.items()):
            port = model.port_name(net.nos, index - 1, model.speed_gbps)
            links.append(OobLink(end.kind, name, port, end.device, end.port, model.speed_gbps, net.access_cable_m, b_address=end.address))
        uplink_speed = _uplink_speed(model)
        links.extend(OobLink("uplink", name, port, net.core, "", uplink_speed, net.uplink_cable_m) for port in uplink_ports[: net.uplinks])
    if findings:
        return None, findings
    vlan = spec.planes.oob.vlan or DEFAULT_VLAN
    servers = tuple(str(a) for a in net.dhcp_servers)
    subnet = str(net.dhcp_subnet) if net.dhcp_subnet else None
    plan = OobPlan(net.placement, net.core, net.dhcp_lease_seconds, tuple(switches), tuple(links), vlan, servers, subnet)
    return plan, _relay_warnings(spec, net)


def _relay_warnings(spec: ClusterSpec, net: OobNetworkSpec) -> list[Finding]:
    plane = spec.planes.oob.cidr
    on_plane = [i for i, server in enumerate(net.dhcp_servers) if server in plane]
    if on_plane:
        msg = (
            f"the Kea server {net.dhcp_servers[on_plane[0]]} sits on the oob plane {plane}, the BMCs' broadcast domain: it may "
            "see each DHCPDISCOVER twice, relayed with option 82 and broadcast directly without it; give Kea its own subnet "
            "routed by the OOB core, e.g. dhcp_subnet: 10.104.0.0/24 with dhcp_servers: [10.104.0.10]"
        )
        return [Finding((*_PATH, "dhcp_servers", on_plane[0]), msg, severity="warning")]
    if net.dhcp_servers:
        return []
    msg = (
        "no dhcp_servers: the management switches relay no DHCP, so no option 82 reaches the Kea config (it keys every "
        "lease by switch and port) and no BMC gets its address; name the Kea server(s), e.g. dhcp_servers: [10.103.0.10]"
    )
    return [Finding((*_PATH, "dhcp_servers"), msg, severity="warning")]


def _dhcp_subnet_findings(spec: ClusterSpec, net: OobNetworkSpec) -> list[Finding]:
    """Kea is on the oob plane (the legacy layout, warned about) or in ``dhcp_subnet``, which no plane overlaps."""
    plane, subnet = spec.planes.oob.cidr, net.dhcp_subnet
    problems: list[Finding] = []
    for i, server in enumerate(net.dhcp_servers):
        if server not in plane and (subnet is None or server not in subnet):
            where = f"dhcp_subnet {subnet}" if subnet else "no dhcp_subnet"
            msg = f"{server} is neither on the oob plane {plane} nor in {where}; put the Kea servers in dhcp_subnet (their own, routed subnet)"
            problems.append(Finding((*_PATH, "dhcp_servers", i), msg))
    if subnet is not None:
        p = spec.planes
        for name, cidr in (("compute", p.compute.cidr), ("storage", p.storage.cidr), ("inband", p.inband.cidr), ("oob", p.oob.cidr)):
            if cidr is not None and subnet.overlaps(cidr):  # pyright: ignore[reportUnnecessaryComparison] - a cloud plane may have none
                msg = f"dhcp_subnet {subnet} overlaps the {name} plane {cidr}; Kea's subnet must be apart from every plane"
                problems.append(Finding((*_PATH, "dhcp_subnet"), msg))
    return problems


def _check_definition(spec: ClusterSpec, net: OobNetworkSpec) -> list[Finding]:
    if spec.target != "onprem":
        return [Finding(_PATH, f"an OOB network is built on-prem only, not on {spec.target}; remove planes.oob.network")]
    model = SWITCH_MODELS.get(net.model)
    if model is None:
        return [
            Finding((*_PATH, "model"), f"switch model '{net.model}' is not in the catalog; pick one of fabric/catalog/data/switches (e.g. sn2201)")
        ]
    problems: list[Finding] = []
    problems.extend(_dhcp_subnet_findings(spec, net))
    if net.nos == "nxos" and net.dhcp_servers:
        problems.append(
            Finding(
                (*_PATH, "dhcp_servers"),
                "an NX-OS relay puts option 82 in a binary ifindex format by default (Cisco Nexus 9000 NX-OS Security "
                "Configuration Guide 9.x, DHCP Relay Agent), which the OOB Kea classes cannot key a port by; "
                "run cumulus, sonic or eos on the management switches, or leave dhcp_servers empty",
            )
        )
    if model.link_layer != "ethernet":
        problems.append(Finding((*_PATH, "model"), f"'{net.model}' is not an Ethernet switch; pick an Ethernet management switch such as sn2201"))
    if net.nos not in model.nos:
        problems.append(Finding((*_PATH, "nos"), f"'{net.model}' does not run {net.nos}; it runs {', '.join(sorted(model.nos))}"))
    problems.extend(unsupported_release((*_PATH, "nos_version"), net.nos, net.nos_version))
    if net.placement == "rack" and net.switches_per_su > 1:
        msg = "switches_per_su splits the SU switch of placement: su; placement: rack has a switch per rack already, remove switches_per_su"
        problems.append(Finding((*_PATH, "switches_per_su"), msg))
    su_size = spec.fabric.su_size if spec.fabric else 0
    racks = -(-su_size // net.nodes_per_rack)
    if net.placement == "rack" and racks > MAX_RACKS_PER_SU:
        problems.append(
            Finding(
                (*_PATH, "nodes_per_rack"),
                f"{su_size} slots per SU at {net.nodes_per_rack} per rack make {racks} racks; at most {MAX_RACKS_PER_SU} are supported, "
                f"raise nodes_per_rack to {-(-su_size // MAX_RACKS_PER_SU)} or use placement: su",
            )
        )
    return problems


def _groups(
    spec: ClusterSpec, net: OobNetworkSpec, nodes: tuple[NodePlan, ...], fabric: FabricPlan | None, storage: tuple[StorageNetworkPlan, ...]
) -> tuple[dict[str, _Group], list[_Endpoint]]:
    """The management switches with their slots and leaves, and the management rack's endpoints (in placement order)."""
    groups: dict[str, _Group] = {}
    su_size = spec.fabric.su_size if spec.fabric else 0
    n = net.switches_per_su
    per = -(-su_size // n)

    def group(location: str, switch_id: int, slots: int) -> _Group:
        return groups.setdefault(location, _Group(location, switch_id, reserved=slots))

    def su_switch(su: int, k: int) -> _Group:
        if n == 1:
            return group(f"su{su}", su, per)
        return group(f"su{su}-{k + 1}", _IDS_PER_SU * (su - 1) + k + 1, max(0, min(per, su_size - k * per)))

    mgmt: list[_Endpoint] = []
    taken: dict[int, int] = {}  # SU -> switches of the SU placed so far
    for end, su in _switch_ports(fabric, storage):  # an SU's switches after its node slots, in this order
        if su is None:
            mgmt.append(end)
            continue
        j = taken[su] = taken.get(su, -1) + 1
        if net.placement == "su":
            su_switch(su, j % n).ports[per + j // n + 1] = end
        else:
            group(f"su{su}-net", _IDS_PER_SU * su, 0).ports[j + 1] = end
    for node in nodes:
        bmc = next((i for i in node.interfaces if i.kind == "bmc"), None)
        if bmc is None:
            continue
        end = _Endpoint("bmc", node.hostname, bmc.name, bmc.address)
        if node.scalable_unit is None or node.slot is None:
            mgmt.append(end)
        elif net.placement == "su":
            k, port = divmod(node.slot - 1, per)
            su_switch(node.scalable_unit, k).ports[port + 1] = end
        else:
            rack, port = divmod(node.slot - 1, net.nodes_per_rack)
            location = f"su{node.scalable_unit}-r{rack + 1}"
            group(location, _IDS_PER_SU * (node.scalable_unit - 1) + rack + 1, net.nodes_per_rack).ports[port + 1] = end
    if net.mgmt_switch and mgmt:
        group("mgmt", 0, 0).ports.update({i + 1: end for i, end in enumerate(mgmt)})
        return groups, []
    return groups, mgmt


def _spill(net: OobNetworkSpec, groups: dict[str, _Group], ends: list[_Endpoint], access_total: int) -> list[Finding]:
    """``mgmt_switch: false``: the management rack's endpoints on the other switches' spare ports, top port down.

    A switch's spare ports are the free ports above its node slots and leaves (devices keep theirs); they are taken from its last
    access port down, switch after switch in switch-id order, so an endpoint appended to the management rack moves no
    other cable.
    """
    if not ends:
        return []
    spare: list[tuple[_Group, int]] = []
    for g in sorted(groups.values(), key=lambda g: g.switch_id):
        floor = max([g.reserved, *(p for p, e in g.ports.items() if e.kind != "device")])
        spare.extend((g, port) for port in range(access_total, floor, -1) if port not in g.ports)
    if len(spare) < len(ends):
        bmcs = sum(1 for e in ends if e.kind == "bmc")
        msg = (
            f"mgmt_switch: false puts the management rack's {len(ends)} ports ({len(ends) - bmcs} switch-management, {bmcs} BMC) on "
            f"the other management switches' spare ports, but they have {len(spare)}; set mgmt_switch: true"
            + (", raise switches_per_su" if net.placement == "su" else "")
            + " or pick a management switch with more ports"
        )
        return [Finding((*_PATH, "mgmt_switch"), msg)]
    for (g, port), end in zip(spare, ends, strict=False):
        g.ports[port] = end
    return []


def _switch_ports(fabric: FabricPlan | None, storage: tuple[StorageNetworkPlan, ...]) -> list[tuple[_Endpoint, int | None]]:
    """Every switch's management port with its SU (None: the management rack): compute spines, super-spines, leaves, then
    the storage / in-band switches (an SU's leaf pairs; services pair, spines, a collapsed pair have none).
    """
    top = (*fabric.spines, *fabric.super_spines) if fabric else ()
    ends = [(_Endpoint("switch-mgmt", s.name, s.mgmt_interface, s.mgmt_address), None) for s in top]
    ends += [(_Endpoint("switch-mgmt", s.name, s.mgmt_interface, s.mgmt_address), s.scalable_unit) for s in fabric.leaves] if fabric else []
    ends += [
        (_Endpoint("switch-mgmt", s.name, s.mgmt_interface, s.mgmt_address), _su_of(s.location))
        for network in storage
        for s in sorted(network.switches, key=lambda s: s.switch_id)
    ]
    return ends


def _su_of(location: str) -> int | None:
    """SU ``s`` of a storage switch location ``su<s>-<k>``; None for ``svc``, ``spine``, ``pair``."""
    head = location.split("-", 1)[0]
    return int(head[2:]) if head.startswith("su") and head[2:].isdigit() else None


def _place_devices(spec: ClusterSpec, net: OobNetworkSpec, groups: dict[str, _Group]) -> list[Finding]:
    """Put each PDU / console server on the port it names; a missing switch, a taken port or a foreign address is an error."""
    problems: list[Finding] = []
    cidr = spec.planes.oob.cidr
    for i, device in enumerate(net.devices):
        path = (*_PATH, "devices", i)
        group = groups.get(device.switch.removeprefix("oob-"))
        if group is None:
            names = ", ".join(f"oob-{g}" for g in sorted(groups))
            problems.append(Finding((*path, "switch"), f"there is no management switch '{device.switch}'; the plan has {names}"))
        elif device.port in group.ports:
            taken = group.ports[device.port]
            problems.append(
                Finding((*path, "port"), f"{device.switch} port {device.port} already takes {taken.device} {taken.port}; pick a free port")
            )
        elif device.address not in cidr:
            problems.append(Finding((*path, "address"), f"{device.address} is outside the oob plane {cidr}; pick an address inside it"))
        else:
            group.ports[device.port] = _Endpoint("device", device.name, "mgmt", f"{device.address}/{cidr.prefixlen}")
    return problems


def _over_budget(net: OobNetworkSpec, group: _Group, name: str, used: int, total: int) -> Finding:
    bmcs = sum(1 for e in group.ports.values() if e.kind == "bmc")
    devices = sum(1 for e in group.ports.values() if e.kind == "device")
    mgmt = len(group.ports) - bmcs - devices
    free = used - len(group.ports)
    reserved = (f", {devices} PDU/console" if devices else "") + (f", {free} ports reserved for empty node slots" if free else "")
    fix = "raise switches_per_su, use placement: rack" if net.placement == "su" else "lower nodes_per_rack"
    return Finding(
        (*_PATH, "placement"),
        f"{name} needs {used} access ports ({bmcs} BMC, {mgmt} switch-management{reserved}) but the {net.model} has {total}; "
        f"{fix}, or pick a management switch with more ports",
    )


def _uplink_ports(model: SwitchModel, net: OobNetworkSpec) -> tuple[str, ...]:
    """Names of the model's dedicated uplink cages (SONiC's other_ports; Cumulus calls front-panel port N swpN)."""
    if model.sonic is None:
        return model.uplink_port_names(net.nos)
    extra = model.sonic_ports(model.speed_gbps)[model.ports :]
    return tuple(p.name if net.nos == "sonic" else f"swp{p.index}" for p in extra)


def _uplink_speed(model: SwitchModel) -> int:
    if model.sonic is None:
        return model.uplink_speed_gbps or model.speed_gbps
    extra = model.sonic_ports(model.speed_gbps)[model.ports :]
    return extra[0].speed_gbps if extra else model.speed_gbps


def _mgmt_pool(spec: ClusterSpec) -> IPv4Network:
    pool = spec.fabric.management.mgmt_pool if spec.fabric else None
    return pool or addressing.default_mgmt_pool(spec.planes.oob.cidr)
