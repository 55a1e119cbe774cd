"""Human-readable reports (rich tables) of findings and plans."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.table import Table

from fabric.errors import Finding
from fabric.plan.types import ClusterPlan


def print_findings(console: Console, findings: tuple[Finding, ...] | list[Finding]) -> None:
    """One line per finding: location, severity, path, message."""
    for finding in findings:
        style = "bold red" if finding.severity == "error" else "yellow"
        where = f"{finding.file or '<definition>'}{f':{finding.line}' if finding.line else ''}"
        console.print(
            f"[bold]{where}[/]: [{style}]{finding.severity}[/]: [cyan]{finding.dotted_path or '(top level)'}[/]: {finding.message}",
            highlight=False,
            soft_wrap=True,
        )


def summary_line(plan: ClusterPlan) -> str:
    """``lab (onprem, roce): 4 nodes, 0 GPUs, 4 switches``."""
    gpus = sum(n.gpus for n in plan.nodes)
    switches = len(plan.fabric.switches) if plan.fabric else 0
    transport = plan.plane("compute").transport
    return f"{plan.name} ({plan.target}, {transport}): {len(plan.nodes)} nodes, {gpus} GPUs, {switches} switches"


def print_plan(console: Console, plan: ClusterPlan) -> None:
    """Planes, node groups and fabric figures of a plan."""
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
    if plan.fabric is not None:
        _print_fabric(console, plan)


def _print_fabric(console: Console, plan: ClusterPlan) -> None:
    fabric = plan.fabric
    assert fabric is not None
    table = Table(title=f"Compute fabric ({fabric.topology}, {fabric.link_layer})", title_justify="left")
    for column in ("tier", "switches", "model", "NOS", "ports used / radix", "down Gb/s", "up Gb/s", "oversubscription"):
        table.add_column(column)
    for tier in fabric.tiers:
        sample = (fabric.leaves if tier.tier == "leaf" else fabric.spines) or None
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
    console.print(
        f"scalable units {fabric.scalable_units}, rails {fabric.rails}, host ports/leaf {fabric.host_ports_per_leaf}, "
        f"uplinks/leaf {fabric.uplinks_per_leaf} at {fabric.uplink_speed_gbps} Gb/s; cables: {kinds['host']} node-leaf, "
        f"{kinds['fabric']} leaf-spine; bisection {fabric.bisection_gbps / 1000:g} Tb/s; oversubscription {fabric.oversubscription}",
        highlight=False,
    )
