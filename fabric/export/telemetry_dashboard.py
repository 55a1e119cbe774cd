"""A Grafana dashboard per fabric: a row per rail (RDMA traffic, PFC pauses on the RoCE priority or IB port errors)
and, on Ethernet fabrics, a row per switch tier (BGP sessions of that tier's switches), then the GPUs (pure: plan → JSON).

The JSON is Grafana's dashboard model (schemaVersion 39: ``panels`` with ``type: "row"`` panels that hold the
panels below them, ``gridPos`` on a 24-column grid, Prometheus ``targets`` with ``expr``); the datasource is the
import-time input ``${DS_PROMETHEUS}``. Every expression is checked by ``promtool`` in the tests.
"""

from __future__ import annotations

import json
import re

from fabric.export.telemetry_rails import RAIL_RECORD, rail_devices
from fabric.plan.types import ClusterPlan

DATASOURCE = {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}
SCHEMA_VERSION = 39
_WIDTH = 12  # two panels per row of the 24-column grid
_HEIGHT = 8


class _Layout:
    """Panel ids and grid positions in reading order."""

    def __init__(self) -> None:
        self.panels: list[dict[str, object]] = []
        self._y = 0
        self._x = 0

    def row(self, title: str) -> None:
        if self._x:
            self._y += _HEIGHT
            self._x = 0
        self.panels.append({"id": len(self.panels) + 1, "type": "row", "title": title, "collapsed": False, "gridPos": self._pos(24, 1), "panels": []})
        self._y += 1

    def panel(self, title: str, unit: str, targets: list[tuple[str, str]]) -> None:
        self.panels.append(
            {
                "id": len(self.panels) + 1,
                "type": "timeseries",
                "title": title,
                "datasource": DATASOURCE,
                "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
                "gridPos": self._pos(_WIDTH, _HEIGHT),
                "targets": [
                    {"refId": chr(ord("A") + i), "datasource": DATASOURCE, "expr": e, "legendFormat": legend} for i, (e, legend) in enumerate(targets)
                ],
            }
        )
        self._x += _WIDTH
        if self._x >= 24:
            self._x = 0
            self._y += _HEIGHT

    def _pos(self, w: int, h: int) -> dict[str, int]:
        return {"x": self._x, "y": self._y, "w": w, "h": h}


def _rail_rows(plan: ClusterPlan, layout: _Layout) -> None:
    infiniband = plan.fabric is not None and plan.fabric.link_layer == "infiniband"
    for rail, hcas in rail_devices(plan).items():
        devices = "|".join(re.escape(h) for h in hcas)
        layout.row(f"Rail {rail} ({', '.join(hcas)})")
        layout.panel(
            f"Rail {rail}: RDMA transmit per node",
            "Bps",
            [
                (f'sum by (instance) (rate(node_infiniband_port_data_transmitted_bytes_total{{device=~"{devices}"}}[5m]))', "{{instance}}"),
                (f'{RAIL_RECORD}{{rail="{rail}"}}', "rail total"),
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
            names = {p.name for n in plan.nodes if n.role == "gpu" for p in n.interfaces if p.plane == "compute" and p.rail == rail}
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


def _tier_rows(plan: ClusterPlan, layout: _Layout) -> None:
    fabric = plan.fabric
    if fabric is None or fabric.link_layer == "infiniband":
        return  # an InfiniBand fabric runs no BGP; its switches report through the subnet manager (UFM), not scraped here
    for tier in sorted({s.tier for s in fabric.switches}, key=("leaf", "spine", "superspine").index):
        names = sorted(s.name for s in fabric.switches if s.tier == tier)
        layout.row(f"{tier.capitalize()} tier ({len(names)} switches)")
        layout.panel(
            f"{tier} BGP sessions established",
            "short",
            [(f'sum by (instance) (frr_bgp_peer_state{{tier="{tier}"}} == 1)', "{{instance}}")],
        )
        layout.panel(
            f"{tier} BGP sessions down",
            "short",
            [(f'count by (instance) (frr_bgp_peer_state{{tier="{tier}"}} == 0)', "{{instance}}")],
        )


def dashboard(plan: ClusterPlan) -> dict[str, object]:
    """The dashboard model: rails, switch tiers, GPUs."""
    layout = _Layout()
    _rail_rows(plan, layout)
    _tier_rows(plan, layout)
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
        "__inputs": [{"name": "DS_PROMETHEUS", "label": "Prometheus", "type": "datasource", "pluginId": "prometheus"}],
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
