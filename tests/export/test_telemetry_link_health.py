"""Link-health alerts under ``promtool test rules``: they fire on counter values SONiC's own pull requests published and
stay silent on the healthy ones published beside them, with the plan's node, rail and leaf on the alert.

Values and where they were published:
- FEC_UNCORR 34 on a port that is up (sonic-net/sonic-utilities#2027, ``show interfaces counters fec-stats``,
  https://github.com/sonic-net/sonic-utilities/pull/2027) fires; FEC_UNCORR 0 on every port
  (https://github.com/sonic-net/sonic-swss/pull/3757) and 4 that does not grow (sonic-utilities#4124) do not.
- Pre-FEC BER 7.24e-10 and its maximum 2.35e-09 (Ethernet48, sonic-swss#3757), the worst published: silent. No SONiC
  thread publishes a failing pre-FEC BER, so the firing value is synthetic: 1e-5, a decade over the threshold. Each BER
  becomes the corrected-bits counter that gives it at the port's 400G (SONiC's port_rates.lua formula).
- Optics: rx1power -11.163 dBm and temperature 56.102 °C (a module's TRANSCEIVER_DOM_SENSOR in
  https://github.com/sonic-net/sonic-platform-common/pull/486): the RX power fires, the temperature does not; the RX
  control sits at that family's low-power warning threshold, -6.899 dBm (sonic-platform-common#235), and does not fire.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from fabric.export.telemetry import export_telemetry
from fabric.export.telemetry.gnmi import CUMULUS_PHY_OLD, CUMULUS_RX_POWER, CUMULUS_TEMPERATURE, gnmic_metric_name
from fabric.export.telemetry.link_health import CARRIER, PRE_FEC_BER
from fabric.export.telemetry.sonic import SONIC_PORT
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from tests.conftest import DATA, ROOT

PROMTOOL = shutil.which("promtool")
pytestmark = pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian package prometheus) is not installed (./dev setup)")
SCRAPE_S = 15
SONIC = ROOT / "inventories/onprem-roce/cluster.yaml"
CUMULUS = DATA / "plan/three-tier/cluster.yaml"


def _info(files: dict[str, str]) -> list[tuple[dict[str, str], str]]:
    """(labels, value) of each gpufabric_link_info sample in link-labels.prom."""
    found = [re.fullmatch(r"gpufabric_link_info\{(.*)\} (\d+)", line) for line in files["telemetry/link-labels.prom"].splitlines()]
    return [(dict(re.findall(r'(\w+)="([^"]*)"', m.group(1))), m.group(2)) for m in found if m]


def _series(name: str, labels: dict[str, str]) -> str:
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def _hosts(files: dict[str, str], count: int) -> list[tuple[dict[str, str], str]]:
    return [(labels, value) for labels, value in _info(files) if "node" in labels][:count]


def _run(tmp_path: Path, files: dict[str, str], series: list[dict[str, str]], tests: list[dict[str, object]]) -> subprocess.CompletedProcess[str]:
    (tmp_path / "alerts.yml").write_text(files["telemetry/alerts.yml"], encoding="utf-8")
    document = {
        "rule_files": ["alerts.yml"],
        "evaluation_interval": f"{SCRAPE_S}s",
        "tests": [{"interval": f"{SCRAPE_S}s", "input_series": series, "alert_rule_test": tests}],
    }
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(document, sort_keys=False, width=400), encoding="utf-8")
    assert PROMTOOL is not None
    return subprocess.run([PROMTOOL, "test", "rules", "tests.yml"], capture_output=True, text=True, cwd=tmp_path, check=False, timeout=60)


def _expected(labels: dict[str, str], severity: str, what: str) -> dict[str, object]:
    """One expected alert: the labels, and the summary naming the port and what the plan says is cabled to it."""
    where = f"{labels['source']} {labels['port']}" + (
        f" to {labels['node']} {labels['node_port']} (rail {labels['rail']})" if "node" in labels else ""
    )
    return {"exp_labels": {"severity": severity, **labels}, "exp_annotations": {"summary": where + what}}


UNCORR_34 = ": 34 frames FEC could not correct in 10 minutes (frames lost: reseat or replace the cable or optic)"
BER_HIGH = ": pre-FEC BER 1e-05 above 1e-06 (a degrading cable, optic or dirty connector)"
FLAPS_6 = " changed carrier about 6 times in 10 minutes"
RX_LOW = ": optic receives -11.163 dBm on its weakest lane (under -10 dBm)"


def _ber_counter(ber: float, bits: str) -> str:
    return f"0+{ber * int(bits) * SCRAPE_S:.0f}x80"


def test_sonic_fec_alerts_fire_on_published_counters_and_carry_the_plans_labels(tmp_path: Path) -> None:
    files = export_telemetry(plan_cluster(load_cluster(SONIC)))
    (bad, bits), (good, _), (steady, _), (noisy, _) = _hosts(files, 4)
    uncorr, corr = f"{SONIC_PORT}_SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES", f"{SONIC_PORT}_SAI_PORT_STAT_IF_IN_FEC_CORRECTED_BITS"
    key = lambda labels: {"source": labels["source"], "port": labels["port"]}  # noqa: E731 - the gnmic series' own labels
    series = [{"series": _series("gpufabric_link_info", labels), "values": f"{value}x80"} for labels, value in _info(files)]
    series += [
        {"series": _series(uncorr, key(bad)), "values": "0x20 34x60"},  # sonic-utilities#2027: FEC_UNCORR 34
        {"series": _series(uncorr, key(good)), "values": "0x80"},  # sonic-swss#3757: 0
        {"series": _series(uncorr, key(steady)), "values": "4x80"},  # sonic-utilities#4124: 4, not growing
        {"series": _series(corr, key(good)), "values": _ber_counter(7.24e-10, bits)},  # sonic-swss#3757 Ethernet48
        {"series": _series(corr, key(steady)), "values": _ber_counter(2.35e-9, bits)},  # its FEC_PRE_BER_MAX
        {"series": _series(corr, key(noisy)), "values": _ber_counter(1e-5, bits)},  # synthetic: no failing BER is published
    ]
    tests: list[dict[str, object]] = [
        {"eval_time": "8m", "alertname": "LinkFecUncorrectable", "exp_alerts": [_expected(bad, "critical", UNCORR_34)]},
        {"eval_time": "4m", "alertname": "LinkFecUncorrectable", "exp_alerts": []},  # before the errors
        {
            "eval_time": "18m",
            "alertname": "LinkPreFecBerHigh",
            "exp_alerts": [_expected(noisy, "warning", BER_HIGH)],
        },
        {"eval_time": "8m", "alertname": "LinkPreFecBerHigh", "exp_alerts": []},  # not yet for 10m
    ]
    result = _run(tmp_path, files, series, tests)
    assert result.returncode == 0, result.stdout + result.stderr
    assert bad["node"]
    assert bad["rail"]
    assert bad["leaf"] == bad["source"]
    assert 2.35e-9 < PRE_FEC_BER < 1e-5


def test_a_port_the_plan_does_not_name_still_alerts_without_the_plans_labels(tmp_path: Path) -> None:
    files = export_telemetry(plan_cluster(load_cluster(SONIC)))
    uncorr = f"{SONIC_PORT}_SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES"
    stranger = {"source": "leaf-not-in-plan", "port": "Ethernet999"}
    series = [{"series": _series(uncorr, stranger), "values": "0x20 34x60"}]
    tests: list[dict[str, object]] = [
        {"eval_time": "8m", "alertname": "LinkFecUncorrectable", "exp_alerts": [_expected(stranger, "critical", UNCORR_34)]}
    ]
    result = _run(tmp_path, files, series, tests)
    assert result.returncode == 0, result.stdout + result.stderr


def test_cumulus_fec_flap_and_optics_alerts_fire_and_stay_silent(tmp_path: Path) -> None:
    plan = plan_cluster(load_cluster(CUMULUS))
    files = export_telemetry(plan)
    (bad, _), (good, _) = _hosts(files, 2)
    port = lambda labels, **extra: {"source": labels["source"], "interface_name": labels["port"], **extra}  # noqa: E731
    part = lambda labels, **extra: {"source": labels["source"], "component_name": labels["port"], **extra}  # noqa: E731
    uncorr = gnmic_metric_name(f"{CUMULUS_PHY_OLD}/rs-fec-uncorrectable-blocks")  # CL 5.14 names (this definition's release)
    rx, temp, carrier = gnmic_metric_name(CUMULUS_RX_POWER), gnmic_metric_name(CUMULUS_TEMPERATURE), gnmic_metric_name(CARRIER)
    series = [{"series": _series("gpufabric_link_info", labels), "values": f"{value}x80"} for labels, value in _info(files)]
    series += [
        {"series": _series(uncorr, port(bad)), "values": "0x20 34x60"},
        {"series": _series(uncorr, port(good)), "values": "0x80"},
        {"series": _series(carrier, port(bad)), "values": "2x20 8x60"},  # three flaps (down and up)
        {"series": _series(carrier, port(good)), "values": "2x80"},
        {"series": _series(rx, part(bad, channel_index="1")), "values": "-11.163x80"},  # sonic-platform-common#486 rx1power
        {"series": _series(rx, part(good, channel_index="1")), "values": "-6.899x80"},  # sonic-platform-common#235 low warning
        {"series": _series(temp, part(bad)), "values": "56.102x80"},  # sonic-platform-common#486 temperature
        {"series": _series(temp, {"source": bad["source"], "component_name": "FAN1"}), "values": "80x80"},  # not an optic
    ]
    tests: list[dict[str, object]] = [
        {"eval_time": "8m", "alertname": "LinkFecUncorrectable", "exp_alerts": [_expected(bad, "critical", UNCORR_34)]},
        {
            "eval_time": "8m",
            "alertname": "LinkFlappingPlanned",
            "exp_alerts": [_expected(bad, "warning", FLAPS_6)],
        },
        {
            "eval_time": "8m",
            "alertname": "OpticRxPowerLow",
            "exp_alerts": [_expected(bad, "warning", RX_LOW)],
        },
        {"eval_time": "8m", "alertname": "OpticTemperatureHigh", "exp_alerts": []},
    ]
    result = _run(tmp_path, files, series, tests)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_link_labels_name_every_switch_end_of_every_compute_cable() -> None:
    plan = plan_cluster(load_cluster(CUMULUS))
    files = export_telemetry(plan)
    assert plan.fabric is not None
    ends = {(s["source"], s["port"]) for s, _ in _info(files)}
    host = [link for link in plan.fabric.links if link.kind == "host"]
    fabric = [link for link in plan.fabric.links if link.kind == "fabric"]
    assert len(ends) == len(_info(files)) == len(host) + 2 * len(fabric)
    assert all((link.a_device, link.a_port) in ends and (link.b_device, link.b_port) in ends for link in fabric)
