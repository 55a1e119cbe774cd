"""The switch signals as PromQL, one term per NOS over the series gnmic serves for ``gnmic.yaml``, with the labels
made common (``port``, ``queue``, ``neighbor``) so one alert or panel reads every NOS: the alert rules
(``telemetry.switch``) and the dashboard's tier rows (``telemetry.dashboard``) share these (pure).

A term is written only where a subscribed path feeds it (``subscribed_names``). NX-OS's native counters are named
from the subscribed path with its origin (``gnmic_device_System_...``); whether NX-OS sends the origin back is not
documented, so those terms also accept the name without it (``{__name__=~"gnmic_(device_)?System_..."}``), and they
keep whatever key labels the switch sends (the sensor-path table names none), so no common ``port``/``queue``.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from fabric.export.telemetry.gnmi import GNMIC_METRIC_PREFIX, NXOS_NATIVE_QUEUE, gnmic_config, gnmic_metric_name
from fabric.export.telemetry.sonic import (
    SONIC_BGP,
    SONIC_PORT,
    SONIC_QUEUE,
    SONIC_QUEUE_PERIODIC,
    WATERMARK_FIELD,
    sonic_names,
)
from fabric.plan.types import ClusterPlan

INTF = "/interfaces/interface[name=*]"
PFC = f"{INTF}/ethernet/pfc"  # EOS (arista-intf-augments)
PFC_PRIO = f"{PFC}/priorities/priority[index=*]/state/in-frames"
PFC_PRIO_OUT = f"{PFC}/priorities/priority[index=*]/state/out-frames"
PFC_BUFFER = f"{PFC}/priorities/priority[index=*]/state/all-buffers-octets-max-last-poll"
PFC_WATCHDOG = f"{PFC}/watchdog/tx-queues/tx-queue[index=*][queue-type=*]/state/stuck-count"
QOS = "/qos/interfaces/interface[interface-id=*]"
PAUSE_IN = f"{QOS}/switch-priority[priority=*]/state/counters/in-pause-pkts"  # Cumulus
PAUSE_OUT = f"{QOS}/switch-priority[priority=*]/state/counters/out-pause-pkts"  # Cumulus
QUEUE = f"{QOS}/output/queues/queue[name=*]/state"
CARRIER = f"{INTF}/state/counters/carrier-transitions"
BGP = "/network-instances/network-instance[name=*]/protocols/protocol[identifier=*][name=*]/bgp/neighbors/neighbor[neighbor-address=*]"
BGP_STATE = f"{BGP}/state/session-state"

_OC_PORT = (("port", "interface_name"),)
_OC_QUEUE = (("port", "interface_interface_id"), ("queue", "queue_name"))


@dataclass(frozen=True)
class Term:
    """One NOS's series for a signal: its name (or a regex over names), fixed matchers, the labels to make common."""

    name: str
    match: str = ""
    labels: tuple[tuple[str, str], ...] = ()
    regex: bool = False
    derived: str = ""  # a regex term's name as derived from the subscribed path

    @property
    def subscribed(self) -> str:
        """The name the subscriptions must give for this term to be written."""
        return self.derived or self.name

    def selector(self, extra: str = "") -> str:
        """``name{match,extra}``, or ``{__name__=~"...",match,extra}`` for a regex term."""
        matchers = [m for m in (self.match, extra) if m]
        if self.regex:
            return "{" + ",".join([f'__name__=~"{self.name}"', *matchers]) + "}"
        return f"{self.name}{{{','.join(matchers)}}}" if matchers else self.name

    def common(self, expr: str) -> str:
        """``expr`` with this NOS's labels copied to the common ones (``label_replace``)."""
        for target, source in self.labels:
            expr = f'label_replace({expr}, "{target}", "$1", "{source}", "(.+)")'
        return expr


def _nxos(leaf: str) -> Term:
    native = gnmic_metric_name(f"{NXOS_NATIVE_QUEUE}/{leaf}")  # gnmic_device_System_...
    return Term(native.replace(f"{GNMIC_METRIC_PREFIX}_device_", f"{GNMIC_METRIC_PREFIX}_(device_)?", 1), regex=True, derived=native)


def subscribed_names(plan: ClusterPlan) -> set[str]:
    """Every series name the fabric's gnmic subscriptions give (SONiC's after ``prometheus.yml``'s relabelling)."""
    text = gnmic_config(plan)
    if not text:
        return set()
    paths = [p for sub in yaml.safe_load(text)["subscriptions"].values() for p in sub["paths"]]
    return {gnmic_metric_name(p) for p in paths} | sonic_names(paths)


@dataclass(frozen=True)
class Signals:
    """The terms each signal has on this fabric (empty where no subscribed path feeds it)."""

    pause_rx: list[Term]
    pause_tx: list[Term]
    watchdog: list[Term]
    ecn: list[tuple[Term, Term]]  # (marked, sent) of the same queues
    watermark: list[Term]
    carrier: list[Term]
    bgp: list[tuple[Term, tuple[str, str], tuple[str, str]]]  # (term, (matcher, comparison) established, the same not)


def signals(plan: ClusterPlan) -> Signals:
    """The switch signals the fabric's subscriptions feed.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> s = signals(plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml")))
        >>> [t.name for t in s.watchdog]
        ['gnmic_sonic_queue_PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED']
    """
    names = subscribed_names(plan)
    prio = plan.roce.priority

    def have(*terms: Term) -> bool:
        return all(t.subscribed in names for t in terms)

    def keep(*terms: Term) -> list[Term]:
        return [t for t in terms if have(t)]

    # SONiC's relabel already gives port and queue; OpenConfig BGP states are labels on series of value 1 (strings-as-labels)
    ecn = [
        (Term(gnmic_metric_name(f"{QUEUE}/ecn-marked-pkts"), labels=_OC_QUEUE), Term(gnmic_metric_name(f"{QUEUE}/transmit-pkts"), labels=_OC_QUEUE)),
        (Term(f"{SONIC_QUEUE}_SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS"), Term(f"{SONIC_QUEUE}_SAI_QUEUE_STAT_PACKETS")),
        (_nxos("randEcnMarkedPackets"), _nxos("txPackets")),
    ]
    bgp = [
        (
            Term(gnmic_metric_name(BGP_STATE), labels=(("neighbor", "neighbor_neighbor_address"),)),
            ('session_state="ESTABLISHED"', "== 1"),
            ('session_state!="ESTABLISHED"', "== 1"),
        ),
        (Term(SONIC_BGP), ("", "== 1"), ("", "== 0")),
    ]
    return Signals(
        pause_rx=keep(
            Term(gnmic_metric_name(PFC_PRIO), f'priority_index="{prio}"', _OC_PORT),
            Term(gnmic_metric_name(PAUSE_IN), f'switch_priority_priority="{prio}"', (("port", "interface_interface_id"),)),
            Term(f"{SONIC_PORT}_SAI_PORT_STAT_PFC_{prio}_RX_PKTS"),
        ),
        pause_tx=keep(
            Term(gnmic_metric_name(PFC_PRIO_OUT), f'priority_index="{prio}"', _OC_PORT),
            Term(gnmic_metric_name(PAUSE_OUT), f'switch_priority_priority="{prio}"', (("port", "interface_interface_id"),)),
            Term(f"{SONIC_PORT}_SAI_PORT_STAT_PFC_{prio}_TX_PKTS"),
        ),
        watchdog=keep(
            Term(gnmic_metric_name(PFC_WATCHDOG), labels=(("port", "interface_name"), ("queue", "tx_queue_index"))),
            Term(f"{SONIC_QUEUE}_PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED"),
            _nxos("pfcwdShutdownCount"),
        ),
        ecn=[(m, s) for m, s in ecn if have(m, s)],
        watermark=keep(
            Term(gnmic_metric_name(PFC_BUFFER), f'priority_index="{prio}"', _OC_PORT),
            Term(gnmic_metric_name(f"{QUEUE}/max-queue-len"), labels=_OC_QUEUE),
            Term(f"{SONIC_QUEUE_PERIODIC}_{WATERMARK_FIELD}"),
            _nxos("currQueueDepth"),
        ),
        carrier=keep(Term(gnmic_metric_name(CARRIER), labels=_OC_PORT)),
        bgp=[b for b in bgp if have(b[0])],
    )
