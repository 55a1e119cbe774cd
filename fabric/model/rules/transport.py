"""Rules of the compute transport: MTU per plane, the RoCE lossless contract, the RDMA stack, the PFC watchdog per NOS."""

from __future__ import annotations

from collections.abc import Iterator

from fabric.errors import Finding
from fabric.model.cluster import ClusterSpec
from fabric.model.nics import contract_roce, is_connectx

ETHERNET_OVERHEAD = 22  # Ethernet header 14 + 802.1Q tag 4 + FCS 4


ROCE_MIN_MTU = 4200  # 4096-byte RDMA MTU + RoCEv2 headers


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
    """The RoCE contract is consistent: one lossless priority fed by the RoCE DSCP, CNP apart and strict (the CNP marking
    as the NICs give it where the definition leaves it out: fabric.model.nics)."""
    roce = contract_roce(spec)
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
    A group whose compute NIC is not a ConnectX (a Broadcom Thor2: fabric.model.nics) takes another path and may run the
    inbox stack (rdma-core carries bnxt_re's user-space provider).
    """
    if spec.target != "onprem" or spec.planes.compute.transport != "roce":
        return
    for gi, group in enumerate(spec.nodes):
        profile = spec.profile_of(group)
        if group.rdma_stack == "inbox" and profile is not None and "compute" in profile.ports and is_connectx(profile):
            yield Finding(
                ("nodes", gi, "rdma_stack"),
                f"group '{group.group}' has RoCE compute ports, and the inbox RDMA stack cannot apply the NIC half of the RoCE "
                "contract: it has no mlnx_qos or cma_roce_tos, no ECN sysfs and no peer-memory API for nvidia-peermem; "
                "set rdma_stack: doca (or leave it out: doca is the default on RoCE ports)",
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
