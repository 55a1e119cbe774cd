"""SONiC's link flaps and optics: gnmic's processors as ``gnmic.yaml`` configures them leave only numbers of SONiC's
string tables, the relabelling names them per port, and the alerts fire and stay silent under ``promtool test rules``
on values SONiC published.

gnmic itself is not installed here (``which gnmic``: none), so the processors are checked against gnmic's own source
at openconfig/gnmic @597750387b: the configuration keys each processor type reads (its Go struct's ``mapstructure``
tags) and an emulation of what each does to an event's values (``pkg/formatters/event_delete/event_delete.go``,
``event_convert/event_convert.go``, ``event_strings/event_strings.go`` ``replace``), regexes matched unanchored as Go's
``MatchString``. Values and where SONiC published them:

- PORT_TABLE: an entry as sonic-utilities ``tests/mock_tables/appl_db.json`` holds it (Ethernet0: ``flap_count`` "3";
  Ethernet16 and Ethernet36: "7"; https://github.com/sonic-net/sonic-utilities/blob/master/tests/mock_tables/appl_db.json):
  a port whose count goes from 3 to 7 in ten minutes (four oper-status changes) fires, a steady 7 does not.
- TRANSCEIVER_DOM_SENSOR: rx1power -11.163 dBm and temperature 56.102 °C (https://github.com/sonic-net/sonic-platform-common/pull/486)
  fire and stay silent; -6.899 dBm (that family's rxpowerlowwarning, sonic-platform-common#235) is silent; 72.0 °C,
  the temphighwarning of sonic-platform-common#235, fires the 70 °C rule.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import cast

import pytest
import yaml

from fabric.export.telemetry import export_telemetry
from fabric.export.telemetry.sonic import sonic_metric_name
from fabric.export.telemetry.sonic_link import DOM_TABLE, FLAP_TABLE, SONIC_FLAPS, SONIC_RX_POWER, SONIC_TEMPERATURE, other_than
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from tests.conftest import ROOT
from tests.export.promseries import relabel
from tests.export.test_telemetry_link_health import _expected, _hosts, _info, _run, _series

SONIC = ROOT / "inventories/onprem-roce/cluster.yaml"
# gnmic @597750387b: the mapstructure tags of each processor type's config struct
GNMIC_KEYS = {
    "event-delete": {"tags", "values", "tag-names", "value-names", "debug"},
    "event-convert": {"value-names", "type", "debug"},
    "event-strings": {"tags", "values", "tag-names", "value-names", "transforms", "debug"},
}
CONVERT_TYPES = {"int", "uint", "string", "float", "bool"}  # docs/user_guide/event_processors/event_convert.md
RE2_MISSING = re.compile(r"\(\?[=!<]|\\[1-9]")  # look-around and back-references: Python has them, Go's RE2 does not

# sonic-utilities tests/mock_tables/appl_db.json, PORT_TABLE:Ethernet0 (every field, as published)
PORT_ENTRY = {
    "alias": "etp1",
    "description": "ARISTA01T2:Ethernet1",
    "speed": "25000",
    "oper_status": "down",
    "system_oper_status": "up",
    "line_oper_status": "down",
    "pfc_asym": "off",
    "mtu": "9100",
    "tpid": "0x9200",
    "fec": "rs",
    "admin_status": "up",
    "adv_speeds": "50000,10000",
    "interface_type": "CR4",
    "adv_interface_types": "CR4,CR2",
    "autoneg": "on",
    "flap_count": "3",
    "last_up_time": "Sat Jan 18 00:08:42 2025",
    "last_down_time": "Sat Jan 17 00:04:42 2025",
    "link_training": "on",
}
# A module's entry: rx1power and temperature from sonic-platform-common#486; the other fields as xcvrd writes them
# (dom_mgr.py beautify_dom_info_dict: units stripped, N/A where the module reports nothing)
DOM_ENTRY = {"temperature": "56.102", "voltage": "3.291", "rx1power": "-11.163", "rx2power": "N/A", "tx1bias": "6.75", "tx1power": "0.5"}


def _processors() -> tuple[dict[str, dict[str, dict[str, object]]], list[str]]:
    config = yaml.safe_load(export_telemetry(plan_cluster(load_cluster(SONIC)))["telemetry/gnmic.yaml"])
    return config["processors"], config["outputs"]["prometheus"]["event-processors"]


def _to_float(value: object) -> float | None:
    """gnmic's toFloat for strings (strconv.ParseFloat); None where it fails."""
    if isinstance(value, float):
        return value
    try:
        return float(str(value)) if re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", str(value)) else None
    except ValueError:
        return None


def _apply(values: dict[str, object], skip: str = "") -> dict[str, object]:
    """The output's processors in their order (``skip`` one of them), as gnmic applies them to one event's values."""
    processors, order = _processors()
    for name in order:
        if name == skip:
            continue
        ((kind, config),) = processors[name].items()
        names = [re.compile(r) for r in config.get("value-names", [])]  # type: ignore[union-attr]
        if kind == "event-delete":
            by_value = [re.compile(r) for r in config.get("values", [])]  # type: ignore[union-attr]
            values = {
                k: v
                for k, v in values.items()
                if not any(r.search(k) for r in names) and not (isinstance(v, str) and any(r.search(v) for r in by_value))
            }
        elif kind == "event-convert":
            assert config["type"] == "float"
            for key, value in values.items():
                number = _to_float(value)
                if any(r.search(key) for r in names) and number is not None:
                    values[key] = number  # a value that does not parse is left as it was
        elif kind == "event-strings":
            for key in values:
                if any(r.search(key) for r in names):
                    for transform in config["transforms"]:  # type: ignore[union-attr]
                        values[key] = re.sub(transform["replace"]["old"], transform["replace"]["new"], str(values[key]))
    return values


def _answer() -> dict[str, object]:
    """One event per table as gnmic flattens a SONiC table answer (``/<table>/<key>/<field>``)."""
    values: dict[str, object] = {f"/{FLAP_TABLE}/Ethernet0/{k}": v for k, v in PORT_ENTRY.items()}
    values |= {f"/{DOM_TABLE}/Ethernet0/{k}": v for k, v in DOM_ENTRY.items()}
    return values


def test_the_processors_are_what_gnmic_reads() -> None:
    processors, order = _processors()
    assert order == list(processors)
    assert {"sonic-link-numbers", "sonic-link-drop-strings"} <= set(order)
    for name, body in processors.items():
        ((kind, config),) = body.items()
        assert kind in GNMIC_KEYS, name
        assert isinstance(config, dict)
        assert set(config) <= GNMIC_KEYS[kind], f"{name}: {set(config) - GNMIC_KEYS[kind]} is no key of {kind}"
        assert config.get("type", "float") in CONVERT_TYPES
        regexes: list[str] = [*cast("list[str]", config.get("value-names", [])), *cast("list[str]", config.get("values", []))]
        for regex in regexes:
            re.compile(regex)
            assert not RE2_MISSING.search(regex), f"{name}: {regex} needs what Go's RE2 lacks"


def test_the_link_processors_leave_only_the_numbers_the_rules_read() -> None:
    after = _apply(_answer())
    assert after == {
        f"/{FLAP_TABLE}/Ethernet0/flap_count": 3.0,
        f"/{DOM_TABLE}/Ethernet0/temperature": 56.102,
        f"/{DOM_TABLE}/Ethernet0/rx1power": -11.163,
    }


def test_without_the_delete_strings_would_become_labels() -> None:
    """Control: leave out sonic-link-drop-strings and strings that are no numbers stay (strings-as-labels would label them)."""
    after = _apply(_answer(), skip="sonic-link-drop-strings")
    assert any(_to_float(v) is None for v in after.values())


def test_other_than_excludes_exactly_the_names() -> None:
    fields = ("temperature", "rx1power", "rx8power")
    regex = other_than(fields)
    assert not any(re.fullmatch(regex, f) for f in fields)
    near = ["t", "temp", "temperatures", "rx", "rx9power", "rx1powe", "rx1powerx", "tx1power", "voltage", "flap_count"]
    assert all(re.fullmatch(regex, f) for f in near)


def test_the_relabelling_names_flaps_and_optics_per_port_and_lane() -> None:
    files = export_telemetry(plan_cluster(load_cluster(SONIC)))
    jobs = yaml.safe_load(files["telemetry/prometheus.yml"])["scrape_configs"]
    rules = next(j["metric_relabel_configs"] for j in jobs if j["job_name"] == "gpufabric-gnmic")
    assert relabel(sonic_metric_name(FLAP_TABLE, "Ethernet8", "flap_count"), rules) == (SONIC_FLAPS, {"port": "Ethernet8"})
    assert relabel(sonic_metric_name(DOM_TABLE, "Ethernet8", "rx4power"), rules) == (SONIC_RX_POWER, {"port": "Ethernet8", "lane": "4"})
    assert relabel(sonic_metric_name(DOM_TABLE, "Ethernet8", "temperature"), rules) == (SONIC_TEMPERATURE, {"port": "Ethernet8"})


needs_promtool = pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian package prometheus) is not installed")
FLAPS_4 = " changed carrier about 4 times in 10 minutes"
RX_LOW = ": optic receives -11.163 dBm on its weakest lane (under -10 dBm)"
HOT = ": 72 °C (over 70 °C)"


def _cases(files: dict[str, str]) -> tuple[list[dict[str, str]], list[dict[str, object]]]:
    (flappy, _), (steady, _), (dim, _), (hot, _) = _hosts(files, 4)
    key = lambda labels, **extra: {"source": labels["source"], "port": labels["port"], **extra}  # noqa: E731
    series = [{"series": _series("gpufabric_link_info", labels), "values": f"{value}x80"} for labels, value in _info(files)]
    series += [
        {"series": _series(SONIC_FLAPS, key(flappy)), "values": "3x20 7x60"},  # appl_db.json: 3, then 7
        {"series": _series(SONIC_FLAPS, key(steady)), "values": "7x80"},  # appl_db.json: 7, steady
        {"series": _series(SONIC_RX_POWER, key(dim, lane="1")), "values": "-11.163x80"},  # sonic-platform-common#486
        {"series": _series(SONIC_RX_POWER, key(dim, lane="2")), "values": "-6.899x80"},  # #235 rxpowerlowwarning
        {"series": _series(SONIC_RX_POWER, key(hot, lane="1")), "values": "-6.899x80"},
        {"series": _series(SONIC_TEMPERATURE, key(dim)), "values": "56.102x80"},  # sonic-platform-common#486
        {"series": _series(SONIC_TEMPERATURE, key(hot)), "values": "72.0x80"},  # #235 temphighwarning
    ]
    tests: list[dict[str, object]] = [
        {"eval_time": "8m", "alertname": "LinkFlappingPlanned", "exp_alerts": [_expected(flappy, "warning", FLAPS_4)]},
        {"eval_time": "4m", "alertname": "LinkFlappingPlanned", "exp_alerts": []},  # before the flaps
        {"eval_time": "8m", "alertname": "OpticRxPowerLow", "exp_alerts": [_expected(dim, "warning", RX_LOW)]},
        {"eval_time": "8m", "alertname": "OpticTemperatureHigh", "exp_alerts": [_expected(hot, "warning", HOT)]},
    ]
    return series, tests


@needs_promtool
def test_sonic_flap_and_optics_alerts_fire_on_published_values_and_stay_silent(tmp_path: Path) -> None:
    files = export_telemetry(plan_cluster(load_cluster(SONIC)))
    series, tests = _cases(files)
    result = _run(tmp_path, files, series, tests)
    assert result.returncode == 0, result.stdout + result.stderr


@needs_promtool
def test_the_sonic_flap_and_optics_tests_can_fail(tmp_path: Path) -> None:
    """Control: expecting silence where each alert fired makes promtool name each."""
    files = export_telemetry(plan_cluster(load_cluster(SONIC)))
    series, tests = _cases(files)
    silent = [{**t, "exp_alerts": []} for t in tests if t["exp_alerts"]]
    result = _run(tmp_path, files, series, silent)
    assert result.returncode != 0
    for check in silent:
        assert f"alertname: {check['alertname']}" in result.stdout + result.stderr
