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
