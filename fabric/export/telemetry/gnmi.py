"""Switch telemetry: a gnmic collector configuration with one gNMI subscription set per NOS, for the signals that tell
a lossless fabric is sick (pure: plan → YAML). gnmic (openconfig/gnmic, "Collector configuration": ``targets`` with
their ``subscriptions``, ``subscriptions`` with ``paths``, ``stream-mode: sample``, ``sample-interval``, a
``prometheus`` output) serves what it receives at :9804 for Prometheus.

Paths, each from the NOS's own documentation:

- **SONiC** (sonic-net/SONiC ``doc/system-telemetry/grpc_telemetry.md``, "Virtual path"): target ``COUNTERS_DB``,
  ``COUNTERS/Ethernet*/<counter>`` for one counter on all ports (``SAI_PORT_STAT_PFC_<p>_RX_PKTS`` / ``_TX_PKTS``
  per priority, ``SAI_PORT_STAT_IF_IN_ERRORS``) and ``COUNTERS/Ethernet*/Queues`` for the queue counters (the CNP
  queue's packets, the ECN marks, the PFC watchdog's fields and the periodic watermark among them; sonic-net/sonic-gnmi
  ``sonic_data_client/virtual_db.go`` ``v2rEthPortQueStats``, see ``telemetry.sonic``); the telemetry server's port in
  that document's examples is 8080. BGP: target ``STATE_DB``, ``NEIGH_STATE_TABLE`` (the bgp container's bgpmon keeps
  each neighbor's state there), beside frr_exporter (SONiC's bgp container is FRR).
- **Cumulus Linux** (CumulusNetworks/docs, Cumulus Linux 5.16 "gNMI Streaming", Metrics: Interface, QoS, Routing;
  the gNMI server listens on 9339): per-priority pauses ``/qos/interfaces/interface[interface-id=*]/switch-priority
  [priority=P]/state/counters/in-pause-pkts`` and ``out-pause-pkts``, ECN ``.../output/queues/queue[name=*]/state/
  ecn-marked-pkts``, queue watermark ``max-queue-len`` and priority-group ``shared-buffer/data/max-occupancy``,
  ``/interfaces/interface[name=*]/state/counters/carrier-transitions`` and ``in-errors``, and BGP
  ``.../bgp/neighbors/neighbor[neighbor-address=*]/state/session-state``. The document lists no PFC watchdog path.

- **Arista EOS** (the YANG EOS 4.36.1F publishes, aristanetworks/yang ``EOS-4.36.1F/``; extract and commit in
  ``tests/data/gnmi-yang/``; the gNMI server "listens by default on TCP/6030" once ``management api gnmi`` /
  ``transport grpc NAME`` is configured, aristanetworks.github.io/openmgmt "OpenConfig"): each path is cited in
  ``_eos``. The watermark is Arista's per-priority PFC buffer high-water mark; OpenConfig's queue ``max-queue-len``
  is deviated ``not-supported`` (``release/openconfig/models/not-supported/arista-qos-notsupported-deviations.yang``).

- **Cisco NX-OS**, two models on the one gNMI server. OpenConfig (the YANG NX-OS 10.6(3) publishes, YangModels/yang
  ``vendor/cisco/nx/10.6-3/``; extract in ``tests/data/gnmi-yang/``): only what its deviations leave supported —
  interface ``in-errors`` and ``carrier-transitions`` (``cisco-nx-openconfig-interfaces-deviations.yang`` removes
  ``link-transitions`` and ``interface-transitions``, not these), output queue ``transmit-pkts`` and ``dropped-pkts``
  (``cisco-nx-openconfig-qos-deviations.yang`` removes ``ecn-marked-pkts``, ``max-queue-len`` and ``dropped-octets``)
  and BGP ``session-state`` (``cisco-nx-openconfig-network-instance-deviations.yang`` removes four other neighbor
  state leaves). The rest is in the native model (``Cisco-NX-OS-device``): CiscoSE/NexusProgrammability
  ``docs/Telemetry/sensor-path.md`` ("Common Sensor Paths", QOS - Output Queue, Native Model column) gives the
  output queue's ``QueuingStats-list`` leaves ``pfcRxPpp`` / ``pfcTxPpp`` (PFC pause frames received / sent per
  queue class), ``pfcwdShutdownCount`` / ``pfcwdRestoredCount`` / ``pfcwdFlushedPackets`` (PFC watchdog),
  ``randEcnMarkedPackets`` (ECN marks) and ``currQueueDepth`` (the queue's current depth in bytes; the table has no
  peak leaf, so the 10 s samples stand in for a watermark). Those paths are read with gNMI origin ``device``, the
  module name dropped (Cisco's cisco-ie/cisco-gnmi-python ``src/cisco_gnmi/nx.py``, ``NXClient.
  parse_xpath_to_gnmi_path``: a ``Cisco-NX-OS-device`` xpath gets ``origin = "device"`` and "Remove the module"),
  written ``device:/System/...`` (gnmic ``pkg/api/path/path.go`` ``ParsePath``: a first element ending in ``:``
  before ``/`` is the origin). The gNMI port is the one the render gives ``grpc port`` (``fabric.plan.gnmi``).

A switch whose definition turns gNMI off (``fabric.management.gnmi: false``) gets no gNMI server in its rendered config
(EOS, NX-OS, Cumulus 5.13+) and is left out, named in the header (Cumulus switches of any release then, since before
5.13 only NetQ's agent serves gNMI).
"""

from __future__ import annotations

import re
from collections import defaultdict

import yaml

from fabric.export.telemetry.sonic_link import DOM_TABLE, FLAP_TABLE
from fabric.export.telemetry.sonic_link import PROCESSORS as SONIC_LINK_PROCESSORS
from fabric.plan.gnmi import GNMI_PORTS, RENDERED
from fabric.plan.types import ClusterPlan, SwitchPlan

GNMIC_PROMETHEUS_LISTEN = ":9804"  # the prometheus output address gnmic's documentation uses throughout
GNMIC_PROMETHEUS_PATH = "/metrics"
GNMIC_METRIC_PREFIX = "gnmic"
SAMPLE_INTERVAL = "10s"
# gnmic docs/user_guide/outputs/prometheus_output.md: the metric names telemetry/switch.py derives assume exactly these
PROMETHEUS_OUTPUT = {
    "type": "prometheus",
    "listen": GNMIC_PROMETHEUS_LISTEN,
    "path": GNMIC_PROMETHEUS_PATH,
    "metric-prefix": GNMIC_METRIC_PREFIX,
    "append-subscription-name": False,  # one name per OpenConfig leaf across EOS, Cumulus and NX-OS
    "strings-as-labels": True,  # BGP session-state becomes a label (value 1), not a dropped string
}


SONIC_QUEUES_PATH = "COUNTERS/Ethernet*/Queues"
SONIC_BGP_PATH = "NEIGH_STATE_TABLE"
# SONiC's answers carry strings that strings-as-labels would turn into labels on every series of the answer, some
# named with a leading digit (telemetry.sonic docstring): drop the watchdog's and peerType's, make a BGP state a number
# (gnmic docs/user_guide/event_processors/event_delete.md, event_strings.md; the prometheus output's event-processors)
SONIC_PROCESSORS: dict[str, dict[str, object]] = {
    # a queue's string fields: sonic-gnmi doc/grpc_telemetry.md (PFC_WD_ACTION, PFC_WD_STATUS), sonic-swss
    # tests/test_pfcwd.py (BIG_RED_SWITCH_MODE, DEBUG_STORM); bgpmon's peerType
    "sonic-drop-strings": {
        "event-delete": {"value-names": ["/(PFC_WD_ACTION|PFC_WD_STATUS|BIG_RED_SWITCH_MODE|DEBUG_STORM)$", f"{SONIC_BGP_PATH}/[^/]+/peerType$"]}
    },
    "sonic-bgp-state": {
        "event-strings": {
            "value-names": [f"{SONIC_BGP_PATH}/[^/]+/state$"],
            "transforms": [
                {"replace": {"apply-on": "value", "old": "^Established$", "new": "1"}},
                {"replace": {"apply-on": "value", "old": "^[^0-9].*$", "new": "0"}},
            ],
        }
    },
    **SONIC_LINK_PROCESSORS,  # flaps and optics: keep their numbers, drop their tables' strings (telemetry.sonic_link)
}


# Cumulus link health (telemetry.link_health): the PHY paths were renamed in 5.15 (CumulusNetworks/docs cumulus-linux-515
# Whats-New, "Updated gNMI PHY metric names"); optics from cumulus-linux-516 "gNMI Streaming", Platform metrics
_INTF = "/interfaces/interface[name=*]"
CUMULUS_PHY_OLD = f"{_INTF}/ethernet/phy/state"
CUMULUS_PHY_NEW = f"{_INTF}/phy/fec/state"
CUMULUS_RX_POWER = "/components/component[name=*]/transceiver/physical-channels/channel[index=*]/state/input-power/instant"
CUMULUS_TEMPERATURE = "/components/component[name=*]/state/temperature/instant"


def cumulus_new_names(version: str) -> bool:
    """Whether a Cumulus release uses the PHY path names of 5.15 on (see above; an unparsable version: the newest).

    Example:
        >>> [cumulus_new_names(v) for v in ("5.9", "5.14", "5.15", "5.16")]
        [False, False, True, True]
    """
    major, _, minor = version.partition(".")
    try:
        return (int(major), int(minor or 0)) >= (5, 15)
    except ValueError:
        return True


def cumulus_link_paths(version: str) -> list[str]:
    """The link-health paths a Cumulus switch of ``version`` is subscribed to."""
    phy = CUMULUS_PHY_NEW if cumulus_new_names(version) else CUMULUS_PHY_OLD
    return [f"{phy}/rs-fec-uncorrectable-blocks", f"{phy}/corrected-bits", CUMULUS_RX_POWER, CUMULUS_TEMPERATURE]


def _sample(paths: list[str], target: str = "") -> dict[str, object]:
    return {**({"target": target} if target else {}), "paths": paths, "mode": "stream", "stream-mode": "sample", "sample-interval": SAMPLE_INTERVAL}


_KEYS = re.compile(r"\[[^\]]*\]")
_NOT_NAME = re.compile(r"[^a-zA-Z0-9_]+")


def gnmic_metric_name(path: str, prefix: str = GNMIC_METRIC_PREFIX, subscription: str = "") -> str:
    """The Prometheus name gnmic's ``prometheus`` output gives a leaf path (keys dropped; rule: ``telemetry.switch``).

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


def _sonic(plan: ClusterPlan) -> dict[str, object]:
    prio = plan.roce.priority
    counters = [f"SAI_PORT_STAT_PFC_{prio}_RX_PKTS", f"SAI_PORT_STAT_PFC_{prio}_TX_PKTS", "SAI_PORT_STAT_IF_IN_ERRORS"]
    # link health: FEC frames not corrected / corrected and corrected bits (pre-FEC BER), telemetry.link_health
    counters += [f"SAI_PORT_STAT_IF_IN_FEC_{c}" for c in ("NOT_CORRECTABLE_FRAMES", "CORRECTABLE_FRAMES", "CORRECTED_BITS")]
    # Queues: every queue's counters, the watchdog's fields of the guarded ones and the periodic watermark (telemetry.sonic)
    return _sample([*(f"COUNTERS/Ethernet*/{c}" for c in counters), SONIC_QUEUES_PATH], "COUNTERS_DB")


def _sonic_bgp(_: ClusterPlan) -> dict[str, object]:
    # STATE_DB NEIGH_STATE_TABLE, which the bgp container's bgpmon keeps (sonic-buildimage src/sonic-bgpcfgd/bgpmon/bgpmon.py)
    return _sample([SONIC_BGP_PATH], "STATE_DB")


def _sonic_flaps(_: ClusterPlan) -> dict[str, object]:
    # APPL_DB PORT_TABLE: flap_count per port (sonic-swss#3052; telemetry.sonic_link)
    return _sample([FLAP_TABLE], "APPL_DB")


def _sonic_optics(_: ClusterPlan) -> dict[str, object]:
    # STATE_DB TRANSCEIVER_DOM_SENSOR: temperature and rx<N>power per port (xcvrd dom_mgr.py; telemetry.sonic_link)
    return _sample([DOM_TABLE], "STATE_DB")


def _cumulus(plan: ClusterPlan) -> dict[str, object]:
    prio = plan.roce.priority
    qos = "/qos/interfaces/interface[interface-id=*]"
    bgp = "/network-instances/network-instance[name=*]/protocols/protocol[identifier=*][name=*]/bgp/neighbors/neighbor[neighbor-address=*]"
    return {
        "paths": [
            f"{qos}/switch-priority[priority={prio}]/state/counters/in-pause-pkts",
            f"{qos}/switch-priority[priority={prio}]/state/counters/out-pause-pkts",
            f"{qos}/output/queues/queue[name=*]/state/ecn-marked-pkts",
            f"{qos}/output/queues/queue[name=*]/state/max-queue-len",
            f"{qos}/input/priority-group[pg-id=*]/state/shared-buffer/data/max-occupancy",
            f"{qos}/output/queues/queue[name=*]/state/transmit-pkts",  # per queue: the ECN ratio's base, the CNP queue's among them
            "/interfaces/interface[name=*]/state/counters/carrier-transitions",
            "/interfaces/interface[name=*]/state/counters/in-errors",
            f"{bgp}/state/session-state",
        ],
        "mode": "stream",
        "stream-mode": "sample",
        "sample-interval": SAMPLE_INTERVAL,
    }


def _eos(plan: ClusterPlan) -> dict[str, object]:
    prio = plan.roce.priority
    intf = "/interfaces/interface[name=*]"
    # arista-intf-augments (release/openconfig/models/interfaces/arista-intf-augments.yang) augments
    # /interfaces/interface/ethernet with container pfc: priorities/priority[index] and watchdog/tx-queues/tx-queue
    pfc = f"{intf}/ethernet/pfc"
    queue = "/qos/interfaces/interface[interface-id=*]/output/queues/queue[name=*]/state"
    bgp = "/network-instances/network-instance[name=*]/protocols/protocol[identifier=*][name=*]/bgp/neighbors/neighbor[neighbor-address=*]"
    return {
        "paths": [
            f"{pfc}/priorities/priority[index={prio}]/state/in-frames",  # arista-intf-augments: PFC frames received
            f"{pfc}/priorities/priority[index={prio}]/state/out-frames",  # arista-intf-augments: PFC frames sent
            f"{pfc}/watchdog/tx-queues/tx-queue[index=*][queue-type=*]/state/stuck-count",  # arista-intf-augments
            f"{pfc}/watchdog/tx-queues/tx-queue[index=*][queue-type=*]/state/recovery-count",  # arista-intf-augments
            # arista-pfc-buffer-counters-augment (experimental/eos/models/): the priority's buffer high-water mark
            f"{pfc}/priorities/priority[index={prio}]/state/all-buffers-octets-max-last-poll",
            f"{queue}/ecn-marked-pkts",  # arista-qos-augments (release/openconfig/models/qos/arista-qos-augments.yang)
            f"{queue}/wred-dropped-pkts",  # arista-qos-augments
            f"{queue}/dropped-pkts",  # openconfig-qos-interfaces (tail and WRED drops)
            f"{queue}/transmit-pkts",  # openconfig-qos-interfaces (per queue, the CNP queue's among them)
            f"{intf}/state/counters/carrier-transitions",  # openconfig-interfaces; arista-intf-deviations removed its deviation
            f"{intf}/state/counters/in-errors",  # openconfig-interfaces
            f"{bgp}/state/session-state",  # openconfig-bgp-neighbor
        ],
        "mode": "stream",
        "stream-mode": "sample",
        "sample-interval": SAMPLE_INTERVAL,
    }


# The native model's per-queue-class counters (CiscoSE/NexusProgrammability docs/Telemetry/sensor-path.md, QOS - Output
# Queue), origin "device" (cisco-ie/cisco-gnmi-python src/cisco_gnmi/nx.py). No list key is pinned (the table names
# none), so every interface and queue class is sampled; each entry carries its class map's name in leaf cmapName.
NXOS_NATIVE_QUEUE = "device:/System/ipqos-items/queuing-items/policy-items/out-items/intf-items/If-list/queCmap-items/QueuingStats-list"
NXOS_NATIVE_LEAVES = (
    "pfcRxPpp",  # PFC pause frames received
    "pfcTxPpp",  # PFC pause frames sent
    "pfcwdShutdownCount",  # PFC watchdog: times the queue was shut
    "pfcwdRestoredCount",  # PFC watchdog: times it was restored
    "pfcwdFlushedPackets",  # PFC watchdog: packets flushed while shut
    "randEcnMarkedPackets",  # WRED/ECN: packets marked
    "currQueueDepth",  # current queue depth in bytes (sampled; the table has no peak leaf)
    "txPackets",  # packets sent: the ECN ratio's base on the same entries as randEcnMarkedPackets
)


def _nxos(_: ClusterPlan) -> dict[str, object]:
    intf = "/interfaces/interface[name=*]/state/counters"
    queue = "/qos/interfaces/interface[interface-id=*]/output/queues/queue[name=*]/state"
    bgp = "/network-instances/network-instance[name=*]/protocols/protocol[identifier=*][name=*]/bgp/neighbors/neighbor[neighbor-address=*]"
    return {
        "paths": [
            f"{intf}/carrier-transitions",  # openconfig-interfaces; not deviated by cisco-nx-openconfig-interfaces-deviations
            f"{intf}/in-errors",  # openconfig-interfaces
            f"{queue}/dropped-pkts",  # openconfig-qos-interfaces; dropped-octets is deviated, dropped-pkts is not
            f"{queue}/transmit-pkts",  # openconfig-qos-interfaces (per queue, the CNP queue's among them)
            f"{bgp}/state/session-state",  # openconfig-bgp-neighbor
            *(f"{NXOS_NATIVE_QUEUE}/{leaf}" for leaf in NXOS_NATIVE_LEAVES),  # Cisco-NX-OS-device (see above)
        ],
        "mode": "stream",
        "stream-mode": "sample",
        "sample-interval": SAMPLE_INTERVAL,
    }


SUBSCRIPTIONS = {"sonic": _sonic, "cumulus": _cumulus, "eos": _eos, "nxos": _nxos}
# other databases (gNMI targets) of the same switches
EXTRA_SUBSCRIPTIONS = {"sonic": {"sonic-bgp": _sonic_bgp, "sonic-flaps": _sonic_flaps, "sonic-optics": _sonic_optics}}
NOTES = {
    "sonic": "# sonic: the queues' ECN marks appear once `counterpoll wredqueue enable` turns the WRED_ECN_QUEUE flex counters on "
    "(off by default; SONiC ECN_and_WRED_statistics_HLD); the processors below keep SONiC's string fields out of the labels\n",
    "nxos": "# nxos: PFC pauses, PFC watchdog, ECN marks and queue depth come from the native model (origin device, every queue "
    "class); the queue depth is the current one sampled every 10s, not a peak (see README)\n",
}


def gnmic_config(plan: ClusterPlan) -> str:
    """``gnmic.yaml``: the fabric's SONiC, Cumulus, EOS and NX-OS switches as targets on their management addresses;
    empty string when the fabric has none of them.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> "SAI_PORT_STAT_PFC_3_RX_PKTS" in gnmic_config(plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml")))
        True
    """
    fabric = plan.fabric
    if fabric is None or fabric.link_layer != "ethernet":
        return ""
    off = not fabric.management.gnmi
    by_nos: dict[str, list[SwitchPlan]] = defaultdict(list)
    for switch in fabric.switches:
        by_nos[switch.nos].append(switch)
    covered = sorted(nos for nos in by_nos if nos in SUBSCRIPTIONS and not (off and nos in RENDERED))
    if not covered:
        return ""
    subscriptions = {
        name: build(plan) for nos in covered for name, build in {f"{nos}-fabric": SUBSCRIPTIONS[nos], **EXTRA_SUBSCRIPTIONS.get(nos, {})}.items()
    }
    links = {s.name: _link_subscription(s) for nos in covered for s in by_nos[nos]}
    subscriptions |= {name: _sample(paths) for name, paths in links.values() if name}
    targets = {
        f"{s.mgmt_address.split('/', maxsplit=1)[0]}:{GNMI_PORTS[nos]}": {
            "name": s.name,
            "subscriptions": [f"{nos}-fabric", *EXTRA_SUBSCRIPTIONS.get(nos, {}), *([links[s.name][0]] if links[s.name][0] else [])],
        }
        for nos in covered
        for s in sorted(by_nos[nos], key=lambda s: s.name)
    }
    output: dict[str, object] = dict(PROMETHEUS_OUTPUT)
    document: dict[str, object] = {
        "encoding": "json_ietf",
        "skip-verify": True,  # the switches' self-signed gNMI certificates (Cumulus: "uses a self-signed certificate")
        "targets": targets,
        "subscriptions": subscriptions,
        "outputs": {"prometheus": output},
    }
    if "sonic" in covered:
        output["event-processors"] = list(SONIC_PROCESSORS)
        document["processors"] = SONIC_PROCESSORS
    return _header(by_nos, covered, off=off) + yaml.safe_dump(document, sort_keys=False, width=200)


def _link_subscription(switch: SwitchPlan) -> tuple[str, list[str]]:
    """A Cumulus switch's link-health subscription (FEC, corrected bits, optics), named after the PHY path names its
    release uses (telemetry.link_health); ("", []) for other NOSes (SONiC's counters are in its fabric subscription)."""
    if switch.nos != "cumulus":
        return "", []
    return ("cumulus-link-phy" if cumulus_new_names(switch.nos_version) else "cumulus-link-ethernet-phy"), cumulus_link_paths(switch.nos_version)


def _header(by_nos: dict[str, list[SwitchPlan]], covered: list[str], *, off: bool) -> str:
    header = "# generated by fabric export telemetry from the cluster definition; do not edit. Paths and sources: README.\n"
    header += "# credentials: gnmic's --username/--password or GNMIC_USERNAME/GNMIC_PASSWORD, never in this file\n"
    header += "".join(NOTES.get(nos, "") for nos in covered)
    uncovered = sorted(s.name for nos, switches in by_nos.items() if nos not in SUBSCRIPTIONS for s in switches)
    if uncovered:
        header += f"# not covered (no sourced gNMI paths for their NOS yet, see README): {', '.join(uncovered)}\n"
    disabled = sorted(s.name for nos, switches in by_nos.items() if off and nos in RENDERED for s in switches)
    if disabled:
        header += f"# left out (fabric.management.gnmi is false, so their configs run no gNMI server): {', '.join(disabled)}\n"
    return header
