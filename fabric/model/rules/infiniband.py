"""InfiniBand rules: partitions on the switches, subnet manager placement and high availability."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from fabric.errors import Finding
from fabric.model.base import unknown_choice
from fabric.model.cluster import ClusterSpec


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
    # MLNX-OS member form: only `member all type full` has a source (NVIDIA WinOF-2 docs, "Changing PKey membership":
    # `ib partition <partition name> member all type full`; field log, SX6036 MLNX-OS 3.6: `member ALL type full` accepted,
    # `member 0xe41d2d0300b4db21 type full` refused "% Invalid port GUID", colon-grouped and bare hex forms too). So the
    # switch-hosted SM makes every port a full member, and no member can be limited there.
    for mi, member in enumerate(part.members):
        if member.membership != "full":
            yield Finding(
                (*path, "members", mi, "membership"),
                f"partition '{part.name}': the switch-hosted subnet manager is configured with 'member all type full' (MLNX-OS "
                "refuses a port GUID there: '% Invalid port GUID'), so it cannot make one member limited; make every member "
                "full, or run the SM on hosts (subnet_manager.kind: opensm), whose partitions.conf takes port GUIDs",
            )
    yield Finding(
        (*path, "members"),
        f"partition '{part.name}': on the switch-hosted subnet manager every port is a full member ('member all type full'); "
        "which hosts use the partition is set by the PKeys the hosts configure, not enforced by the SM. For enforced "
        "membership run the SM on hosts (subnet_manager.kind: opensm)",
        "warning",
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
    if sm.routing_engine.startswith("ar_") and sm.kind == "opensm" and not sm.nvidia_opensm:
        yield Finding(
            (*base, "routing_engine"),
            f"{sm.routing_engine} exists only in NVIDIA's OpenSM (DOCA-Host) and UFM; with upstream opensm use ftree or updn, "
            "or set infiniband.subnet_manager.nvidia_opensm: true",
        )
    elif sm.routing_engine.startswith("ar_") and sm.kind == "switch":
        # MLNX-OS User Manual v3.11.2502 LTS, "Subnet Manager": "Subnet manager running via MLNX-OS does not support adaptive routing"
        yield Finding(
            (*base, "routing_engine"),
            f"{sm.routing_engine} is an adaptive-routing engine and the switch-hosted SM (MLNX-OS) does not support adaptive "
            "routing; use ftree or updn, or run the SM on hosts (kind ufm, or opensm with nvidia_opensm: true)",
        )
    fabric = spec.fabric
    if sm.kind == "opensm" and not sm.nvidia_opensm and fabric is not None and fabric.leaf.model == "qm9700":
        yield Finding(
            (*base, "kind"), "upstream opensm has known problems on NDR (Quantum-2) fabrics; NVIDIA recommends its SM (ufm or switch)", "warning"
        )
