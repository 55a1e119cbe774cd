"""Switch-side alert rules over the series gnmic's Prometheus output serves for the subscriptions of ``gnmic.yaml``.

gnmic's naming rule (openconfig/gnmic @597750387b5117f625a76681f6b4d83147f9151b):
``pkg/formatters/event.go`` ``tagsFromGNMIPath`` turns a notification's path into its element names joined by ``/``
(the origin, when the switch sends one, first as ``origin:``) and each list key into a tag ``<element>_<key>``;
``updateToEvent`` joins the prefix's and the update's paths, so how a switch splits them does not matter; a JSON value
that is an object is flattened below that path with ``/`` (karimra/go-map-flattener ``flatten.go``, ``NewFlattener``).
``pkg/outputs/prometheus_output/prometheus_common.go`` ``MetricBuilder.MetricName``: ``metric-prefix`` + ``_`` (+ the
subscription name + ``_`` with ``append-subscription-name``) + the value's path, every run of characters outside
``[a-zA-Z0-9_]`` replaced by ``_`` and leading ``_`` trimmed; ``GetLabels``: each tag's name with the same replacement,
plus ``source`` (the target's ``name``) and ``subscription_name``; with ``strings-as-labels`` a value that is no number
becomes the metric's label (named after its last path element) and the metric's value is 1.

The switches answer at the leaf they are subscribed to, without an origin (OpenConfig paths, subscribed without one),
so the name follows from the subscribed path alone. The NX-OS native paths carry origin ``device`` and their answers'
shape is not documented, so no rule reads them.
"""

from __future__ import annotations

import re

import yaml

from fabric.export.telemetry_gnmi import GNMIC_METRIC_PREFIX, gnmic_config
from fabric.plan.types import ClusterPlan

_KEYS = re.compile(r"\[[^\]]*\]")
_NOT_NAME = re.compile(r"[^a-zA-Z0-9_]+")

PAUSE_STORM_FRAMES_PER_S = 1000  # as the NIC side: a port paused >1000/s for minutes cannot drain its queue
ECN_MARKED_RATIO = 0.05  # over 5% of a queue's packets marked for 10m is chronic congestion, not an incast burst
LINK_FLAPS_IN_10M = 2  # carrier transitions: one down and one up is a single flap
BGP_DOWN_FOR = "1m"  # longer than a BFD-detected failover, shorter than anyone's patience

PFC_PRIO = "/interfaces/interface[name=*]/ethernet/pfc/priorities/priority[index=*]/state/in-frames"  # EOS
PFC_WATCHDOG = "/interfaces/interface[name=*]/ethernet/pfc/watchdog/tx-queues/tx-queue[index=*][queue-type=*]/state/stuck-count"  # EOS
PAUSE_IN = "/qos/interfaces/interface[interface-id=*]/switch-priority[priority=*]/state/counters/in-pause-pkts"  # Cumulus
QUEUE = "/qos/interfaces/interface[interface-id=*]/output/queues/queue[name=*]/state"
CARRIER = "/interfaces/interface[name=*]/state/counters/carrier-transitions"
BGP = "/network-instances/network-instance[name=*]/protocols/protocol[identifier=*][name=*]/bgp/neighbors/neighbor[neighbor-address=*]"
BGP_STATE = f"{BGP}/state/session-state"


def gnmic_metric_name(path: str, prefix: str = GNMIC_METRIC_PREFIX, subscription: str = "") -> str:
    """The Prometheus name gnmic's ``prometheus`` output gives a leaf path (keys dropped).

    Args:
        path: a gNMI path as subscribed, ``origin:`` first if it has one.
        prefix: the output's ``metric-prefix``.
        subscription: the subscription's name with ``append-subscription-name`` (gnmic.yaml sets it false).

    Example:
        >>> gnmic_metric_name("/interfaces/interface[name=*]/state/counters/carrier-transitions")
        'gnmic_interfaces_interface_state_counters_carrier_transitions'
    """
    parts = [_NOT_NAME.sub("_", prefix)] if prefix else []
    if subscription:
        parts.append(_NOT_NAME.sub("_", subscription).rstrip("_"))
    return "_".join([*parts, _NOT_NAME.sub("_", _KEYS.sub("", path)).lstrip("_")])


def sonic_metric_name(path: str, port: str, prefix: str = GNMIC_METRIC_PREFIX) -> str:
    """The name gnmic gives one port's counter of a SONiC ``COUNTERS/Ethernet*/<counter>`` subscription.

    SONiC answers the virtual path with one JSON object keyed by port, then counter (sonic-net/SONiC
    ``doc/system-telemetry/grpc_telemetry.md``, "Virtual path": ``{"Ethernet0":{"SAI_PORT_STAT_PFC_7_ON2OFF_RX_PKTS":
    "0"},...}``); gnmic flattens it below the path, so the port lands in the name (``prometheus.yml`` moves it to a
    ``port`` label, ``sonic_relabel``).

    Example:
        >>> sonic_metric_name("COUNTERS/Ethernet*/SAI_PORT_STAT_PFC_3_RX_PKTS", "Ethernet8")
        'gnmic_COUNTERS_Ethernet_SAI_PORT_STAT_PFC_3_RX_PKTS_Ethernet8_SAI_PORT_STAT_PFC_3_RX_PKTS'
    """
    counter = path.rsplit("/", 1)[1]
    return gnmic_metric_name(f"/{path}/{port}/{counter}", prefix)


SONIC_PORT_COUNTER = re.compile(f"{GNMIC_METRIC_PREFIX}_COUNTERS_Ethernet_(SAI_PORT_STAT_[A-Z0-9_]+?)_(Ethernet[0-9]+)_SAI_PORT_STAT_[A-Z0-9_]+")
SONIC_RELABELLED = f"{GNMIC_METRIC_PREFIX}_sonic_port"


def sonic_relabel() -> list[dict[str, object]]:
    """``metric_relabel_configs`` for the gnmic job: ``<sonic name>`` → ``gnmic_sonic_port_<COUNTER>{port="EthernetN"}``."""
    regex = SONIC_PORT_COUNTER.pattern
    return [
        {"source_labels": ["__name__"], "regex": regex, "target_label": "port", "replacement": "$2"},
        {"source_labels": ["__name__"], "regex": regex, "target_label": "__name__", "replacement": f"{SONIC_RELABELLED}_$1"},
    ]


def _alert(name: str, expr: str, duration: str, severity: str, summary: str) -> dict[str, object]:
    return {"alert": name, "expr": expr, "for": duration, "labels": {"severity": severity}, "annotations": {"summary": summary}}


def _subscribed(plan: ClusterPlan) -> set[str]:
    text = gnmic_config(plan)
    if not text:
        return set()
    subscriptions = yaml.safe_load(text)["subscriptions"]
    return {gnmic_metric_name(p) for sub in subscriptions.values() for p in sub["paths"]} | {
        f"{SONIC_RELABELLED}_{p.rsplit('/', 1)[1]}" for sub in subscriptions.values() for p in sub["paths"] if p.startswith("COUNTERS/Ethernet*/SAI_")
    }


def _pause_storm(plan: ClusterPlan, names: set[str]) -> dict[str, object] | None:
    prio = plan.roce.priority
    terms = [
        (gnmic_metric_name(PFC_PRIO), f'priority_index="{prio}"', "interface_name"),
        (gnmic_metric_name(PAUSE_IN), f'switch_priority_priority="{prio}"', "interface_interface_id"),
        (f"{SONIC_RELABELLED}_SAI_PORT_STAT_PFC_{prio}_RX_PKTS", "", "port"),
    ]
    exprs = [
        f'label_replace(rate({name}{{{match}}}[1m]), "port", "$1", "{label}", "(.+)") > {PAUSE_STORM_FRAMES_PER_S}'
        if label != "port"
        else f"rate({name}[1m]) > {PAUSE_STORM_FRAMES_PER_S}"
        for name, match, label in terms
        if name in names
    ]
    if not exprs:
        return None
    return _alert(
        "SwitchPauseStorm",
        " or ".join(exprs),
        "2m",
        "critical",
        f"{{{{ $labels.source }}}} {{{{ $labels.port }}}} receives over {PAUSE_STORM_FRAMES_PER_S} PFC pauses/s on priority {prio} (RoCE): "
        "its peer keeps pausing it, a pause storm",
    )


def switch_rules(plan: ClusterPlan) -> list[dict[str, object]]:
    """The switch-side alerts whose series the fabric's gnmic subscriptions produce; empty without gnmic targets.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> [r["alert"] for r in switch_rules(plan_cluster(load_cluster("tests/data/render/eos-3tier/cluster.yaml")))]
        ['SwitchPauseStorm', 'SwitchPfcWatchdogTripped', 'SwitchEcnMarkingHigh', 'SwitchLinkFlapping', 'SwitchBgpDown']
    """
    names = _subscribed(plan)
    rules: list[dict[str, object]] = []
    storm = _pause_storm(plan, names)
    if storm:
        rules.append(storm)
    watchdog = gnmic_metric_name(PFC_WATCHDOG)
    if watchdog in names:
        rules.append(
            _alert(
                "SwitchPfcWatchdogTripped",
                f"increase({watchdog}[5m]) > 0",
                "0s",
                "critical",
                "{{ $labels.source }} {{ $labels.interface_name }} queue {{ $labels.tx_queue_index }}: the PFC watchdog found the queue "
                "stuck and stopped honouring pauses (a pause storm from the peer)",
            )
        )
    marked, sent = gnmic_metric_name(f"{QUEUE}/ecn-marked-pkts"), gnmic_metric_name(f"{QUEUE}/transmit-pkts")
    if marked in names and sent in names:
        rules.append(
            _alert(
                "SwitchEcnMarkingHigh",
                f"rate({marked}[5m]) / rate({sent}[5m]) > {ECN_MARKED_RATIO}",
                "10m",
                "warning",
                "{{ $labels.source }} {{ $labels.interface_interface_id }} queue {{ $labels.queue_name }}: over 5% of packets "
                "ECN-marked (only the RoCE queue marks; chronic congestion)",
            )
        )
    carrier = gnmic_metric_name(CARRIER)
    if carrier in names:
        rules.append(
            _alert(
                "SwitchLinkFlapping",
                f"increase({carrier}[10m]) > {LINK_FLAPS_IN_10M}",
                "0s",
                "warning",
                "{{ $labels.source }} {{ $labels.interface_name }} is flapping",
            )
        )
    bgp = gnmic_metric_name(BGP_STATE)
    if bgp in names:
        rules.append(
            _alert(
                "SwitchBgpDown",
                f'max by (source, network_instance_name, neighbor_neighbor_address) ({bgp}{{session_state!="ESTABLISHED"}}) == 1',
                BGP_DOWN_FOR,
                "critical",
                "{{ $labels.source }}: BGP session to {{ $labels.neighbor_neighbor_address }} is not established",
            )
        )
    return rules
