"""The exported alert rules pass ``promtool check rules`` and fire on a synthetic pause storm (``promtool test rules``),
and stay quiet on ordinary incast pauses."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from fabric.export.telemetry import PAUSE_STORM_FRAMES_PER_S, export_telemetry
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from tests.conftest import EXAMPLES, ROOT

PROMTOOL = shutil.which("promtool")
pytestmark = pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian package prometheus) is not installed (./dev setup)")
LABELS = '{device="enp24s0np0",instance="gpu001:9100"}'


def _promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None
    return subprocess.run([PROMTOOL, *args], capture_output=True, text=True, cwd=cwd, check=False, timeout=60)


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.parent.name.startswith(("onprem", "lab"))], ids=lambda p: p.parent.name)
def test_promtool_accepts_the_rules(example: Path, tmp_path: Path) -> None:
    rules = tmp_path / "alerts.yml"
    rules.write_text(export_telemetry(plan_cluster(load_cluster(example)))["telemetry/alerts.yml"], encoding="utf-8")
    result = _promtool("check", "rules", str(rules), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_pause_storm_fires_and_incast_bursts_do_not(tmp_path: Path) -> None:
    plan = plan_cluster(load_cluster(ROOT / "inventories/onprem-roce/cluster.yaml"))
    (tmp_path / "alerts.yml").write_text(export_telemetry(plan)["telemetry/alerts.yml"], encoding="utf-8")
    storm_per_scrape = PAUSE_STORM_FRAMES_PER_S * 15 * 2  # twice the threshold, 15 s scrapes
    burst_per_scrape = PAUSE_STORM_FRAMES_PER_S * 15 // 4
    tests = {
        "rule_files": ["alerts.yml"],
        "evaluation_interval": "15s",
        "tests": [
            {
                "interval": "15s",
                "input_series": [
                    {"series": f"node_ethtool_transmitted_prio3_pause{LABELS}", "values": f"0+{storm_per_scrape}x40"},
                    {
                        "series": 'node_ethtool_transmitted_prio3_pause{device="enp64s0np0",instance="gpu002:9100"}',
                        "values": f"0+{burst_per_scrape}x40",
                    },
                ],
                "alert_rule_test": [
                    {"eval_time": "1m", "alertname": "RocePauseStorm", "exp_alerts": []},  # not yet for 2m
                    {
                        "eval_time": "5m",
                        "alertname": "RocePauseStorm",
                        "exp_alerts": [
                            {
                                "exp_labels": {"severity": "critical", "device": "enp24s0np0", "instance": "gpu001:9100"},
                                "exp_annotations": {
                                    "summary": "gpu001:9100 enp24s0np0 keeps pausing priority 3 (RoCE): a pause storm stalls the lossless class"
                                },
                            }
                        ],
                    },
                ],
            }
        ],
    }
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(tests, sort_keys=False), encoding="utf-8")
    result = _promtool("test", "rules", "tests.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_cloud_clusters_export_no_switch_alerts() -> None:
    assert export_telemetry(plan_cluster(load_cluster(ROOT / "inventories/aws-p5/cluster.yaml"))) == {}


def _rail_series(per_rail_bytes_per_s: list[int]) -> list[dict[str, str]]:
    """One GPU node's eight compute HCAs (dgx-h100, rail order) sending at the given rates, 15 s scrapes."""
    devices = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]
    return [
        {
            "series": f'node_infiniband_port_data_transmitted_bytes_total{{device="{d}",port="1",instance="gpu001:9100"}}',
            "values": f"0+{rate * 15}x120",
        }
        for d, rate in zip(devices, per_rail_bytes_per_s, strict=True)
    ]


def _run_rule_test(tmp_path: Path, cases: list[dict[str, object]]) -> subprocess.CompletedProcess[str]:
    plan = plan_cluster(load_cluster(ROOT / "inventories/onprem-roce/cluster.yaml"))
    (tmp_path / "alerts.yml").write_text(export_telemetry(plan)["telemetry/alerts.yml"], encoding="utf-8")
    tests = {"rule_files": ["alerts.yml"], "evaluation_interval": "15s", "tests": cases}
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(tests, sort_keys=False), encoding="utf-8")
    return _promtool("test", "rules", "tests.yml", cwd=tmp_path)


def test_rail_imbalance_fires_on_a_lagging_rail_only_when_busy_and_after_its_15_minutes(tmp_path: Path) -> None:
    busy = 1_250_000_000  # 10 Gb/s per rail
    lagging = [busy, busy, 250_000_000, busy, busy, busy, busy, busy]  # rail 3 at a fifth of its peers
    fired = {
        "exp_labels": {"severity": "warning", "rail": "3"},
        "exp_annotations": {
            "summary": "rail 3 carries 250MB/s, outside 0.5-1.5x the mean rail: a rail leaf, its ports or a NIC is off (or traffic crosses rails)"
        },
    }
    cases = [
        {
            "interval": "15s",
            "input_series": _rail_series(lagging),
            "alert_rule_test": [
                {"eval_time": "10m", "alertname": "RailImbalance", "exp_alerts": []},  # pending: not yet 15 minutes
                {"eval_time": "25m", "alertname": "RailImbalance", "exp_alerts": [fired]},
            ],
        },
        {  # balanced rails: quiet
            "interval": "15s",
            "input_series": _rail_series([busy] * 8),
            "alert_rule_test": [{"eval_time": "25m", "alertname": "RailImbalance", "exp_alerts": []}],
        },
        {  # the same shape on an idle fabric (mean rail below 1 Gb/s): quiet
            "interval": "15s",
            "input_series": _rail_series([r // 100 for r in lagging]),
            "alert_rule_test": [{"eval_time": "25m", "alertname": "RailImbalance", "exp_alerts": []}],
        },
    ]
    result = _run_rule_test(tmp_path, cases)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_rail_rule_test_can_fail(tmp_path: Path) -> None:
    """Control: expecting silence on the lagging rail makes promtool fail, so the test above proves the alert fires."""
    lagging = [1_250_000_000] * 8
    lagging[2] = 250_000_000
    cases = [
        {
            "interval": "15s",
            "input_series": _rail_series(lagging),
            "alert_rule_test": [{"eval_time": "25m", "alertname": "RailImbalance", "exp_alerts": []}],
        }
    ]
    assert _run_rule_test(tmp_path, cases).returncode != 0


ON_PREM = [e for e in EXAMPLES if e.parent.name.startswith(("onprem", "lab"))]


@pytest.mark.parametrize("example", ON_PREM, ids=lambda p: p.parent.name)
def test_promtool_accepts_the_scrape_config_with_its_rule_file(example: Path, tmp_path: Path) -> None:
    for relative, text in export_telemetry(plan_cluster(load_cluster(example))).items():
        (tmp_path / Path(relative).name).write_text(text, encoding="utf-8")
    result = _promtool("check", "config", "prometheus.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout  # it read alerts.yml too
    config = yaml.safe_load((tmp_path / "prometheus.yml").read_text(encoding="utf-8"))
    jobs = {job["job_name"]: [t for sc in job["static_configs"] for t in sc["targets"]] for job in config["scrape_configs"]}
    plan = plan_cluster(load_cluster(example))
    assert len(jobs["gpufabric-nodes"]) == len(plan.nodes)  # every node's node_exporter on its in-band address
    assert len(jobs.get("gpufabric-dcgm", [])) == sum(1 for n in plan.nodes if n.gpus)


def _dashboard_exprs(dashboard: dict[str, object]) -> list[str]:
    panels = dashboard["panels"]
    assert isinstance(panels, list)
    return [t["expr"] for p in panels for t in p.get("targets", [])]


def _promtool_parses(exprs: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Every expression as a recording rule: ``promtool check rules`` parses each with Prometheus' own PromQL parser."""
    rules = {"groups": [{"name": "dashboard", "rules": [{"record": f"dashboard:expr_{i}", "expr": e} for i, e in enumerate(exprs)]}]}
    (tmp_path / "exprs.yml").write_text(yaml.safe_dump(rules, width=1000), encoding="utf-8")
    return _promtool("check", "rules", "exprs.yml", cwd=tmp_path)


@pytest.mark.parametrize("example", ON_PREM, ids=lambda p: p.parent.name)
def test_the_dashboard_has_a_row_per_rail_and_tier_and_every_expression_parses(example: Path, tmp_path: Path) -> None:
    plan = plan_cluster(load_cluster(example))
    dashboard = json.loads(export_telemetry(plan)[f"telemetry/grafana-{plan.name}.json"])
    panels = dashboard["panels"]
    assert [p["id"] for p in panels] == list(range(1, len(panels) + 1))
    assert all(p["gridPos"]["x"] >= 0 and p["gridPos"]["x"] + p["gridPos"]["w"] <= 24 for p in panels)
    spots = [(p["gridPos"]["x"], p["gridPos"]["y"]) for p in panels]
    assert len(spots) == len(set(spots))  # no two panels on the same spot
    rows = [p["title"] for p in panels if p["type"] == "row"]
    hcas = {i.hca for n in plan.nodes if n.role == "gpu" for i in n.interfaces if i.plane == "compute" and i.hca}
    rails = {i.rail for n in plan.nodes if n.role == "gpu" for i in n.interfaces if i.plane == "compute" and i.hca}
    assert sum(r.startswith("Rail ") for r in rows) == len(rails if hcas else set())
    assert plan.fabric is not None
    tiers = {s.tier for s in plan.fabric.switches} if plan.fabric.link_layer == "ethernet" else set()
    assert sum(r.endswith("switches)") for r in rows) == len(tiers)
    exprs = _dashboard_exprs(dashboard)
    assert exprs
    result = _promtool_parses(exprs, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(exprs)} rules found" in result.stdout


def test_the_expression_check_refuses_a_broken_expression(tmp_path: Path) -> None:
    assert (
        _promtool_parses(['sum by (instance) (rate(node_infiniband_port_data_transmitted_bytes_total{device=~"mlx5_0"}[5m])'], tmp_path).returncode
        != 0
    )


def test_gnmic_subscribes_every_sonic_and_cumulus_switch_on_the_roce_priority(tmp_path: Path) -> None:
    for definition, nos, port in (
        (ROOT / "inventories/onprem-roce/cluster.yaml", "sonic", 8080),
        (ROOT / "tests/data/plan/three-tier/cluster.yaml", "cumulus", 9339),
    ):
        plan = plan_cluster(load_cluster(definition))
        config = yaml.safe_load(export_telemetry(plan)["telemetry/gnmic.yaml"])
        assert plan.fabric is not None
        switches = {s.name: s for s in plan.fabric.switches if s.nos == nos}
        assert sorted(t["name"] for t in config["targets"].values()) == sorted(switches)
        for address, target in config["targets"].items():
            assert address == f"{switches[target['name']].mgmt_address.split('/')[0]}:{port}"
            # Cumulus 5.14 (this definition's release) gets the link-health paths under their pre-5.15 names; SONiC
            # its BGP, flap and optics tables (STATE_DB, APPL_DB, STATE_DB)
            sonic = ["sonic-bgp", "sonic-flaps", "sonic-optics"]
            assert target["subscriptions"] == [f"{nos}-fabric", *(sonic if nos == "sonic" else ["cumulus-link-ethernet-phy"])]
        paths = config["subscriptions"][f"{nos}-fabric"]["paths"]
        prio = plan.roce.priority
        pause = f"SAI_PORT_STAT_PFC_{prio}_RX_PKTS" if nos == "sonic" else f"switch-priority[priority={prio}]/state/counters/in-pause-pkts"
        assert any(pause in p for p in paths)
        assert config["outputs"]["prometheus"]["type"] == "prometheus"
        scrape = yaml.safe_load(export_telemetry(plan)["telemetry/prometheus.yml"])
        assert "gpufabric-gnmic" in {job["job_name"] for job in scrape["scrape_configs"]}


def test_no_gnmic_for_an_infiniband_fabric_or_uncovered_noses() -> None:
    assert "telemetry/gnmic.yaml" not in export_telemetry(plan_cluster(load_cluster(ROOT / "inventories/onprem-ib/cluster.yaml")))
    assert "telemetry/gnmic.yaml" not in export_telemetry(plan_cluster(load_cluster(ROOT / "inventories/lab/cluster.yaml")))  # FRR only
