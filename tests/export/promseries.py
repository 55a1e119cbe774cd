"""Test helpers: Prometheus' ``replace`` relabelling of a series name, and the series names the exported scrape and
gnmic configs produce, derived from those files independently of the exporters' own name tables."""

from __future__ import annotations

import re

import yaml

from fabric.export.telemetry.gnmi import gnmic_metric_name
from fabric.export.telemetry.sonic import sonic_metric_name

# Fields of one queue's hash in SONiC's COUNTERS/Ethernet*/Queues answer: sonic-net/sonic-gnmi doc/grpc_telemetry.md
# (the example answer, a PFC-WD queue "etp10:3"), plus the WRED/ECN ones sonic-net/SONiC
# doc/qos/ECN_and_WRED_statistics_HLD.md adds to COUNTERS:oid:queue_oid.
SONIC_QUEUE_HASH = (
    "PFC_WD_DETECTION_TIME",
    "PFC_WD_DETECTION_TIME_LEFT",
    "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED",
    "PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED",
    "PFC_WD_RESTORATION_TIME",
    "SAI_QUEUE_STAT_BYTES",
    "SAI_QUEUE_STAT_CURR_OCCUPANCY_BYTES",
    "SAI_QUEUE_STAT_DROPPED_PACKETS",
    "SAI_QUEUE_STAT_PACKETS",
    "SAI_QUEUE_STAT_PACKETS_last",
    "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES",
    "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS",
    "SAI_QUEUE_STAT_WRED_ECN_MARKED_BYTES",
    "SAI_QUEUE_STAT_WRED_DROPPED_PACKETS",
    "SAI_QUEUE_STAT_WRED_DROPPED_BYTES",
)

# Numeric fields of a port's entry in the link tables (after gnmic's processors drop the strings): APPL_DB PORT_TABLE as
# sonic-utilities tests/mock_tables/appl_db.json holds it; STATE_DB TRANSCEIVER_DOM_SENSOR as xcvrd's dom_mgr.py writes it
# (sonic-platform-daemons 202411, beautify_dom_info_dict: temperature, rx<N>power; the test keeps a 4-lane module)
SONIC_TABLE_ANSWERS = {
    "PORT_TABLE": ("flap_count",),
    "TRANSCEIVER_DOM_SENSOR": ("temperature", "rx1power", "rx2power", "rx3power", "rx4power"),
}


def relabel(name: str, rules: list[dict[str, str]]) -> tuple[str, dict[str, str]]:
    """Prometheus' ``replace`` relabelling of ``__name__`` (anchored regex, ``$N`` groups) on one series name."""
    labels = {"__name__": name}
    for rule in rules:
        match = re.fullmatch(rule["regex"], labels[rule["source_labels"][0]])
        if match:
            labels[rule["target_label"]] = match.expand(re.sub(r"\$(\d)", r"\\\1", rule["replacement"]))
    return labels.pop("__name__"), labels


def gnmic_series(gnmic_yaml: str, prometheus_yml: str) -> set[str]:
    """Every series name gnmic serves for ``gnmic.yaml``'s subscriptions, after ``prometheus.yml``'s relabelling: each
    path's leaf name; for SONiC's tables, sample answers (a port, a queue, a periodic watermark, a neighbor)."""
    jobs = yaml.safe_load(prometheus_yml)["scrape_configs"]
    rules = next((j.get("metric_relabel_configs", []) for j in jobs if j["job_name"] == "gpufabric-gnmic"), [])
    names: set[str] = set()
    for sub in yaml.safe_load(gnmic_yaml)["subscriptions"].values():
        for path in sub["paths"]:
            if path in SONIC_TABLE_ANSWERS:
                raw = [sonic_metric_name(path, "Ethernet0", f) for f in SONIC_TABLE_ANSWERS[path]]
            elif sub.get("target") == "STATE_DB":
                raw = [sonic_metric_name(path, "10.0.0.57", "state")]
            elif path.endswith("/Queues"):
                raw = [sonic_metric_name(path, "etp10:3", f) for f in SONIC_QUEUE_HASH]
                raw.append(sonic_metric_name(path, "etp10:3:periodic", "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES"))
            elif sub.get("target") == "COUNTERS_DB":
                raw = [sonic_metric_name(path, "etp10")]
            else:
                raw = [gnmic_metric_name(path)]
            names |= {relabel(r, rules)[0] for r in raw}
    return names
