"""Prometheus alert rules for a sick lossless fabric, from the plan (the RoCE priority, the compute ports).

Metric names are the exporters' own:
    node_exporter ethtool collector (``collector/ethtool_linux.go``): ``node_ethtool_<stat>``, with ``rx``/``tx``
    spelled ``received``/``transmitted``; the mlx5 driver's per-priority PFC counters ``rx_prioN_pause`` and
    ``tx_prioN_pause`` and its pause-storm prevention events ``tx_pause_storm_error_events`` (NVIDIA, "Understanding
    mlx5 ethtool Counters"). node_exporter netclass: ``node_network_carrier_changes_total``. node_exporter infiniband
    collector (``collector/infiniband_linux.go``): ``node_infiniband_link_downed_total``,
    ``node_infiniband_port_errors_received_total``. node_exporter rdma collector (``collector/rdma_linux.go``,
    ``--collector.rdma``): ``node_rdma_mlx5_np_ecn_marked_roce_packets_total``, ``node_rdma_mlx5_port_rcv_packets_total``.
    frr_exporter (tynany/frr_exporter ``collector/bgp.go``): ``frr_bgp_peer_state`` (0 down, 1 established, 2 admin down).
The switch-side rules (gnmic's series for the ``gnmic.yaml`` subscriptions) are ``telemetry.switch.switch_rules``; link
health (FEC, pre-FEC BER, flaps, optics, labelled from the plan) is ``telemetry.link_health`` on the switch side and
``telemetry_node_link`` on the nodes' HCAs.
"""

from __future__ import annotations

import re

import yaml

from fabric.export.telemetry.dashboard import dashboard_json
from fabric.export.telemetry.gnmi import gnmic_config
from fabric.export.telemetry.link_health import link_labels, link_rules
from fabric.export.telemetry.node_link import nic_labels, nic_rules
from fabric.export.telemetry.rails import rail_rules
from fabric.export.telemetry.scrape import scrape_config
from fabric.export.telemetry.switch import switch_rules
from fabric.plan.types import ClusterPlan

# Thresholds: starting points to tune per site, each with its reason.
PAUSE_STORM_FRAMES_PER_S = 1000  # incast pauses come in bursts; a NIC pausing its peer >1000/s for minutes cannot drain
PAUSE_STORM_FOR = "2m"
ECN_MARKED_RATIO = 0.05  # DCQCN marks some packets under load; over 5% of RoCE packets marked for 10m is chronic congestion
LINK_FLAPS_IN_10M = 2  # carrier changes: one down and one up is a single flap
BGP_DOWN_FOR = "1m"  # longer than a BFD-detected failover, shorter than anyone's patience


def _alert(name: str, expr: str, duration: str, severity: str, summary: str) -> dict[str, object]:
    return {"alert": name, "expr": expr, "for": duration, "labels": {"severity": severity}, "annotations": {"summary": summary}}


def _compute_ports(plan: ClusterPlan) -> str:
    names = sorted({i.name for n in plan.nodes if n.role == "gpu" for i in n.interfaces if i.plane == "compute"})
    return "|".join(re.escape(name) for name in names)


def _roce_rules(plan: ClusterPlan) -> list[dict[str, object]]:
    prio = plan.roce.priority
    return [
        _alert(
            "RocePauseStorm",
            f"rate(node_ethtool_transmitted_prio{prio}_pause[1m]) > {PAUSE_STORM_FRAMES_PER_S}",
            PAUSE_STORM_FOR,
            "critical",
            f"{{{{ $labels.instance }}}} {{{{ $labels.device }}}} keeps pausing priority {prio} (RoCE): a pause storm stalls the lossless class",
        ),
        _alert(
            "NicPauseStormPreventionTripped",
            "increase(node_ethtool_transmitted_pause_storm_error_events[5m]) > 0",
            "0s",
            "critical",
            "{{ $labels.instance }} {{ $labels.device }}: the NIC's pause-storm prevention stopped sending pauses (the NIC-side watchdog)",
        ),
        _alert(
            "RoceEcnMarkingHigh",
            f"rate(node_rdma_mlx5_np_ecn_marked_roce_packets_total[5m]) / rate(node_rdma_mlx5_port_rcv_packets_total[5m]) > {ECN_MARKED_RATIO}",
            "10m",
            "warning",
            "{{ $labels.instance }} {{ $labels.device }}: over 5% of received RoCE packets are ECN-marked (chronic congestion)",
        ),
        _alert(
            "FabricBgpSessionDown",
            "frr_bgp_peer_state == 0",
            BGP_DOWN_FOR,
            "critical",
            "{{ $labels.instance }}: BGP session to {{ $labels.peer }} is down",
        ),
    ]


def _ib_rules() -> list[dict[str, object]]:
    return [
        _alert(
            "InfinibandPortErrors",
            "increase(node_infiniband_port_errors_received_total[10m]) > 0 or increase(node_infiniband_link_downed_total[10m]) > 0",
            "0s",
            "warning",
            "{{ $labels.instance }} {{ $labels.device }} port {{ $labels.port }}: receive errors or a downed link",
        )
    ]


def alert_rules(plan: ClusterPlan) -> str:
    """``alerts.yml`` (a Prometheus rule file) for an on-prem fabric; empty string where the plan has no fabric.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> "RocePauseStorm" in alert_rules(plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml")))
        True
    """
    if plan.fabric is None:
        return ""
    ports = _compute_ports(plan)
    rules = _ib_rules() if plan.fabric.link_layer == "infiniband" else _roce_rules(plan)
    if ports:
        rules.append(
            _alert(
                "ComputeLinkFlapping",
                f'increase(node_network_carrier_changes_total{{device=~"{ports}"}}[10m]) > {LINK_FLAPS_IN_10M}',
                "0s",
                "warning",
                "{{ $labels.instance }} {{ $labels.device }} (compute plane) is flapping",
            )
        )
    groups: list[dict[str, object]] = [{"name": f"gpufabric-{plan.name}", "rules": rules}]
    switches = switch_rules(plan)
    if switches:
        groups.append({"name": f"gpufabric-{plan.name}-switches", "rules": switches})
    links = link_rules(plan)
    if links:
        groups.append({"name": f"gpufabric-{plan.name}-links", "rules": links})
    nics = nic_rules(plan)
    if nics:
        groups.append({"name": f"gpufabric-{plan.name}-nic-links", "rules": nics})
    rails = rail_rules(plan)
    if rails:
        groups.append({"name": f"gpufabric-{plan.name}-rails", "rules": rails})
    document = {"groups": groups}
    header = "# generated by fabric export telemetry from the cluster definition; do not edit. Metric sources: README.\n"
    return header + yaml.safe_dump(document, sort_keys=False, width=200)


def export_telemetry(plan: ClusterPlan) -> dict[str, str]:
    """``telemetry/alerts.yml``, ``telemetry/prometheus.yml`` and a Grafana dashboard for on-prem fabrics."""
    text = alert_rules(plan)
    if not text:
        return {}
    files = {
        "telemetry/alerts.yml": text,
        "telemetry/prometheus.yml": scrape_config(plan),
        f"telemetry/grafana-{plan.name}.json": dashboard_json(plan),
    }
    gnmic = gnmic_config(plan)
    if gnmic:
        files["telemetry/gnmic.yaml"] = gnmic
    # the plan's labels for the link-health alerts, switch ports and node NICs (node_exporter textfile collector, one host)
    labels = (link_labels(plan) if link_rules(plan) else "") + (nic_labels(plan) if nic_rules(plan) else "")
    if labels:
        files["telemetry/link-labels.prom"] = labels
    return dict(sorted(files.items()))
