"""The exported alert rules pass ``promtool check rules`` and fire on a synthetic pause storm (``promtool test rules``),
and stay quiet on ordinary incast pauses."""

from __future__ import annotations

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
    """One GPU node's eight compute ports (dgx-h100 names, rail order) sending at the given rates, 15 s scrapes."""
    devices = ["enp24s0np0", "enp64s0np0", "enp79s0np0", "enp94s0np0", "enp154s0np0", "enp192s0np0", "enp206s0np0", "enp220s0np0"]
    return [
        {"series": f'node_network_transmit_bytes_total{{device="{d}",instance="gpu001:9100"}}', "values": f"0+{rate * 15}x120"}
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
