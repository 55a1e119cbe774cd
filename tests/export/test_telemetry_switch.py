"""Switch-side alerts: the metric names follow gnmic's rule (checked against gnmic's own documented example), and
``promtool test rules`` feeds synthetic switch series under exactly those names, sees each alert fire and a quiet
control stay silent."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from fabric.export.telemetry import export_telemetry
from fabric.export.telemetry.gnmi import NXOS_NATIVE_QUEUE, gnmic_metric_name
from fabric.export.telemetry.signals import BGP_STATE, CARRIER, PAUSE_IN, PFC_PRIO, PFC_WATCHDOG, QUEUE, subscribed_names
from fabric.export.telemetry.sonic import sonic_metric_name
from fabric.export.telemetry.switch import switch_rules
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from tests.conftest import DATA, ROOT
from tests.export.promseries import relabel

PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian package prometheus) is not installed (./dev setup)")
EOS = DATA / "render/eos-3tier/cluster.yaml"
CUMULUS = DATA / "plan/three-tier/cluster.yaml"
SONIC = ROOT / "inventories/onprem-roce/cluster.yaml"
NXOS = DATA / "render/nxos-3tier/cluster.yaml"


def test_the_name_rule_gives_gnmics_documented_example() -> None:
    # openconfig/gnmic docs/user_guide/outputs/prometheus_output.md, "Metric Naming": subscription port-stats, prefix gnmic
    path = "/interfaces/interface[name=1/1/1]/subinterfaces/subinterface[index=0]/state/counters/in-octets"
    assert (
        gnmic_metric_name(path, subscription="port-stats")
        == "gnmic_port_stats_interfaces_interface_subinterfaces_subinterface_state_counters_in_octets"
    )
    assert gnmic_metric_name(CARRIER) == "gnmic_interfaces_interface_state_counters_carrier_transitions"
    assert gnmic_metric_name(CARRIER, prefix="") == "interfaces_interface_state_counters_carrier_transitions"


def _sonic_relabel() -> list[dict[str, str]]:
    scrape = yaml.safe_load(export_telemetry(plan_cluster(load_cluster(SONIC)))["telemetry/prometheus.yml"])
    return next(j for j in scrape["scrape_configs"] if j["job_name"] == "gpufabric-gnmic")["metric_relabel_configs"]


PFC3 = "COUNTERS/Ethernet*/SAI_PORT_STAT_PFC_3_RX_PKTS"


@pytest.mark.parametrize(
    ("path", "key", "field", "expected"),
    [
        # a port counter, under the SONiC name and under a vendor alias with a slash (sonic-gnmi answers the alias)
        (PFC3, "Ethernet120", "", ("gnmic_sonic_port_SAI_PORT_STAT_PFC_3_RX_PKTS", {"port": "Ethernet120"})),
        (PFC3, "Ethernet1/1", "", ("gnmic_sonic_port_SAI_PORT_STAT_PFC_3_RX_PKTS", {"port": "Ethernet1_1"})),
        # the queues' answer (sonic-gnmi doc/grpc_telemetry.md example: keys etp10:3 and etp10:3:periodic)
        (
            "COUNTERS/Ethernet*/Queues",
            "etp10:3",
            "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED",
            ("gnmic_sonic_queue_PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED", {"port": "etp10", "queue": "3"}),
        ),
        (
            "COUNTERS/Ethernet*/Queues",
            "etp11a:13",
            "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS",
            ("gnmic_sonic_queue_SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", {"port": "etp11a", "queue": "13"}),
        ),
        (
            "COUNTERS/Ethernet*/Queues",
            "etp10:3:periodic",
            "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES",
            ("gnmic_sonic_queue_periodic_SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES", {"port": "etp10", "queue": "3"}),
        ),
        # STATE_DB NEIGH_STATE_TABLE, keyed by neighbor address
        ("NEIGH_STATE_TABLE", "10.0.0.57", "state", ("gnmic_sonic_bgp_neighbor_state", {"neighbor": "10_0_0_57"})),
        ("NEIGH_STATE_TABLE", "fc00::7a", "state", ("gnmic_sonic_bgp_neighbor_state", {"neighbor": "fc00_7a"})),
    ],
)
def test_the_sonic_relabel_moves_ports_queues_and_neighbors_into_labels(
    path: str, key: str, field: str, expected: tuple[str, dict[str, str]]
) -> None:
    assert relabel(sonic_metric_name(path, key, field), _sonic_relabel()) == expected
    assert expected[0] in subscribed_names(plan_cluster(load_cluster(SONIC)))  # the names the rules may read


def test_the_sonic_relabel_leaves_other_series_alone() -> None:
    rules = _sonic_relabel()
    for name in (gnmic_metric_name(CARRIER), sonic_metric_name("NEIGH_STATE_TABLE", "10.0.0.57", "peerType")):
        assert relabel(name, rules) == (name, {})


def test_gnmic_output_is_the_one_the_names_assume() -> None:
    text = export_telemetry(plan_cluster(load_cluster(EOS)))
    output = yaml.safe_load(text["telemetry/gnmic.yaml"])["outputs"]["prometheus"]
    assert output == {
        "type": "prometheus",
        "listen": ":9804",
        "path": "/metrics",
        "metric-prefix": "gnmic",
        "append-subscription-name": False,
        "strings-as-labels": True,
    }
    jobs = {j["job_name"]: j for j in yaml.safe_load(text["telemetry/prometheus.yml"])["scrape_configs"]}
    assert jobs["gpufabric-gnmic"]["metrics_path"] == "/metrics"
    assert jobs["gpufabric-gnmic"]["static_configs"] == [{"targets": ["localhost:9804"]}]
    assert "metric_relabel_configs" not in jobs["gpufabric-gnmic"]  # no SONiC switch, no SONiC relabel
    sonic = yaml.safe_load(export_telemetry(plan_cluster(load_cluster(SONIC)))["telemetry/prometheus.yml"])
    relabel = next(j for j in sonic["scrape_configs"] if j["job_name"] == "gpufabric-gnmic")["metric_relabel_configs"]
    assert [r["target_label"] for r in relabel[:2]] == ["port", "__name__"]  # the label first, while the name still holds the port
    gnmic = yaml.safe_load(export_telemetry(plan_cluster(load_cluster(SONIC)))["telemetry/gnmic.yaml"])
    assert gnmic["outputs"]["prometheus"]["event-processors"] == list(gnmic["processors"])  # SONiC's strings handled before the output


def test_each_nos_gets_the_alerts_its_subscriptions_feed() -> None:
    def alerts(path: Path) -> list[str]:
        return [str(r["alert"]) for r in switch_rules(plan_cluster(load_cluster(path)))]

    assert alerts(EOS) == ["SwitchPauseStorm", "SwitchPfcWatchdogTripped", "SwitchEcnMarkingHigh", "SwitchLinkFlapping", "SwitchBgpDown"]
    assert alerts(CUMULUS) == ["SwitchPauseStorm", "SwitchEcnMarkingHigh", "SwitchLinkFlapping", "SwitchBgpDown"]
    assert alerts(NXOS) == ["SwitchPfcWatchdogTripped", "SwitchEcnMarkingHigh", "SwitchLinkFlapping", "SwitchBgpDown"]
    assert alerts(SONIC) == ["SwitchPauseStorm", "SwitchPfcWatchdogTripped", "SwitchEcnMarkingHigh", "SwitchBgpDown"]
    assert alerts(ROOT / "inventories/onprem-ib/cluster.yaml") == []


def _series(name: str, labels: dict[str, str], values: str) -> dict[str, str]:
    body = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    return {"series": f"{name}{{{body}}}", "values": values}


def _run(definition: Path, tmp_path: Path, cases: list[dict[str, object]]) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None
    (tmp_path / "alerts.yml").write_text(export_telemetry(plan_cluster(load_cluster(definition)))["telemetry/alerts.yml"], encoding="utf-8")
    tests = {"rule_files": ["alerts.yml"], "evaluation_interval": "15s", "tests": cases}
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(tests, sort_keys=False), encoding="utf-8")
    return subprocess.run([PROMTOOL, "test", "rules", "tests.yml"], capture_output=True, text=True, cwd=tmp_path, check=False, timeout=60)


LEAF = {"source": "leaf1", "subscription_name": "eos-fabric"}
STORM = f"0+{1000 * 15 * 2}x60"  # twice the threshold, 15 s samples
BURST = f"0+{1000 * 15 // 4}x60"


def _expected(alert: str, severity: str, labels: dict[str, str], summary: str) -> dict[str, object]:
    return {
        "eval_time": "5m",
        "alertname": alert,
        "exp_alerts": [{"exp_labels": {"severity": severity, **labels}, "exp_annotations": {"summary": summary}}],
    }


def _eos_cases() -> list[dict[str, object]]:
    port = {**LEAF, "interface_name": "Ethernet1"}
    quiet = {**LEAF, "interface_name": "Ethernet2"}
    queue = {**LEAF, "interface_interface_id": "Ethernet1", "queue_name": "3"}
    quiet_queue = {**LEAF, "interface_interface_id": "Ethernet2", "queue_name": "3"}
    bgp = {**LEAF, "network_instance_name": "default", "protocol_identifier": "BGP", "protocol_name": "BGP"}
    pfc, watchdog, state = gnmic_metric_name(PFC_PRIO), gnmic_metric_name(PFC_WATCHDOG), gnmic_metric_name(BGP_STATE)
    ecn, sent = gnmic_metric_name(f"{QUEUE}/ecn-marked-pkts"), gnmic_metric_name(f"{QUEUE}/transmit-pkts")
    series = [
        _series(pfc, {**port, "priority_index": "3"}, STORM),
        _series(pfc, {**quiet, "priority_index": "3"}, BURST),
        _series(watchdog, {**port, "tx_queue_index": "3", "tx_queue_queue_type": "UNICAST"}, "0x10 1x50"),
        _series(watchdog, {**quiet, "tx_queue_index": "3", "tx_queue_queue_type": "UNICAST"}, "0x60"),
        _series(ecn, queue, "0+1000x60"),  # 10% of 10000
        _series(sent, queue, "0+10000x60"),
        _series(ecn, quiet_queue, "0+100x60"),  # 1%
        _series(sent, quiet_queue, "0+10000x60"),
        _series(gnmic_metric_name(CARRIER), port, "0x4 1 2 3 4 5 6x50"),  # three flaps within a minute
        _series(gnmic_metric_name(CARRIER), quiet, "0x10 1 2x50"),  # one flap
        _series(state, {**bgp, "neighbor_neighbor_address": "10.0.0.1", "session_state": "ACTIVE"}, "1x60"),
        _series(state, {**bgp, "neighbor_neighbor_address": "10.0.0.3", "session_state": "ESTABLISHED"}, "1x60"),
    ]
    return [
        {
            "interval": "15s",
            "input_series": series,
            "alert_rule_test": [
                {"eval_time": "1m", "alertname": "SwitchPauseStorm", "exp_alerts": []},  # not yet its 2 minutes
                _expected(
                    "SwitchPauseStorm",
                    "critical",
                    {**port, "priority_index": "3", "port": "Ethernet1"},
                    "leaf1 Ethernet1 receives over 1000 PFC pauses/s on priority 3 (RoCE): its peer keeps pausing it, a pause storm",
                ),
                {
                    **_expected(
                        "SwitchPfcWatchdogTripped",
                        "critical",
                        {**port, "tx_queue_index": "3", "tx_queue_queue_type": "UNICAST", "port": "Ethernet1", "queue": "3"},
                        "leaf1 Ethernet1 queue 3: the PFC watchdog found the queue stuck and stopped honouring pauses (a pause storm from the peer)",
                    ),
                    "eval_time": "3m",
                },
                {
                    **_expected(
                        "SwitchEcnMarkingHigh",
                        "warning",
                        {**queue, "port": "Ethernet1", "queue": "3"},
                        "leaf1 Ethernet1 queue 3: over 5% of packets ECN-marked (only the RoCE queue marks; chronic congestion)",
                    ),
                    "eval_time": "14m",
                },
                {"eval_time": "5m", "alertname": "SwitchEcnMarkingHigh", "exp_alerts": []},  # not yet its 10 minutes
                {**_expected("SwitchLinkFlapping", "warning", {**port, "port": "Ethernet1"}, "leaf1 Ethernet1 is flapping"), "eval_time": "3m"},
                {
                    **_expected(
                        "SwitchBgpDown",
                        "critical",
                        {"source": "leaf1", "network_instance_name": "default", "neighbor": "10.0.0.1"},
                        "leaf1: BGP session to 10.0.0.1 is not established",
                    ),
                    "eval_time": "3m",
                },
            ],
        }
    ]


@needs_promtool
def test_eos_switch_alerts_fire_on_their_series_and_the_quiet_ports_stay_silent(tmp_path: Path) -> None:
    result = _run(EOS, tmp_path, _eos_cases())
    assert result.returncode == 0, result.stdout + result.stderr


@needs_promtool
def test_the_switch_rule_test_can_fail(tmp_path: Path) -> None:
    """Control: the same series while expecting silence where each alert fired makes promtool fail for each."""
    cases = _eos_cases()
    checks = cases[0]["alert_rule_test"]
    assert isinstance(checks, list)
    cases[0]["alert_rule_test"] = [{**c, "exp_alerts": []} for c in checks if c["exp_alerts"]]
    result = _run(EOS, tmp_path, cases)
    assert result.returncode != 0
    for alert in ("SwitchPauseStorm", "SwitchPfcWatchdogTripped", "SwitchEcnMarkingHigh", "SwitchLinkFlapping", "SwitchBgpDown"):
        assert f"alertname: {alert}" in result.stdout + result.stderr


@needs_promtool
def test_cumulus_and_sonic_pause_storms_fire_on_their_own_names(tmp_path: Path) -> None:
    pause = gnmic_metric_name(PAUSE_IN)
    cumulus = {"source": "leaf-1", "subscription_name": "cumulus-fabric", "interface_interface_id": "swp1", "switch_priority_priority": "3"}
    quiet = {**cumulus, "interface_interface_id": "swp2"}
    cases = [
        {
            "interval": "15s",
            "input_series": [_series(pause, cumulus, STORM), _series(pause, quiet, BURST)],
            "alert_rule_test": [
                _expected(
                    "SwitchPauseStorm",
                    "critical",
                    {**cumulus, "port": "swp1"},
                    "leaf-1 swp1 receives over 1000 PFC pauses/s on priority 3 (RoCE): its peer keeps pausing it, a pause storm",
                )
            ],
        }
    ]
    result = _run(CUMULUS, tmp_path, cases)
    assert result.returncode == 0, result.stdout + result.stderr
    sonic = {"source": "leaf01", "subscription_name": "sonic-fabric", "target": "COUNTERS_DB", "port": "Ethernet8"}
    name = "gnmic_sonic_port_SAI_PORT_STAT_PFC_3_RX_PKTS"  # after prometheus.yml's relabel (test above)
    cases = [
        {
            "interval": "15s",
            "input_series": [_series(name, sonic, STORM), _series(name, {**sonic, "port": "Ethernet12"}, BURST)],
            "alert_rule_test": [
                _expected(
                    "SwitchPauseStorm",
                    "critical",
                    sonic,
                    "leaf01 Ethernet8 receives over 1000 PFC pauses/s on priority 3 (RoCE): its peer keeps pausing it, a pause storm",
                )
            ],
        }
    ]
    result = _run(SONIC, tmp_path, cases)
    assert result.returncode == 0, result.stdout + result.stderr


SONIC_QUEUE = {"source": "leaf01", "subscription_name": "sonic-fabric", "target": "COUNTERS_DB", "port": "etp10", "queue": "3"}
SONIC_QUIET = {**SONIC_QUEUE, "port": "etp11"}
SONIC_BGP = {"source": "leaf01", "subscription_name": "sonic-bgp", "target": "STATE_DB"}


def _sonic_cases() -> list[dict[str, object]]:
    """Series under the names ``prometheus.yml``'s relabelling gives SONiC's answers (the test above)."""
    fields = ("PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED", "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", "SAI_QUEUE_STAT_PACKETS")
    watchdog, ecn, sent = (f"gnmic_sonic_queue_{f}" for f in fields)
    state = "gnmic_sonic_bgp_neighbor_state"  # 1 established, 0 otherwise (gnmic.yaml's sonic-bgp-state processor)
    series = [
        _series(watchdog, SONIC_QUEUE, "0x10 1x50"),  # the watchdog trips once
        _series(watchdog, SONIC_QUIET, "0x60"),
        _series(ecn, SONIC_QUEUE, "0+1000x60"),  # 10% of 10000
        _series(sent, SONIC_QUEUE, "0+10000x60"),
        _series(ecn, SONIC_QUIET, "0+100x60"),  # 1%
        _series(sent, SONIC_QUIET, "0+10000x60"),
        _series(state, {**SONIC_BGP, "neighbor": "10_0_0_57"}, "0x60"),  # Active
        _series(state, {**SONIC_BGP, "neighbor": "10_0_0_59"}, "1x60"),  # Established
    ]
    return [
        {
            "interval": "15s",
            "input_series": series,
            "alert_rule_test": [
                {
                    **_expected(
                        "SwitchPfcWatchdogTripped",
                        "critical",
                        SONIC_QUEUE,
                        "leaf01 etp10 queue 3: the PFC watchdog found the queue stuck and stopped honouring pauses (a pause storm from the peer)",
                    ),
                    "eval_time": "3m",
                },
                {
                    **_expected(
                        "SwitchEcnMarkingHigh",
                        "warning",
                        SONIC_QUEUE,
                        "leaf01 etp10 queue 3: over 5% of packets ECN-marked (only the RoCE queue marks; chronic congestion)",
                    ),
                    "eval_time": "14m",
                },
                {"eval_time": "5m", "alertname": "SwitchEcnMarkingHigh", "exp_alerts": []},  # not yet its 10 minutes
                {
                    **_expected(
                        "SwitchBgpDown",
                        "critical",
                        {"source": "leaf01", "neighbor": "10_0_0_57"},
                        "leaf01: BGP session to 10_0_0_57 is not established",
                    ),
                    "eval_time": "3m",
                },
                {"eval_time": "30s", "alertname": "SwitchBgpDown", "exp_alerts": []},  # not yet its minute
            ],
        }
    ]


NXOS_ENTRY = {"source": "leaf1", "subscription_name": "nxos-fabric"}


def _nxos_cases(origin: str) -> list[dict[str, object]]:
    """NX-OS native series as gnmic names them with (``device:``) or without the origin in the answer; their key labels
    are whatever the switch sends (here the class map), the rules only carry them along."""

    def native(leaf: str) -> str:
        return gnmic_metric_name(f"{origin}{NXOS_NATIVE_QUEUE.removeprefix('device:')}/{leaf}")

    hot = {**NXOS_ENTRY, "cmapName": "c-out-8q-q3", "If_list_id": "eth1/1"}
    quiet = {**hot, "If_list_id": "eth1/2"}
    series = [
        _series(native("pfcwdShutdownCount"), hot, "0x10 1x50"),
        _series(native("pfcwdShutdownCount"), quiet, "0x60"),
        _series(native("randEcnMarkedPackets"), hot, "0+1000x60"),
        _series(native("txPackets"), hot, "0+10000x60"),
        _series(native("randEcnMarkedPackets"), quiet, "0+100x60"),
        _series(native("txPackets"), quiet, "0+10000x60"),
    ]
    watchdog = "leaf1: the PFC watchdog found the queue stuck and stopped honouring pauses (a pause storm from the peer)"
    ecn = "leaf1: over 5% of packets ECN-marked (only the RoCE queue marks; chronic congestion)"
    return [
        {
            "interval": "15s",
            "input_series": series,
            "alert_rule_test": [
                {**_expected("SwitchPfcWatchdogTripped", "critical", hot, watchdog), "eval_time": "3m"},
                {**_expected("SwitchEcnMarkingHigh", "warning", hot, ecn), "eval_time": "14m"},
            ],
        }
    ]


@needs_promtool
def test_sonic_switch_alerts_fire_on_their_series_and_the_quiet_ones_stay_silent(tmp_path: Path) -> None:
    result = _run(SONIC, tmp_path, _sonic_cases())
    assert result.returncode == 0, result.stdout + result.stderr


@needs_promtool
@pytest.mark.parametrize("origin", ["device:", ""], ids=["with-origin", "without-origin"])
def test_nxos_native_watchdog_and_ecn_alerts_fire_with_or_without_the_origin(origin: str, tmp_path: Path) -> None:
    result = _run(NXOS, tmp_path, _nxos_cases(origin))
    assert result.returncode == 0, result.stdout + result.stderr


@needs_promtool
@pytest.mark.parametrize(("definition", "cases"), [(SONIC, _sonic_cases()), (NXOS, _nxos_cases("device:"))], ids=["sonic", "nxos"])
def test_the_sonic_and_nxos_rule_tests_can_fail(definition: Path, cases: list[dict[str, object]], tmp_path: Path) -> None:
    """Control: expecting silence where each alert fired makes promtool fail for each."""
    checks = cases[0]["alert_rule_test"]
    assert isinstance(checks, list)
    cases[0]["alert_rule_test"] = [{**c, "exp_alerts": []} for c in checks if c["exp_alerts"]]
    result = _run(definition, tmp_path, cases)
    assert result.returncode != 0
    for check in cases[0]["alert_rule_test"]:
        assert f"alertname: {check['alertname']}" in result.stdout + result.stderr


def _apply_processors(values: dict[str, str]) -> dict[str, str]:
    """gnmic's event-delete then event-strings ``replace`` (value names matched unanchored, as Go's MatchString; each
    transform on the previous one's result) as gnmic.yaml configures them for SONiC."""
    processors = yaml.safe_load(export_telemetry(plan_cluster(load_cluster(SONIC)))["telemetry/gnmic.yaml"])["processors"]
    deletes = processors["sonic-drop-strings"]["event-delete"]["value-names"]
    values = {k: v for k, v in values.items() if not any(re.search(r, k) for r in deletes)}
    strings = processors["sonic-bgp-state"]["event-strings"]
    for key in list(values):
        if any(re.search(r, key) for r in strings["value-names"]):
            for transform in strings["transforms"]:
                values[key] = re.sub(transform["replace"]["old"], transform["replace"]["new"], str(values[key]))
    return values


def test_the_sonic_processors_leave_only_numbers() -> None:
    """A watchdog queue as sonic-gnmi's doc answers it (strings PFC_WD_ACTION, PFC_WD_STATUS; BIG_RED_SWITCH_MODE and
    DEBUG_STORM as sonic-swss tests set them) and bgpmon's neighbors: after the processors every value parses as a
    number (so strings-as-labels adds no label), and a BGP state is 1 only when established."""
    queue = "/COUNTERS/Ethernet*/Queues/etp10:3/"
    bgp = "/NEIGH_STATE_TABLE/"
    values = {
        f"{queue}PFC_WD_ACTION": "drop",
        f"{queue}PFC_WD_STATUS": "stormed",
        f"{queue}BIG_RED_SWITCH_MODE": "enable",
        f"{queue}DEBUG_STORM": "enabled",
        f"{queue}PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED": "1",
        f"{queue}SAI_QUEUE_STAT_PACKETS": "527",
        f"{bgp}10.0.0.57/state": "Established",
        f"{bgp}10.0.0.57/peerType": "e-BGP",
        f"{bgp}fc00::7a/state": "Active",
        f"{bgp}10.0.0.61/state": "Idle (Admin)",
    }
    after = _apply_processors(values)
    assert {k: float(v) for k, v in after.items()} == {
        f"{queue}PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED": 1,
        f"{queue}SAI_QUEUE_STAT_PACKETS": 527,
        f"{bgp}10.0.0.57/state": 1,
        f"{bgp}fc00::7a/state": 0,
        f"{bgp}10.0.0.61/state": 0,
    }
