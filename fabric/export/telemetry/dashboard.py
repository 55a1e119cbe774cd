"""A Grafana dashboard per fabric: a row per rail (RDMA traffic, PFC pauses on the RoCE priority or IB port errors),
on Ethernet fabrics a row per switch tier and the leaf side per rail (``telemetry.dashboard_switch``), then the GPUs
(pure: plan → JSON).

The JSON is Grafana's dashboard model (schemaVersion 39, layout and datasource variable: ``telemetry.layout``).
Every expression is checked by ``promtool`` in the tests, and every metric it names against what the scrape and
gnmic configs produce.
"""

from __future__ import annotations

import json
import re

from fabric.export.telemetry.dashboard_switch import switch_rows
from fabric.export.telemetry.layout import DATASOURCE_VARIABLE, SCHEMA_VERSION, Layout
from fabric.export.telemetry.link_health import link_panels
from fabric.export.telemetry.rails import RAIL_RECORD, port_rail, rail_devices
from fabric.plan.types import ClusterPlan


def _rail_rows(plan: ClusterPlan, layout: Layout) -> None:
    infiniband = plan.fabric is not None and plan.fabric.link_layer == "infiniband"
    for rail, hcas in rail_devices(plan).items():
        devices = "|".join(re.escape(h) for h in hcas)
        layout.row(f"Rail {rail} ({', '.join(hcas)})")
        layout.panel(
            f"Rail {rail}: RDMA transmit per node",
            "Bps",
            [
                (f'sum by (instance) (rate(node_infiniband_port_data_transmitted_bytes_total{{device=~"{devices}"}}[5m]))', "{{instance}}"),
                (f"{RAIL_RECORD}{{{rail.selector()}}}", "rail total"),
            ],
        )
        if infiniband:
            layout.panel(
                f"Rail {rail}: port errors and link downs",
                "short",
                [
                    (
                        f'sum by (instance) (increase(node_infiniband_port_errors_received_total{{device=~"{devices}"}}[10m]))',
                        "{{instance}} rcv errors",
                    ),
                    (f'sum by (instance) (increase(node_infiniband_link_downed_total{{device=~"{devices}"}}[10m]))', "{{instance}} link downed"),
                ],
            )
        else:
            names = {p.name for n in plan.nodes if n.role == "gpu" for p in n.interfaces if p.plane == "compute" and port_rail(p) == rail}
            ports = "|".join(re.escape(name) for name in sorted(names))
            prio = plan.roce.priority
            layout.panel(
                f"Rail {rail}: PFC pauses sent and received on priority {prio}",
                "pps",
                [
                    (f'sum by (instance) (rate(node_ethtool_transmitted_prio{prio}_pause{{device=~"{ports}"}}[5m]))', "{{instance}} sent"),
                    (f'sum by (instance) (rate(node_ethtool_received_prio{prio}_pause{{device=~"{ports}"}}[5m]))', "{{instance}} received"),
                ],
            )
            # DCQCN on the rail: ECN-marked RoCE packets the HCAs received and the CNPs they sent back (node_exporter
            # rdma collector, the mlx5 hw_counters np_ecn_marked_roce_packets and np_cnp_sent)
            layout.panel(
                f"Rail {rail}: ECN-marked packets received and CNPs sent",
                "pps",
                [
                    (
                        f'sum by (instance) (rate(node_rdma_mlx5_np_ecn_marked_roce_packets_total{{device=~"{devices}"}}[5m]))',
                        "{{instance}} ECN-marked",
                    ),
                    (f'sum by (instance) (rate(node_rdma_mlx5_np_cnp_sent_total{{device=~"{devices}"}}[5m]))', "{{instance}} CNPs sent"),
                ],
            )


def dashboard(plan: ClusterPlan) -> dict[str, object]:
    """The dashboard model: rails, switch tiers, GPUs."""
    layout = Layout()
    _rail_rows(plan, layout)
    switch_rows(plan, layout)
    panels = link_panels(plan)
    if panels:  # FEC, pre-FEC BER, flaps and optics per switch port, with the plan's labels (telemetry.link_health)
        layout.row("Link health")
        for title, unit, targets in panels:
            layout.panel(title, unit, targets)
    if any(n.gpus for n in plan.nodes):
        layout.row("GPUs")
        layout.panel("GPU utilisation", "percent", [("avg by (Hostname) (DCGM_FI_DEV_GPU_UTIL)", "{{Hostname}}")])
    return {
        "title": f"gpufabric {plan.name}",
        "uid": f"gpufabric-{plan.name}"[:40],
        "tags": ["gpufabric"],
        "timezone": "utc",
        "schemaVersion": SCHEMA_VERSION,
        "time": {"from": "now-6h", "to": "now"},
        "templating": {"list": [DATASOURCE_VARIABLE]},
        "panels": layout.panels,
    }


def dashboard_json(plan: ClusterPlan) -> str:
    """The dashboard as JSON text (sorted keys, two-space indent, ending in a newline).

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> '"title": "Rail 1 (mlx5_0)"' in dashboard_json(plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml")))
        True
    """
    return json.dumps(dashboard(plan), indent=2, sort_keys=True) + "\n"
