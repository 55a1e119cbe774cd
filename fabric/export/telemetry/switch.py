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
so the name follows from the subscribed path alone. SONiC answers objects keyed by port, queue or neighbor, whose
names ``prometheus.yml`` relabels (``telemetry.sonic``); NX-OS's native paths carry origin ``device``, which the
terms accept with or without (``telemetry.signals``). Each alert is one rule over every NOS that feeds it (``or``),
with the labels made common: ``port`` (and ``queue``) on PFC, watchdog, ECN and flaps, ``neighbor`` on BGP.
"""

from __future__ import annotations

from fabric.export.telemetry.gnmi import gnmic_metric_name
from fabric.export.telemetry.signals import Term, signals
from fabric.plan.types import ClusterPlan

__all__ = ["gnmic_metric_name", "switch_rules"]

PAUSE_STORM_FRAMES_PER_S = 1000  # as the NIC side: a port paused >1000/s for minutes cannot drain its queue
ECN_MARKED_RATIO = 0.05  # over 5% of a queue's packets marked for 10m is chronic congestion, not an incast burst
LINK_FLAPS_IN_10M = 2  # carrier transitions: one down and one up is a single flap
BGP_DOWN_FOR = "1m"  # longer than a BFD-detected failover, shorter than anyone's patience
# NX-OS's native entries carry no common port/queue (telemetry.signals), so those parts are printed only when present
_WHERE = "{{ $labels.source }}{{ with $labels.port }} {{ . }}{{ end }}{{ with $labels.queue }} queue {{ . }}{{ end }}"


def _alert(name: str, expr: str, duration: str, severity: str, summary: str) -> dict[str, object]:
    return {"alert": name, "expr": expr, "for": duration, "labels": {"severity": severity}, "annotations": {"summary": summary}}


def _over(terms: list[Term], fn: str, window: str, threshold: float) -> str:
    return " or ".join(f"{t.common(f'{fn}({t.selector()}[{window}])')} > {threshold}" for t in terms)


def switch_rules(plan: ClusterPlan) -> list[dict[str, object]]:
    """The switch-side alerts whose series the fabric's gnmic subscriptions produce; empty without gnmic targets.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> [r["alert"] for r in switch_rules(plan_cluster(load_cluster("tests/data/render/eos-3tier/cluster.yaml")))]
        ['SwitchPauseStorm', 'SwitchPfcWatchdogTripped', 'SwitchEcnMarkingHigh', 'SwitchLinkFlapping', 'SwitchBgpDown']
    """
    s = signals(plan)
    prio = plan.roce.priority
    rules: list[dict[str, object]] = []
    if s.pause_rx:
        rules.append(
            _alert(
                "SwitchPauseStorm",
                _over(s.pause_rx, "rate", "1m", PAUSE_STORM_FRAMES_PER_S),
                "2m",
                "critical",
                f"{{{{ $labels.source }}}} {{{{ $labels.port }}}} receives over {PAUSE_STORM_FRAMES_PER_S} PFC pauses/s on priority {prio} (RoCE): "
                "its peer keeps pausing it, a pause storm",
            )
        )
    if s.watchdog:
        rules.append(
            _alert(
                "SwitchPfcWatchdogTripped",
                _over(s.watchdog, "increase", "5m", 0),
                "0s",
                "critical",
                f"{_WHERE}: the PFC watchdog found the queue stuck and stopped honouring pauses (a pause storm from the peer)",
            )
        )
    if s.ecn:
        expr = " or ".join(f"{m.common(f'rate({m.selector()}[5m]) / rate({t.selector()}[5m])')} > {ECN_MARKED_RATIO}" for m, t in s.ecn)
        rules.append(
            _alert(
                "SwitchEcnMarkingHigh",
                expr,
                "10m",
                "warning",
                f"{_WHERE}: over 5% of packets ECN-marked (only the RoCE queue marks; chronic congestion)",
            )
        )
    if s.carrier:
        rules.append(_alert("SwitchLinkFlapping", _over(s.carrier, "increase", "10m", LINK_FLAPS_IN_10M), "0s", "warning", f"{_WHERE} is flapping"))
    if s.bgp:
        by = "max by (source, network_instance_name, neighbor)"
        expr = " or ".join(f"{by} ({t.common(t.selector(match))}) {cmp}" for t, _, (match, cmp) in s.bgp)
        rules.append(
            _alert(
                "SwitchBgpDown",
                expr,
                BGP_DOWN_FOR,
                "critical",
                "{{ $labels.source }}: BGP session to {{ $labels.neighbor }} is not established",
            )
        )
    return rules
