"""Node-side link health under ``promtool test rules``: each GPU node HCA's alerts fire with its node, rail and leaf port
from the plan, and stay silent on healthy counters; node_exporter's flags keep exactly the stats the rules read.

Values and where they come from:
- Healthy InfiniBand ports: node_exporter's own published collector output (prometheus/node_exporter v1.12.1
  ``collector/fixtures/e2e-output.txt``: ``node_infiniband_link_downed_total``, ``..._link_error_recovery_total`` and
  ``..._port_errors_received_total`` 0 on mlx4_0, https://github.com/prometheus/node_exporter/blob/v1.12.1/collector/fixtures/e2e-output.txt):
  silent.
- Pre-FEC BER on the host: no mlx5 ``rx_corrected_bits_phy`` series is published with its time base, so the link's
  other end stands in: 7.24e-10 (sonic-net/sonic-swss#3757, the healthy BER the switch-side test uses) is silent and
  1e-5 (synthetic, a decade over the threshold) fires, each made the counter that gives it at the NIC's 400G.
- ``rx_pcs_symbol_err_phy``, ``link_down_events_phy``, IB symbol errors and link downs that grow: synthetic (no
  published series); each fires and a flat counter stays silent.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from fabric.export.telemetry import export_telemetry
from fabric.export.telemetry.node_link import ETHTOOL_PHY, NIC_PRE_FEC_BER, ethtool_name
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from tests.conftest import ROOT
from tests.export.test_telemetry_link_health import SCRAPE_S, _run, _series

ROCE = ROOT / "inventories/onprem-roce/cluster.yaml"
IB = ROOT / "inventories/onprem-ib/cluster.yaml"
CaseBuilder = Callable[[dict[str, str]], tuple[list[dict[str, str]], list[dict[str, object]]]]
needs_promtool = pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian package prometheus) is not installed")


def _nics(files: dict[str, str]) -> list[tuple[dict[str, str], str]]:
    found = [re.fullmatch(r"gpufabric_nic_info\{(.*)\} (\d+)", line) for line in files["telemetry/link-labels.prom"].splitlines()]
    return [(dict(re.findall(r'(\w+)="([^"]*)"', m.group(1))), m.group(2)) for m in found if m]


def _exporter(nic: dict[str, str], device: str = "", **extra: str) -> dict[str, str]:
    """A node_exporter series' labels for this NIC as Prometheus scrapes it (instance = its target)."""
    return {"instance": nic["target"], "job": "gpufabric-nodes", "device": device or nic["device"], **extra}


def _expected(nic: dict[str, str], severity: str, what: str, *, ib: bool = False) -> dict[str, object]:
    labels = {k: nic[k] for k in ("node", "rail", "leaf", "leaf_port")}
    device = nic["hca"] if ib else nic["device"]
    exp = {"severity": severity, "instance": nic["target"], "job": "gpufabric-nodes", "device": device, "target": nic["target"], **labels}
    exp |= {"hca": nic["hca"], "port": "1"} if ib else {"hca": nic["hca"]}
    where = f"{nic['node']} {device} (rail {nic['rail']}, {nic['leaf']} {nic['leaf_port']})" + (" port 1" if ib else "")
    return {"exp_labels": exp, "exp_annotations": {"summary": where + what}}


def _ber_counter(ber: float, bits: str) -> str:
    return f"0+{ber * int(bits) * SCRAPE_S:.0f}x80"


def _info_series(files: dict[str, str]) -> list[dict[str, str]]:
    # served from ONE host's textfile collector: that host's instance and job, not the NIC's
    host = {"instance": "10.0.0.250:9100", "job": "gpufabric-nodes"}
    return [{"series": _series("gpufabric_nic_info", {**labels, **host}), "values": f"{value}x80"} for labels, value in _nics(files)]


def _roce_cases(files: dict[str, str]) -> tuple[list[dict[str, str]], list[dict[str, object]]]:
    (noisy, bits), (quiet, _), (lossy, _), (flappy, _) = _nics(files)[:4]
    corrected, symbols, downs = (ethtool_name(s) for s in ETHTOOL_PHY)
    series = _info_series(files)
    series += [
        {"series": _series(corrected, _exporter(noisy)), "values": _ber_counter(1e-5, bits)},  # synthetic
        {"series": _series(corrected, _exporter(quiet)), "values": _ber_counter(7.24e-10, bits)},  # sonic-swss#3757
        {"series": _series(symbols, _exporter(lossy)), "values": "0x20 386x60"},
        {"series": _series(symbols, _exporter(quiet)), "values": "0x80"},
        {"series": _series(downs, _exporter(flappy)), "values": "0x20 3x60"},  # three downs
        {"series": _series(downs, _exporter(quiet)), "values": "1x80"},  # one old down, flat
        {"series": _series(symbols, {"instance": "10.9.9.9:9100", "job": "gpufabric-nodes", "device": "enp1s0"}), "values": "0x20 5x60"},
    ]
    stranger = {
        "exp_labels": {"severity": "critical", "instance": "10.9.9.9:9100", "job": "gpufabric-nodes", "device": "enp1s0", "target": "10.9.9.9:9100"},
        "exp_annotations": {
            "summary": "10.9.9.9:9100 enp1s0: 5 symbol errors FEC did not correct in 10 minutes (traffic lost: replace cable or optic)"
        },
    }
    tests: list[dict[str, object]] = [
        {
            "eval_time": "18m",
            "alertname": "NicPreFecBerHigh",
            "exp_alerts": [
                _expected(noisy, "warning", f": pre-FEC BER 1e-05 above {NIC_PRE_FEC_BER:g} (a degrading cable, optic or dirty connector)")
            ],
        },
        {"eval_time": "8m", "alertname": "NicPreFecBerHigh", "exp_alerts": []},  # not yet for 10m
        {
            "eval_time": "8m",
            "alertname": "NicUncorrectedSymbolErrors",
            "exp_alerts": [
                _expected(lossy, "critical", ": 386 symbol errors FEC did not correct in 10 minutes (traffic lost: replace cable or optic)"),
                stranger,
            ],
        },
        {
            "eval_time": "8m",
            "alertname": "NicLinkFlapping",
            "exp_alerts": [_expected(flappy, "warning", ": the link went down 3 times in 10 minutes")],
        },
        {"eval_time": "4m", "alertname": "NicLinkFlapping", "exp_alerts": []},
    ]
    return series, tests


def _ib_cases(files: dict[str, str]) -> tuple[list[dict[str, str]], list[dict[str, object]]]:
    (marginal, _), (healthy, _), (broken, _), (burst, _) = _nics(files)[:4]
    series = _info_series(files)
    cases = ((marginal, "0+2x80", "0x80"), (healthy, "0x80", "0x80"), (broken, "0x80", "0x20 1x60"), (burst, "0x20 10 20 30 40x57", "0x80"))
    for nic, symbol, downed in cases:  # burst: 40 symbol errors over one minute (a link retraining), then flat
        ib = _exporter(nic, nic["hca"], port="1")
        series += [
            {"series": _series("node_infiniband_symbol_error_total", ib), "values": symbol},  # marginal: growing throughout
            {"series": _series("node_infiniband_link_downed_total", ib), "values": downed},
            {"series": _series("node_infiniband_link_error_recovery_total", ib), "values": "0x80"},  # e2e-output.txt: 0
            {"series": _series("node_infiniband_port_errors_received_total", ib), "values": "0x80"},  # e2e-output.txt: 0
        ]
    tests: list[dict[str, object]] = [
        {
            "eval_time": "18m",
            "alertname": "IbSymbolErrors",
            "exp_alerts": [_expected(marginal, "warning", ": symbol errors for 10m (a marginal cable or transceiver)", ib=True)],
        },
        {"eval_time": "8m", "alertname": "IbSymbolErrors", "exp_alerts": []},  # not yet for 10m
        {  # the burst's errors stay in a 10-minute window for over 10 minutes, never in a 5-minute one
            "eval_time": "15m30s",
            "alertname": "IbSymbolErrors",
            "exp_alerts": [_expected(marginal, "warning", ": symbol errors for 10m (a marginal cable or transceiver)", ib=True)],
        },
        {
            "eval_time": "8m",
            "alertname": "IbLinkDowned",
            "exp_alerts": [_expected(broken, "critical", ": the link failed to recover from an error and went down", ib=True)],
        },
        {"eval_time": "8m", "alertname": "IbLinkErrorRecovery", "exp_alerts": []},
        {"eval_time": "18m", "alertname": "IbPortReceiveErrors", "exp_alerts": []},
    ]
    return series, tests


@needs_promtool
@pytest.mark.parametrize(("definition", "cases"), [(ROCE, _roce_cases), (IB, _ib_cases)], ids=["roce", "ib"])
def test_nic_alerts_fire_per_hca_with_the_plans_labels_and_stay_silent(definition: Path, cases: CaseBuilder, tmp_path: Path) -> None:
    files = export_telemetry(plan_cluster(load_cluster(definition)))
    series, tests = cases(files)
    result = _run(tmp_path, files, series, tests)
    assert result.returncode == 0, result.stdout + result.stderr


@needs_promtool
@pytest.mark.parametrize(("definition", "cases"), [(ROCE, _roce_cases), (IB, _ib_cases)], ids=["roce", "ib"])
def test_the_nic_tests_can_fail(definition: Path, cases: CaseBuilder, tmp_path: Path) -> None:
    """Control: expecting silence where each alert fired makes promtool name each."""
    files = export_telemetry(plan_cluster(load_cluster(definition)))
    series, tests = cases(files)
    silent = [{**t, "exp_alerts": []} for t in tests if t["exp_alerts"]]
    result = _run(tmp_path, files, series, silent)
    assert result.returncode != 0
    for check in silent:
        assert f"alertname: {check['alertname']}" in result.stdout + result.stderr


def test_every_gpu_nic_is_labelled_with_its_rail_and_leaf_port() -> None:
    plan = plan_cluster(load_cluster(ROCE))
    nics = {(n["node"], n["device"]): n for n, _ in _nics(export_telemetry(plan))}
    assert plan.fabric is not None
    host = {(k.b_device, k.b_port): k for k in plan.fabric.links if k.kind == "host"}
    for node in (n for n in plan.nodes if n.role == "gpu"):
        for port in (i for i in node.interfaces if i.plane == "compute"):
            nic = nics[(node.hostname, port.name)]
            assert (nic["hca"], nic["rail"]) == (port.hca, str(port.rail))
            assert (nic["leaf"], nic["leaf_port"]) == (host[(node.hostname, port.name)].a_device, host[(node.hostname, port.name)].a_port)


# mlx5 ethtool stat names (docs.kernel.org .../mellanox/mlx5/counters.html): the ones the rules read, and per-ring,
# vport and other physical ones an mlx5 port also has, which the include filter must leave out
MLX5_READ = ("rx_prio3_pause", "tx_prio3_pause", "tx_pause_storm_error_events", *ETHTOOL_PHY, "rx_err_lane_0_phy", "rx_err_lane_3_phy")
MLX5_OTHER = ("rx0_packets", "tx0_bytes", "ch0_events", "rx_vport_unicast_bytes", "rx_bytes_phy", "rx_prio3_bytes", "rx_pause_ctrl_phy")


def test_node_exporter_flags_keep_exactly_the_stats_the_rules_read() -> None:
    files = export_telemetry(plan_cluster(load_cluster(ROCE)))
    header = next(line for line in files["telemetry/prometheus.yml"].splitlines() if line.startswith("# node_exporter"))
    assert "--collector.ethtool " in header
    assert "--collector.rdma" in header
    include = re.search(r"--collector\.ethtool\.metrics-include=(\S+?)'", header)
    assert include is not None
    pattern = re.compile(include.group(1))
    assert all(pattern.search(stat) for stat in MLX5_READ)
    assert not any(pattern.search(stat) for stat in MLX5_OTHER)
    # every node_ethtool_ series the rules read comes from an included stat
    rules = [r["expr"] for g in yaml.safe_load(files["telemetry/alerts.yml"])["groups"] for r in g["rules"]]
    read = {m for expr in rules for m in re.findall(r"node_ethtool_[a-z0-9_]+", expr)}
    assert read
    assert read <= {ethtool_name(stat) for stat in MLX5_READ}


def test_ethtool_names_follow_node_exporters_rule() -> None:
    # collector/ethtool_linux.go buildEthtoolFQName: (^|_)rx(_|$) -> received, (^|_)tx(_|$) -> transmitted
    assert ethtool_name("tx_prio3_pause") == "node_ethtool_transmitted_prio3_pause"
    assert ethtool_name("rx_err_lane_0_phy") == "node_ethtool_received_err_lane_0_phy"
    assert ethtool_name("link_down_events_phy") == "node_ethtool_link_down_events_phy"
