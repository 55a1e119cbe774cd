# pyright: basic
# (graphviz ships no type stubs; this module is its only user, the rest of fabric/ stays strict)
"""The topology diagram: tiers as ranks, nodes grouped per scalable unit and rail, cables aggregated per switch pair.

``topology_dot`` is pure (DOT text from the plan, golden-tested); ``topology_svg`` lays it out with Graphviz's ``dot``.
"""

from __future__ import annotations

from collections import Counter

import graphviz

from fabric.plan.types import ClusterPlan

_TIER_COLOR = {"spine": "#d0e1f9", "leaf": "#e3f2d9"}


def topology_dot(plan: ClusterPlan) -> str:
    """DOT source: spines on top, leaves, then node groups; one edge per switch pair or leaf-to-group with its cable count.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> 'spine01 -- leaf01 [label="1 x 100G"]' in topology_dot(plan_cluster(load_cluster("inventories/lab/cluster.yaml")))
        True
    """
    graph = graphviz.Graph(plan.name, graph_attr={"rankdir": "TB", "splines": "false", "nodesep": "0.3", "fontname": "Helvetica"})
    graph.attr("node", shape="box", style="filled,rounded", fontname="Helvetica", fontsize="10")
    graph.attr("edge", fontname="Helvetica", fontsize="8", color="#7a7a7a")
    fabric = plan.fabric
    if fabric is None:
        return graph.source
    planes = ", ".join(f"{p.name} {p.cidr or '-'} mtu {p.mtu}" for p in plan.planes)
    title = f"{plan.name}: {fabric.topology} {fabric.link_layer}, oversubscription {fabric.oversubscription}"
    graph.attr(label=f"{title}\\nplanes: {planes}", labelloc="t")
    for tier, switches in (("spine", fabric.spines), ("leaf", fabric.leaves)):
        rank = graphviz.Graph(name=f"rank_{tier}", graph_attr={"rank": "same"})
        for s in switches:
            rail = f"\\nrail {s.rail}" if s.rail else ""
            rank.node(s.name, f"{s.name}\\n{s.model} ({s.nos}){rail}\\nAS {s.asn or '-'}", fillcolor=_TIER_COLOR[tier])
        graph.subgraph(rank)
    group_of = {n.hostname: _node_group(n.group, n.scalable_unit) for n in plan.nodes}
    rank = graphviz.Graph(name="rank_nodes", graph_attr={"rank": "same"})
    for name, count in sorted(Counter(group_of.values()).items()):
        rank.node(name, f"{name}\\n{count} nodes", shape="folder", fillcolor="#f4e1c1")
    graph.subgraph(rank)
    edges: Counter[tuple[str, str, int]] = Counter()
    for link in fabric.links:
        if link.kind == "fabric":
            edges[link.b_device, link.a_device, link.speed_gbps] += 1
        else:
            edges[link.a_device, group_of[link.b_device], link.speed_gbps] += 1
    for (a, b, speed), count in sorted(edges.items()):
        graph.edge(a, b, label=f"{count} x {speed}G")
    return graph.source


def _node_group(group: str, scalable_unit: int | None) -> str:
    return f"{group}-su{scalable_unit:02d}" if scalable_unit is not None else group


def topology_svg(dot_source: str) -> str:
    """Lay the DOT source out as SVG with Graphviz's ``dot`` (the Debian ``graphviz`` package)."""
    return graphviz.Source(dot_source).pipe(format="svg", encoding="utf-8")
