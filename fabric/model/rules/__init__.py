"""Cross-field rules over a schema-valid ClusterSpec. Each rule yields Findings; all rules always run.

Rules that need the derived topology (leaf radix, oversubscription, pool sizes) live in ``fabric.plan.checks``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from ipaddress import IPv4Network
from itertools import pairwise

from fabric.catalog.cloud import AWS_INSTANCE_TYPES, AZURE_VM_SIZES, GCP_MACHINE_TYPES
from fabric.catalog.hardware import HARDWARE
from fabric.catalog.releases import NOS_RELEASES
from fabric.catalog.switches import SWITCH_MODELS
from fabric.errors import Finding, format_path
from fabric.model.base import unknown_choice
from fabric.model.cluster import ClusterSpec
from fabric.model.planes import PLANE_NAMES
from fabric.model.rules.cloud import check_aws, check_azure, check_gcp
from fabric.model.topology import FabricSpec

Rule = Callable[[ClusterSpec], Iterator[Finding]]

AZURE_RDMA_RESERVED = IPv4Network("172.16.0.0/16")
ETHERNET_OVERHEAD = 22  # Ethernet header 14 + 802.1Q tag 4 + FCS 4
ROCE_MIN_MTU = 4200  # 4096-byte RDMA MTU + RoCEv2 headers
_TRANSPORT_TARGET = {
    "infiniband": "onprem",
    "roce": "onprem",
    "efa": "aws",
    "gpudirect-tcpx": "gcp",
    "gpudirect-tcpxo": "gcp",
    "gcp-rdma": "gcp",
    "azure-ib": "azure",
}
# The catalogs stay lazy (read at first use): an on-prem definition never reads the cloud data files.
_TYPE_CATALOGS: dict[str, tuple[str, Mapping[str, object]]] = {
    "aws": ("AWS instance type", AWS_INSTANCE_TYPES),
    "gcp": ("GCP machine type", GCP_MACHINE_TYPES),
    "azure": ("Azure VM size", AZURE_VM_SIZES),
}


def check_target(spec: ClusterSpec) -> Iterator[Finding]:
    """The target's block is present, the other clouds' blocks absent, the transport fits the target."""
    for cloud in ("aws", "gcp", "azure"):
        block = getattr(spec, cloud)
        if cloud == spec.target and block is None:
            yield Finding((cloud,), f"target is {cloud} but the '{cloud}' block is missing; add it with region/zone, image and capacity")
        elif cloud != spec.target and block is not None:
            yield Finding((cloud,), f"'{cloud}' block given but target is {spec.target}; remove it or set target: {cloud}")
    transport = spec.planes.compute.transport
    wanted = _TRANSPORT_TARGET[transport]
    if wanted != spec.target:
        fits = sorted(t for t, tgt in _TRANSPORT_TARGET.items() if tgt == spec.target)
        yield Finding(
            ("planes", "compute", "transport"),
            f"transport '{transport}' runs only on target {wanted}, but target is {spec.target}; use one of {', '.join(fits)}",
        )
    if spec.target == "onprem" and spec.fabric is None:
        yield Finding(("fabric",), "an on-prem cluster needs a 'fabric' block (topology, leaf and spine models, NOS)")
    if spec.target != "onprem" and spec.fabric is not None:
        yield Finding(("fabric",), f"the 'fabric' block describes on-prem switches; the {spec.target} provider builds the fabric, remove it")
    if spec.planes.compute.cidr is None and transport != "azure-ib":
        yield Finding(("planes", "compute", "cidr"), f"transport '{transport}' needs a compute cidr; add planes.compute.cidr")
    if transport == "infiniband" and spec.infiniband is None:
        yield Finding(("infiniband",), "transport infiniband needs an 'infiniband' block with at least the subnet_manager")
    if transport != "infiniband" and spec.infiniband is not None:
        yield Finding(("infiniband",), f"'infiniband' block given but the compute transport is '{transport}'; remove it", "warning")


def check_node_groups(spec: ClusterSpec) -> Iterator[Finding]:
    """Group names, hostnames and stable ids are unique; hardware or instance type fits the target."""
    seen_groups: dict[str, int] = {}
    owners: dict[str, int] = {}
    for gi, group in enumerate(spec.nodes):
        base = ("nodes", gi)
        if group.group in seen_groups:
            yield Finding((*base, "group"), f"group name '{group.group}' is already used by nodes[{seen_groups[group.group]}]; rename one")
        seen_groups.setdefault(group.group, gi)
        for name in group.hostnames():
            if name in owners and owners[name] != gi:
                yield Finding((*base, "hostname"), f"hostname '{name}' is also produced by nodes[{owners[name]}]; change one hostname pattern")
                break
            owners[name] = gi
        if group.count == 0:
            yield Finding((*base, "count"), f"group '{group.group}' has count 0 and creates no node", "warning")
        yield from _check_group_hardware(spec, gi)
    yield from _check_id_overlap(spec)


def _check_group_hardware(spec: ClusterSpec, gi: int) -> Iterator[Finding]:
    group = spec.nodes[gi]
    base = ("nodes", gi)
    if spec.target == "onprem":
        if group.hardware is None and not group.ports:
            yield Finding(
                (*base, "hardware"),
                f"on-prem group '{group.group}' needs 'hardware' (a profile such as dgx-h100) or its own 'ports' per plane",
            )
        if group.instance_type is not None:
            yield Finding((*base, "instance_type"), "instance_type is for cloud targets; on-prem groups use 'hardware'")
        if group.hardware is not None and group.hardware not in HARDWARE and group.hardware not in spec.hardware:
            yield Finding((*base, "hardware"), unknown_choice("hardware profile", group.hardware, [*HARDWARE, *spec.hardware]))
            return
        profile = spec.profile_of(group)
        if profile is not None:
            what = f"'{group.hardware}'" if group.hardware else f"group '{group.group}'"
            if group.role == "gpu" and "compute" not in profile.ports:
                yield Finding((*base, "hardware"), f"role gpu needs compute ports, and {what} has none; pick a GPU profile or add ports.compute")
            for plane, names in group.interfaces.items():
                have = profile.ports.get(plane)
                if have is None or len(names) != have.count:
                    count = have.count if have else 0
                    yield Finding(
                        (*base, "interfaces", plane),
                        f"{len(names)} name(s) given but {what} has {count} {plane} port(s); give one name per port",
                    )
        return
    if group.hardware is not None or group.ports:
        key = "hardware" if group.hardware is not None else "ports"
        yield Finding((*base, key), f"'{key}' is for on-prem groups; on {spec.target} set instance_type")
    label, catalog = _TYPE_CATALOGS[spec.target]
    if group.instance_type is None:
        yield Finding((*base, "instance_type"), f"group '{group.group}' needs instance_type (a {label})")
    elif group.instance_type not in catalog:
        yield Finding((*base, "instance_type"), unknown_choice(label, group.instance_type, catalog))


def _check_id_overlap(spec: ClusterSpec) -> Iterator[Finding]:
    groups = sorted(((g.id_offset, gi) for gi, g in enumerate(spec.nodes) if g.count), key=lambda t: t)
    for (_, a), (_, b) in pairwise(groups):
        ga, gb = spec.nodes[a], spec.nodes[b]
        if gb.id_offset < ga.id_offset + ga.count:
            first, last = ga.id_offset + 1, ga.id_offset + ga.count
            yield Finding(
                ("nodes", b, "id_offset"),
                f"node ids of group '{gb.group}' start at {gb.id_offset + 1}, inside group '{ga.group}' ids {first}..{last}; "
                f"ids fix addresses and fabric slots, so set nodes[{b}].id_offset to {last} or more (leave room to grow)",
            )


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


def check_mtu(spec: ClusterSpec) -> Iterator[Finding]:
    """Switch MTU covers host MTU plus headers; RoCE and storage planes use jumbo frames."""
    planes = spec.planes
    transport = planes.compute.transport
    ethernet_planes = ["storage", "inband", "oob"] + ([] if transport in ("infiniband", "azure-ib") else ["compute"])
    for name in ethernet_planes:
        mtu = getattr(planes, name).mtu
        if mtu > 9216:
            yield Finding(("planes", name, "mtu"), f"MTU {mtu} is above the 9216-byte Ethernet jumbo limit; use 9000")
        elif spec.fabric is not None and name == "compute" and mtu + ETHERNET_OVERHEAD > spec.fabric.switch_mtu:
            switch_mtu = spec.fabric.switch_mtu
            yield Finding(
                ("planes", "compute", "mtu"),
                f"host MTU {mtu} + {ETHERNET_OVERHEAD} bytes of Ethernet headers exceeds the switch MTU {switch_mtu}; "
                f"lower the host MTU to {switch_mtu - ETHERNET_OVERHEAD} or raise fabric.mtu",
            )
    if spec.target != "onprem":
        return
    if transport == "roce" and planes.compute.mtu < ROCE_MIN_MTU:
        yield Finding(
            ("planes", "compute", "mtu"), f"RoCE needs MTU >= {ROCE_MIN_MTU} to carry 4096-byte RDMA frames (got {planes.compute.mtu}); set 9000"
        )
    elif transport == "roce" and planes.compute.mtu < 9000:
        yield Finding(("planes", "compute", "mtu"), f"RoCE plane MTU {planes.compute.mtu} is below 9000; jumbo frames are the norm", "warning")
    if transport == "infiniband" and planes.compute.mtu > 4092:
        yield Finding(
            ("planes", "compute", "mtu"), f"IPoIB MTU {planes.compute.mtu} needs IPoIB connected mode; datagram mode allows 4092", "warning"
        )
    if planes.storage.mtu < 9000:
        yield Finding(("planes", "storage", "mtu"), f"storage plane MTU {planes.storage.mtu} is not jumbo; set planes.storage.mtu: 9000")
    for i, route in enumerate(planes.storage.routes):
        if route.to.prefixlen == 0:
            yield Finding(("planes", "storage", "routes", i, "to"), "the storage plane never carries a default route; route specific prefixes only")
        if route.via not in planes.storage.cidr:
            yield Finding(("planes", "storage", "routes", i, "via"), f"next hop {route.via} is outside the storage plane {planes.storage.cidr}")


def check_roce_contract(spec: ClusterSpec) -> Iterator[Finding]:
    """The RoCE contract is consistent: one lossless priority fed by the RoCE DSCP, CNP apart and strict."""
    roce = spec.roce
    base = ("roce",)
    dscp_map = roce.dscp_map()
    mapped = dscp_map[roce.dscp]
    if mapped != roce.priority:
        yield Finding(
            (*base, "dscp_to_priority", roce.dscp),
            f"RoCE DSCP {roce.dscp} maps to priority {mapped}, not the RoCE priority {roce.priority}; map it to {roce.priority}",
        )
    if set(roce.pfc_priorities) != {roce.priority}:
        yield Finding(
            (*base, "pfc_priorities"),
            f"PFC must be on exactly the priority the RoCE DSCP {roce.dscp} maps to ({roce.priority}), got {list(roce.pfc_priorities)}; "
            f"set pfc_priorities: [{roce.priority}]",
        )
    if roce.cnp.priority == roce.priority:
        yield Finding(
            (*base, "cnp", "priority"),
            f"CNP priority {roce.cnp.priority} equals the RoCE priority; CNPs must not wait behind paused RoCE traffic, use 6",
        )
    if roce.cnp.dscp == roce.dscp:
        yield Finding((*base, "cnp", "dscp"), f"CNP DSCP {roce.cnp.dscp} equals the RoCE DSCP; use a separate DSCP such as 48")
    if roce.cnp.traffic_class == roce.traffic_class:
        yield Finding(
            (*base, "cnp", "traffic_class"), f"CNP traffic class {roce.cnp.traffic_class} is the lossless class; give CNPs their own strict class (6)"
        )
    for dscp, prio in dscp_map.items():
        if prio == roce.priority and dscp not in (roce.dscp, roce.cnp.dscp):
            yield Finding(
                (*base, "dscp_to_priority", dscp),
                f"DSCP {dscp} also maps to the lossless priority {prio}; no other traffic may share it, map it elsewhere",
            )
    if roce.tos is not None and roce.tos & 3 == 0:
        yield Finding(
            (*base, "tos"),
            f"ToS {roce.tos} marks packets Not-ECT: switches cannot ECN-mark them, so DCQCN never slows senders; use {(roce.tos & ~3) | 2} (ECT(0))",
        )
    if roce.tos is not None and roce.tos >> 2 != roce.dscp:
        yield Finding(
            (*base, "tos"),
            f"ToS {roce.tos} carries DSCP {roce.tos >> 2}, not the RoCE DSCP {roce.dscp}; use {(roce.dscp << 2) | 2} (DSCP << 2 | ECT(0))",
        )
    if spec.planes.compute.transport == "roce" and not roce.pfc_watchdog.enabled:
        yield Finding(
            (*base, "pfc_watchdog", "enabled"), "PFC watchdog is off: a stuck receiver can spread a pause storm across the fabric", "warning"
        )


def check_rdma_stack(spec: ClusterSpec) -> Iterator[Finding]:
    """A group with RoCE compute ports does not ask for the inbox RDMA stack.

    The NIC half of the RoCE contract needs DOCA's tools: mlnx_qos and cma_roce_tos (Mellanox/mlnx-tools, which Debian
    12 does not package), the ECN sysfs (DOCA "Explicit Congestion Notification": /sys/class/net/<if>/ecn/...) and, for
    nvidia-peermem, the peer-memory API (NVIDIA driver README "GPUDirect RDMA Peer Memory Client": MOFED needed).
    """
    if spec.target != "onprem" or spec.planes.compute.transport != "roce":
        return
    for gi, group in enumerate(spec.nodes):
        profile = spec.profile_of(group)
        if group.rdma_stack == "inbox" and profile is not None and "compute" in profile.ports:
            yield Finding(
                ("nodes", gi, "rdma_stack"),
                f"group '{group.group}' has RoCE compute ports, and the inbox RDMA stack cannot apply the NIC half of the RoCE "
                "contract: it has no mlnx_qos or cma_roce_tos, no ECN sysfs and no peer-memory API for nvidia-peermem; "
                "set rdma_stack: doca (or leave it out: doca is the default on RoCE ports)",
            )


def check_infiniband(spec: ClusterSpec) -> Iterator[Finding]:
    """PKeys in range and unique, SM priorities unique, SM and partition members exist."""
    ib = spec.infiniband
    if ib is None:
        return
    groups = {g.group for g in spec.nodes}
    hosts = {h: g for g in spec.nodes for h in g.hostnames()}
    pkeys: dict[int, int] = {}
    names: dict[str, int] = {}
    for pi, part in enumerate(ib.partitions):
        path = ("infiniband", "partitions", pi)
        if not 0x0001 <= part.pkey <= 0x7FFE:
            yield Finding((*path, "pkey"), f"pkey {part.pkey:#06x} is out of range; use 0x0001..0x7ffe (0x7fff is the default partition)")
        if part.pkey in pkeys:
            yield Finding((*path, "pkey"), f"pkey {part.pkey:#06x} is already used by partitions[{pkeys[part.pkey]}]; pkeys must be unique")
        pkeys.setdefault(part.pkey, pi)
        if part.name in names:
            yield Finding((*path, "name"), f"partition name '{part.name}' is already used by partitions[{names[part.name]}]")
        names.setdefault(part.name, pi)
        for mi, member in enumerate(part.members):
            mpath = (*path, "members", mi)
            if (member.group is None) == (member.host is None):
                yield Finding(mpath, "a member names exactly one of 'group' or 'host'")
            elif member.group is not None and member.group not in groups:
                yield Finding((*mpath, "group"), unknown_choice("node group", member.group, sorted(groups)))
            elif member.host is not None and member.host not in hosts:
                yield Finding((*mpath, "host"), unknown_choice("host", member.host, sorted(hosts)))
        yield from _check_switch_partition(spec, pi)
    yield from _check_subnet_manager(spec, hosts)


def _check_switch_partition(spec: ClusterSpec, pi: int) -> Iterator[Finding]:
    """A switch-hosted SM names partition members by port GUID only: a partition without any would hold no port."""
    assert spec.infiniband is not None
    if spec.infiniband.subnet_manager.kind != "switch":
        return
    part = spec.infiniband.partitions[pi]
    path = ("infiniband", "partitions", pi)
    if part.ipoib:
        yield Finding(
            (*path, "ipoib"),
            f"partition '{part.name}': the switch-hosted SM config carries no IPoIB broadcast-group command (none documented); "
            "create the IPoIB group on the switch by hand or run the SM on hosts (opensm)",
            "warning",
        )
    if not any(m.port_guids for m in part.members):
        yield Finding(
            (*path, "members"),
            f"partition '{part.name}' would be empty on the switch-hosted subnet manager: it names ports by GUID only "
            "(an empty member list means no ports); list each member's port_guids",
        )
    for mi, member in enumerate(part.members):
        if member.membership == "both" and member.port_guids:
            yield Finding(
                (*path, "members", mi, "membership"),
                "MLNX-OS partition members are 'full' or 'limited'; use one of them with a switch-hosted subnet manager",
            )


def _check_subnet_manager(spec: ClusterSpec, hosts: Mapping[str, object]) -> Iterator[Finding]:
    assert spec.infiniband is not None
    sm = spec.infiniband.subnet_manager
    base = ("infiniband", "subnet_manager")
    priorities: dict[int, int] = {}
    for ni, node in enumerate(sm.nodes):
        if node.priority in priorities:
            yield Finding(
                (*base, "nodes", ni, "priority"),
                f"sm priority {node.priority} is also used by nodes[{priorities[node.priority]}]; master election needs distinct priorities",
            )
        priorities.setdefault(node.priority, ni)
        if sm.kind != "switch" and node.host not in hosts:
            yield Finding((*base, "nodes", ni, "host"), unknown_choice("host", node.host, sorted(hosts)))
        elif sm.kind != "switch":
            group = next(g for g in spec.nodes if node.host in g.hostnames())
            profile = spec.profile_of(group)
            if profile is not None and "compute" not in profile.ports:
                yield Finding(
                    (*base, "nodes", ni, "host"),
                    f"'{node.host}' ({group.hardware}) has no port on the InfiniBand fabric; an SM host needs one (e.g. mgmt-server-ib)",
                )
            elif profile is not None and sm.kind == "opensm" and profile.ports["compute"].count > 1 and not sm.port_subnets:
                yield Finding(
                    (*base, "nodes", ni, "host"),
                    f"'{node.host}' ({group.hardware}) has {profile.ports['compute'].count} InfiniBand ports: opensm binds one port "
                    "per instance (-g/--guid) and the packaged units start one per port, so each port would run a subnet of its own; "
                    "run the SM on a host with one InfiniBand port (e.g. mgmt-server-ib), or set infiniband.subnet_manager.port_subnets: "
                    "true if its ports are cabled to separate fabrics",
                )
    if sm.kind == "switch" and (sm.sweep_interval_s, sm.lmc) != (10, 0):
        yield Finding(
            (*base,),
            f"sweep_interval_s {sm.sweep_interval_s} / lmc {sm.lmc} are not rendered for a switch-hosted SM (no MLNX-OS command "
            "for them is documented); the switch keeps its defaults",
            "warning",
        )
    if len(sm.nodes) == 1:
        yield Finding((*base, "nodes"), "a single subnet manager has no standby; add a second node with a lower priority", "warning")
    if sm.routing_engine == "ar_updn" and sm.kind == "opensm":
        yield Finding((*base, "routing_engine"), "ar_updn exists only in NVIDIA's SM (UFM or switch-hosted); with upstream opensm use ftree or updn")
    fabric = spec.fabric
    if sm.kind == "opensm" and fabric is not None and fabric.leaf.model == "qm9700":
        yield Finding(
            (*base, "kind"), "upstream opensm has known problems on NDR (Quantum-2) fabrics; NVIDIA recommends its SM (ufm or switch)", "warning"
        )


def check_switch_tiers(spec: ClusterSpec) -> Iterator[Finding]:
    """Each tier's NOS runs on its model; the model's link layer fits the compute transport."""
    fabric = spec.fabric
    if fabric is None:
        return
    transport = spec.planes.compute.transport
    for tier, tier_spec in fabric.tier_specs.items():
        model = SWITCH_MODELS[tier_spec.model]
        if tier_spec.nos not in model.nos:
            yield Finding(("fabric", tier, "nos"), f"{model.name} does not run {tier_spec.nos}; it runs {', '.join(model.nos)}")
        releases = NOS_RELEASES[tier_spec.nos]
        if tier_spec.nos_version is not None and tier_spec.nos_version not in releases.supported:
            yield Finding(
                ("fabric", tier, "nos_version"),
                f"{tier_spec.nos} release '{tier_spec.nos_version}' is not supported; supported: {', '.join(releases.supported)} "
                f"(default {releases.default}); pick one or leave nos_version out",
            )
        limit = model.max_mtu(tier_spec.nos)
        if fabric.mtu is not None and limit is not None and fabric.mtu > limit:
            yield Finding(
                ("fabric", "mtu"),
                f"MTU {fabric.mtu} is above the {limit} that {tier_spec.nos} accepts on {model.name} routed ports ({tier} tier); "
                f"set fabric.mtu to {limit} or less, or leave it out to get the largest every tier accepts",
            )
        wanted = "infiniband" if transport == "infiniband" else "ethernet"
        if model.link_layer != wanted:
            yield Finding(
                ("fabric", tier, "model"), f"{model.name} is an {model.link_layer} switch but transport '{transport}' needs {wanted} switches"
            )


_WATCHDOG_ACTIONS = {
    # AVD qos_profiles schema, priority_flow_control.watchdog.action: "drop", "notify-only" (EOS has no forward action)
    "eos": ("drop", "alert"),
    # Cisco N9K QoS guide 10.5x, PFC watchdog: "all outgoing packets are dropped on interfaces that match the PFC queue"
    "nxos": ("drop",),
}
NXOS_SHUTDOWN_MULTIPLIER = (1, 10)  # N9K QoS guide: `priority-flow-control watch-dog shutdown-multiplier` 1-10
NXOS_RESTORE_MULTIPLIER = (0, 100)  # N9K QoS guide: `priority-flow-control auto-restore multiplier` 0-100


def check_nos_watchdog(spec: ClusterSpec) -> Iterator[Finding]:
    """The PFC watchdog's action and timers are ones every tier's NOS can carry out."""
    wd = spec.roce.pfc_watchdog
    if spec.fabric is None or spec.planes.compute.transport != "roce" or not wd.enabled:
        return
    base = ("roce", "pfc_watchdog")
    for nos in sorted({spec.fabric.leaf.nos, spec.fabric.spine.nos}):
        allowed = _WATCHDOG_ACTIONS.get(nos)
        if allowed is not None and wd.action not in allowed:
            yield Finding((*base, "action"), f"the {nos} PFC watchdog cannot '{wd.action}' a stuck queue; use {' or '.join(allowed)}")
        if nos != "nxos":
            continue
        for key, value, (low, high) in (
            ("detection_ms", wd.detection_ms, NXOS_SHUTDOWN_MULTIPLIER),
            ("restoration_ms", wd.restoration_ms, NXOS_RESTORE_MULTIPLIER),
        ):
            if value % wd.polling_ms or not low <= value // wd.polling_ms <= high:
                yield Finding(
                    (*base, key),
                    f"NX-OS sets the watchdog's {key.removesuffix('_ms')} time as {low}-{high} times the polling interval "
                    f"({wd.polling_ms} ms); {value} ms is not, use a multiple of {wd.polling_ms} up to {high * wd.polling_ms}",
                )


def check_hardware_section(spec: ClusterSpec) -> Iterator[Finding]:
    """The definition's own profiles do not take a built-in profile's name (a group would silently get another machine)."""
    for name in spec.hardware:
        if name in HARDWARE:
            yield Finding(("hardware", name), f"'{name}' is a built-in profile; give yours another name, e.g. '{name}-site'")
        elif spec.target != "onprem":
            yield Finding(("hardware", name), f"hardware profiles are for on-prem nodes; on {spec.target} groups set instance_type")


RULES: tuple[Rule, ...] = (
    check_target,
    check_hardware_section,
    check_node_groups,
    check_cidrs,
    check_explicit_addresses,
    check_mtu,
    check_roce_contract,
    check_rdma_stack,
    check_infiniband,
    check_switch_tiers,
    check_nos_watchdog,
    check_aws,
    check_gcp,
    check_azure,
)


def check_spec(spec: ClusterSpec) -> list[Finding]:
    """Run every rule and return all findings (errors and warnings)."""
    return [finding for rule in RULES for finding in rule(spec)]
