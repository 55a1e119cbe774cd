"""Human-readable reports (rich tables) of findings and plans."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from fabric.errors import Finding, printable
from fabric.plan.oob.types import OobPlan
from fabric.plan.storage.types import StorageNetworkPlan
from fabric.plan.types import ClusterPlan, FabricPlan

if TYPE_CHECKING:
    from fabric.plan.cloud.types import CloudPlan


def print_findings(console: Console, findings: tuple[Finding, ...] | list[Finding]) -> None:
    """One line per finding: location, severity, path, message."""
    for finding in findings:
        style = "bold red" if finding.severity == "error" else "yellow"
        where = escape(f"{finding.file or '<definition>'}{f':{finding.line}' if finding.line else ''}")
        path, message = escape(finding.dotted_path or "(top level)"), escape(printable(finding.message))
        console.print(
            f"[bold]{where}[/]: [{style}]{finding.severity}[/]: [cyan]{path}[/]: {message}",
            highlight=False,
            soft_wrap=True,
        )


def switch_counts(plan: ClusterPlan) -> str:
    """Every switch of the plan, compute, storage / in-band and OOB: ``33 switches (compute 20, storage 10, oob 3)``."""
    counts = {"compute": len(plan.fabric.switches) if plan.fabric else 0}
    counts |= {net.name: len(net.switches) for net in plan.storage} | ({"oob": len(plan.oob.switches)} if plan.oob else {})
    text = f"{sum(counts.values())} switches"
    if len(counts) > 1:
        text += f" ({', '.join(f'{plane} {n}' for plane, n in counts.items())})"
    return text


def summary_line(plan: ClusterPlan) -> str:
    """``lab (onprem, roce): 4 nodes, 0 GPUs, 11 switches (compute 4, storage 2, oob 5)``: the switches of every tier."""
    gpus = sum(n.gpus for n in plan.nodes)
    transport = plan.plane("compute").transport
    return f"{plan.name} ({plan.target}, {transport}): {len(plan.nodes)} nodes, {gpus} GPUs, {switch_counts(plan)}"


def print_plan(console: Console, plan: ClusterPlan) -> None:
    """Planes, node groups and fabric figures of a plan."""
    from rich.table import Table  # only the plan tables need it: render and validate load no rich.table (issue 36)

    console.print(f"[bold green]{summary_line(plan)}[/]", highlight=False)
    planes = Table(title="Planes", title_justify="left")
    for column in ("plane", "cidr", "mtu", "vlan", "default route", "addresses"):
        planes.add_column(column)
    used = Counter(i.plane for n in plan.nodes for i in n.interfaces if i.address)
    for plane in plan.planes:
        planes.add_row(
            plane.name + (f" ({plane.transport})" if plane.transport else ""),
            plane.cidr or "-",
            str(plane.mtu),
            str(plane.vlan or "-"),
            plane.gateway if plane.default_route and plane.gateway else "none",
            str(used[plane.name]),
        )
    console.print(planes)
    groups = Table(title="Nodes", title_justify="left")
    for column in ("group", "role", "count", "hardware", "GPUs", "first", "last"):
        groups.add_column(column)
    by_group: dict[str, list[str]] = {}
    for node in plan.nodes:
        by_group.setdefault(node.group, []).append(node.hostname)
    for name, hosts in by_group.items():
        first = next(n for n in plan.nodes if n.group == name)
        groups.add_row(name, first.role, str(len(hosts)), first.hardware, str(first.gpus * len(hosts)), hosts[0], hosts[-1])
    console.print(groups)
    if plan.nics:
        _print_nics(console, plan)
    if plan.fabric is not None:
        _print_fabric(console, plan)
    if plan.oob is not None:
        _print_oob(console, plan.oob)
    for net in plan.storage:
        print_storage(console, net)
    if plan.cloud is not None:
        _print_cloud(console, plan.cloud)


def _print_nics(console: Console, plan: ClusterPlan) -> None:
    """Each RoCE group's NIC model, what it sends once the node roles ran, and which fields they change on it."""
    from rich.table import Table

    table = Table(title="RoCE NICs (fabric/catalog/data/nics)", title_justify="left")
    for column in ("group", "NIC", "RoCE DSCP / priority", "CNP DSCP / priority", "nic_qos sets"):
        table.add_column(column)
    for nic in plan.nics:
        sets = ", ".join(nic.sets) or "nothing (its defaults are the contract's)"
        table.add_row(
            nic.group,
            f"{nic.vendor} {nic.model}",
            f"{nic.roce_dscp} / {nic.roce_priority}",
            f"{nic.cnp_dscp} / {nic.cnp_priority}",
            f"{sets} ({nic.tool})",
        )
    console.print(table)


def _print_cloud(console: Console, cloud: CloudPlan) -> None:
    """Networks and MTUs, the NIC layout per instance type, and the resources the component will create."""
    from rich.table import Table

    nets = Table(title=f"{cloud.provider} networks ({cloud.region}, {cloud.zone})", title_justify="left")
    for column in ("network", "plane", "kind", "mtu", "subnets", "profile"):
        nets.add_column(column)
    for net in cloud.networks:
        subnets = (
            ", ".join(f"{s.key} {s.cidr}" for s in net.subnets)
            if len(net.subnets) <= 4
            else f"{len(net.subnets)} x /{net.subnets[0].cidr.split('/')[1]}"
        )
        nets.add_row(net.key, net.plane, net.kind, str(net.mtu), subnets, net.profile or "-")
    console.print(nets)
    layout = Table(title="NIC layout per instance", title_justify="left")
    for column in ("group", "type", "count", "NICs (card/device kind → subnet)", "placed"):
        layout.add_column(column)
    for group in cloud.groups:
        nics = ", ".join(f"{n.card}/{n.device} {n.kind}→{n.subnet}" for n in group.nics[:4])
        more = f" … ({len(group.nics)} in all: {dict(Counter(n.kind for n in group.nics))})" if len(group.nics) > 4 else ""
        sets = f" in {len(group.scale_sets)} scale set(s)" if group.scale_sets else ""
        layout.add_row(group.group, group.instance_type, f"{len(group.hostnames)}{sets}", nics + more, "yes" if group.placed else "no")
    console.print(layout)
    created = Table(title="Resources pulumi will create", title_justify="left")
    created.add_column("type")
    created.add_column("count", justify="right")
    for typ, count in cloud.resources:
        created.add_row(typ, str(count))
    console.print(created)
    for note in cloud.notes:
        console.print(f"  • {note}", highlight=False)


def _print_fabric(console: Console, plan: ClusterPlan) -> None:
    from rich.table import Table

    fabric = plan.fabric
    assert fabric is not None
    table = Table(title=f"Compute fabric ({fabric.topology}, {fabric.link_layer})", title_justify="left")
    for column in ("tier", "switches", "model", "NOS", "ports used / radix", "down Gb/s", "up Gb/s", "oversubscription"):
        table.add_column(column)
    for tier in fabric.tiers:
        sample = {"leaf": fabric.leaves, "spine": fabric.spines, "superspine": fabric.super_spines}[tier.tier] or None
        model, nos = (sample[0].model, sample[0].nos) if sample else ("-", "-")
        table.add_row(
            tier.tier,
            str(tier.switches),
            model,
            nos,
            f"{tier.ports_used_per_switch} / {tier.ports_per_switch}",
            str(tier.downlink_gbps),
            str(tier.uplink_gbps),
            tier.oversubscription,
        )
    console.print(table)
    kinds = Counter(link.kind for link in fabric.links)
    pods = fabric.pods
    supers = {s.name for s in fabric.super_spines}  # counted from the cables: ``pods`` describes one plane of several
    top = sum(1 for link in fabric.links if link.kind == "fabric" and link.b_device in supers)
    three = (
        f", {top} spine-super-spine at {pods.uplink_speed_gbps} Gb/s; {pods.pods} pods of {pods.leaves_per_pod} leaves + "
        f"{pods.spines_per_pod} spines, super-spines for {pods.pods_planned} pods (at most {pods.max_pods})"
        if pods
        else ""
    )
    console.print(
        f"scalable units {fabric.scalable_units}, rails {fabric.rails}, host ports/leaf {fabric.host_ports_per_leaf}, "
        f"uplinks/leaf {fabric.uplinks_per_leaf} at {fabric.uplink_speed_gbps} Gb/s; cables: {kinds['host']} node-leaf, "
        f"{kinds['fabric'] - top} leaf-spine{three}; bisection {fabric.bisection_gbps / 1000:g} Tb/s each way "
        f"({fabric.bisection_both_directions_gbps / 1000:g} Tb/s both directions); oversubscription {fabric.oversubscription}",
        highlight=False,
    )
    _print_buffers(console, plan)
    _print_planes(console, fabric)


def _print_buffers(console: Console, plan: ClusterPlan) -> None:
    """Each distinct derived ECN threshold and PFC headroom: value, formula and inputs, and how many switches use it."""
    alike: Counter[str] = Counter()
    for b in plan.buffers:
        alike.update(d.explain() for d in (b.ecn_min, b.ecn_max, *b.headroom))
    if alike:
        console.print("buffers (fabric.plan.buffers; sources in plan.json):", highlight=False)
        for line, count in alike.items():
            console.print(f"  {line} [{count} switch{'es' if count != 1 else ''}]", highlight=False, markup=False)


def _print_planes(console: Console, fabric: FabricPlan) -> None:
    """Each compute plane's switches, bandwidth, bisection and oversubscription, and their total (multi-plane only)."""
    from rich.table import Table

    from fabric.plan.compute.planes import plane_figures, plane_of

    figures = plane_figures(fabric)
    if not figures:
        return
    shared = sum(1 for s in fabric.spines if plane_of(s.name) is None)  # fabric.plan.compute.shared_spines
    apart = f"{shared} shared spines, a VRF per plane" if shared else "no link between them"
    table = Table(title=f"Compute planes ({len(figures)}, {apart}; rails above count per plane)", title_justify="left")
    for column in ("plane", "switches", "host Gb/s", "up Gb/s", "bisection Tb/s each way", "oversubscription"):
        table.add_column(column)
    for f in figures:
        table.add_row(f"p{f.plane}", str(f.switches), str(f.host_gbps), str(f.uplink_gbps), f"{f.bisection_gbps / 1000:g}", f.oversubscription)
    host, up = sum(f.host_gbps for f in figures), sum(f.uplink_gbps for f in figures)
    cut = sum(f.bisection_gbps for f in figures)
    table.add_row("total", str(sum(f.switches for f in figures) + shared), str(host), str(up), f"{cut / 1000:g}", fabric.oversubscription)
    console.print(table)


def _print_oob(console: Console, oob: OobPlan) -> None:
    """One row per management switch: where it sits, its port budget and what it takes."""
    from rich.table import Table

    table = Table(title=f"OOB network (placement {oob.placement}, uplinks to {oob.core})", title_justify="left")
    for column in ("switch", "model", "NOS", "ports used / access", "BMC", "switch mgmt", "uplinks", "address"):
        table.add_column(column)
    kinds = Counter((link.a_device, link.kind) for link in oob.links)
    for sw in oob.switches:
        used = f"{sw.ports_used} / {sw.ports_total}"
        table.add_row(
            sw.name, sw.model, sw.nos, used, str(kinds[sw.name, "bmc"]), str(kinds[sw.name, "switch-mgmt"]), str(sw.uplinks), sw.mgmt_address
        )
    console.print(table)


def print_storage(console: Console, net: StorageNetworkPlan) -> None:
    """One row per switch of a storage / in-band network: role, pair, port budget, host cables per plane and address."""
    from rich.table import Table

    planes = ", ".join(f"{s.plane} vlan {s.vlan} mtu {s.mtu}" + (" RoCE" if s.roce else "") for s in net.segments)
    per_plane = ", ".join(f"{plane} {ratio}" for plane, ratio in net.plane_oversubscription)
    title = f"{net.name} network ({net.topology}, {net.attach}, {planes}; oversubscription {net.oversubscription}: {per_plane})"
    table = Table(title=title, title_justify="left")
    for column in ("switch", "role", "model", "NOS", "ports used / total", "storage", "inband", "address"):
        table.add_column(column)
    kinds = Counter((link.a_device, link.kind) for link in net.links)
    for sw in net.switches:
        used = f"{sw.ports_used} / {sw.ports_total}"
        table.add_row(sw.name, sw.role, sw.model, sw.nos, used, str(kinds[sw.name, "storage"]), str(kinds[sw.name, "inband"]), sw.mgmt_address)
    console.print(table)
