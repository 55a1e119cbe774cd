"""Link health on the node side: each GPU node HCA's PHY counters, labelled with its node, rail and the leaf port the
plan cables it to (pure: plan → rules, labels, node_exporter flags).

Series (node_exporter v1.12.1 @a7dcc3a0):

- **Ethernet (RoCE)**, the ethtool collector (``collector/ethtool_linux.go``; off by default, ``--collector.ethtool``):
  ``node_ethtool_<stat>{device=<netdev>}``, the stat lower-cased with ``rx``/``tx`` spelled ``received``/
  ``transmitted`` (``buildEthtoolFQName``), filtered by ``--collector.ethtool.metrics-include`` on the stat's own
  name (default ``.*``; an mlx5 port has hundreds of per-ring stats, so ``NODE_EXPORTER_FLAGS`` keeps only what the
  rules read). The mlx5 physical-port counters (docs.kernel.org/networking/device_drivers/ethernet/mellanox/mlx5/
  counters.html): ``rx_corrected_bits_phy`` "The number of corrected bits on this port according to active FEC
  (RS/FC)" (the pre-FEC BER is its rate over the line rate: the plan's port speed, as on the switch side),
  ``rx_pcs_symbol_err_phy`` symbol errors FEC did not correct ("traffic is lost. You may need to replace the
  cable/transceiver"), ``rx_err_lane_<l>_phy`` raw errors per lane before FEC, ``link_down_events_phy`` "the number
  of times where the link operative state changed to down. In case this counter is increasing it may imply port
  flapping".
- **InfiniBand**, the infiniband collector (``collector/infiniband_linux.go``, on by default):
  ``node_infiniband_{symbol_error,link_downed,link_error_recovery,port_errors_received}_total{device=<hca>, port}``
  from the port's PMA counters ``symbol_error``, ``link_downed``, ``link_error_recovery``, ``port_rcv_errors``.

The plan's labels reach Prometheus as ``gpufabric_nic_info{target, device, hca, node, rail, leaf, leaf_port}`` (value:
the port speed in bit/s) in ``link-labels.prom``, one per compute NIC of each GPU node; ``target`` is the node's
node_exporter address as ``prometheus.yml`` scrapes it (the series' ``instance``, which a textfile series cannot
carry: Prometheus would rename it ``exported_instance``). A rule copies ``instance`` to ``target`` and joins on
``(target, device)`` (ethtool) or ``(target, hca)`` (infiniband); a NIC the file does not name still alerts.
"""

from __future__ import annotations

import re

from fabric.plan.types import ClusterPlan, NodePlan

NIC_INFO = "gpufabric_nic_info"
NODE_EXPORTER_PORT = 9100  # node_exporter's default (Prometheus' default port allocations)
NODE_EXPORTER = "v1.12.1"  # the release whose collectors and flags this module follows
ETHTOOL_PHY = ("rx_corrected_bits_phy", "rx_pcs_symbol_err_phy", "link_down_events_phy")
ETHTOOL_LANES = r"rx_err_lane_[0-9]+_phy"
ETHTOOL_PAUSE = ("rx_prio[0-7]_pause", "tx_prio[0-7]_pause", "tx_pause_storm_error_events")  # the RoCE rules' (telemetry)
# Thresholds: starting points to tune per site, each with its reason.
NIC_PRE_FEC_BER = 1e-6  # as the switch side (telemetry.link_health.PRE_FEC_BER): two decades under the KP4 FEC's limit
NIC_LINK_DOWNS_IN_10M = 1  # link_down_events_phy counts downs only: more than one in 10 minutes is a flapping port
IB_SYMBOL_ERRORS_FOR = "10m"  # a burst at link training is normal; symbol errors growing for 10 minutes are not
IB_GROWING_WINDOW = "5m"  # shorter than the `for`, so one burst (true for one window) never lasts the 10 minutes


def ethtool_name(stat: str) -> str:
    """node_exporter's name for an ethtool stat (``buildEthtoolFQName``).

    Example:
        >>> ethtool_name("rx_corrected_bits_phy"), ethtool_name("link_down_events_phy")
        ('node_ethtool_received_corrected_bits_phy', 'node_ethtool_link_down_events_phy')
    """
    name = re.sub(r"(^|_)rx(_|$)", r"\1received\2", stat.lower())
    return "node_ethtool_" + re.sub(r"(^|_)tx(_|$)", r"\1transmitted\2", name)


NODE_EXPORTER_FLAGS = (
    "--collector.ethtool",
    f"--collector.ethtool.metrics-include=^({'|'.join((*ETHTOOL_PAUSE, *ETHTOOL_PHY, ETHTOOL_LANES))})$",
    "--collector.rdma",
)


def node_target(node: NodePlan, port: int) -> str | None:
    """``<in-band address>:<port>``, the scrape target (and so the ``instance``) of a node's exporter; None without one."""
    inband = next((i.address for i in node.interfaces if i.plane == "inband" and i.address), None)
    return None if inband is None else f"{inband.split('/', maxsplit=1)[0]}:{port}"


def _nics(plan: ClusterPlan) -> list[tuple[str, dict[str, str], int]]:
    """(target, labels, bit/s) per compute NIC with an HCA on the GPU nodes node_exporter scrapes."""
    links = plan.fabric.links if plan.fabric else ()
    leaf: dict[tuple[str, str], tuple[str, str]] = {(k.b_device, k.b_port): (k.a_device, k.a_port) for k in links if k.kind == "host"}
    found: list[tuple[str, dict[str, str], int]] = []
    for node in plan.nodes:
        target = node_target(node, NODE_EXPORTER_PORT)
        if node.role != "gpu" or target is None:
            continue
        for port in node.interfaces:
            if port.plane != "compute" or port.hca is None:
                continue
            switch, switch_port = leaf.get((node.hostname, port.name), ("", ""))
            labels = {"device": port.name, "hca": port.hca, "node": node.hostname, "rail": "" if port.rail is None else str(port.rail)}
            labels |= {"leaf": switch, "leaf_port": switch_port}
            found.append((target, {k: v for k, v in labels.items() if v}, port.speed_gbps * 1_000_000_000))
    return found


def nic_labels(plan: ClusterPlan) -> str:
    """The ``gpufabric_nic_info`` part of ``link-labels.prom``; empty without GPU nodes' compute NICs."""
    nics = _nics(plan)
    if not nics:
        return ""
    lines = [
        f"# HELP {NIC_INFO} The plan's view of a GPU node's compute NIC: its rail and leaf port. Value: the port speed in bit/s.",
        f"# TYPE {NIC_INFO} gauge",
    ]
    for target, labels, bits in nics:
        text = ",".join(f'{k}="{v}"' for k, v in {"target": target, **labels}.items())
        lines.append(f"{NIC_INFO}{{{text}}} {bits}")
    return "\n".join(lines) + "\n"


def _targeted(expr: str) -> str:
    return f'label_replace({expr}, "target", "$1", "instance", "(.+)")'


def _labelled(expr: str, on: str, keep: str) -> str:
    value = _targeted(expr)
    if on == "hca":
        value = f'label_replace({value}, "hca", "$1", "device", "(.+)")'
    return f"(({value}) * on(target, {on}) group_left({keep}) ({NIC_INFO} > bool 0) or ({value}) unless on(target, {on}) {NIC_INFO})"


def _alert(name: str, expr: str, duration: str, severity: str, summary: str) -> dict[str, object]:
    return {"alert": name, "expr": expr, "for": duration, "labels": {"severity": severity}, "annotations": {"summary": summary}}


WHERE = (
    "{{ with $labels.node }}{{ . }}{{ else }}{{ $labels.instance }}{{ end }} {{ $labels.device }}"
    "{{ with $labels.rail }} (rail {{ . }}{{ with $labels.leaf }}, {{ . }} {{ $labels.leaf_port }}{{ end }}){{ end }}"
)
ETH_KEEP = "node, hca, rail, leaf, leaf_port"
IB_KEEP = "node, rail, leaf, leaf_port"


def nic_rules(plan: ClusterPlan) -> list[dict[str, object]]:
    """The node-side link-health alerts: ethtool's mlx5 PHY counters on Ethernet, the HCA's PMA counters on InfiniBand."""
    fabric = plan.fabric
    if fabric is None or not _nics(plan):
        return []
    if fabric.link_layer == "infiniband":
        return _ib_rules()
    corrected, symbols, downs = (ethtool_name(stat) for stat in ETHTOOL_PHY)
    ber = f"{_targeted(f'rate({corrected}[5m])')} / on(target, device) group_left({ETH_KEEP}) {NIC_INFO}"
    return [
        _alert(
            "NicPreFecBerHigh",
            f"{ber} > {NIC_PRE_FEC_BER:g}",
            "10m",
            "warning",
            f"{WHERE}: pre-FEC BER {{{{ $value }}}} above {NIC_PRE_FEC_BER:g} (a degrading cable, optic or dirty connector)",
        ),
        _alert(
            "NicUncorrectedSymbolErrors",
            f"{_labelled(f'increase({symbols}[10m])', 'device', ETH_KEEP)} > 0",
            "0s",
            "critical",
            f'{WHERE}: {{{{ $value | printf "%.0f" }}}} symbol errors FEC did not correct in 10 minutes (traffic lost: replace cable or optic)',
        ),
        _alert(
            "NicLinkFlapping",
            f"{_labelled(f'increase({downs}[10m])', 'device', ETH_KEEP)} > {NIC_LINK_DOWNS_IN_10M}",
            "0s",
            "warning",
            f'{WHERE}: the link went down {{{{ $value | printf "%.0f" }}}} times in 10 minutes',
        ),
    ]


def _ib_rules() -> list[dict[str, object]]:
    def over(counter: str, window: str = "10m") -> str:
        return _labelled(f"increase(node_infiniband_{counter}_total[{window}])", "hca", IB_KEEP)

    return [
        _alert(
            "IbSymbolErrors",
            f"{over('symbol_error', IB_GROWING_WINDOW)} > 0",
            IB_SYMBOL_ERRORS_FOR,
            "warning",
            f"{WHERE} port {{{{ $labels.port }}}}: symbol errors for {IB_SYMBOL_ERRORS_FOR} (a marginal cable or transceiver)",
        ),
        _alert(
            "IbLinkDowned",
            f"{over('link_downed')} > 0",
            "0s",
            "critical",
            f"{WHERE} port {{{{ $labels.port }}}}: the link failed to recover from an error and went down",
        ),
        _alert(
            "IbLinkErrorRecovery",
            f"{over('link_error_recovery')} > 0",
            "0s",
            "warning",
            f"{WHERE} port {{{{ $labels.port }}}}: the link retrained to recover from errors",
        ),
        _alert(
            "IbPortReceiveErrors",
            f"{over('port_errors_received', IB_GROWING_WINDOW)} > 0",
            IB_SYMBOL_ERRORS_FOR,
            "warning",
            f"{WHERE} port {{{{ $labels.port }}}}: received packets with errors for {IB_SYMBOL_ERRORS_FOR}",
        ),
    ]
