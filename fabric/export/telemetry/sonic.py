"""SONiC's gNMI answers as Prometheus series: the names gnmic gives them, the relabelling that moves ports, queues and
neighbors out of the names, and the gnmic event processors that keep SONiC's string fields out of the labels.

What SONiC's telemetry server (sonic-net/sonic-gnmi @5ec1c20b, ``sonic_data_client/virtual_db.go``) answers:

- ``COUNTERS/Ethernet*/<counter>`` (target ``COUNTERS_DB``): one JSON object keyed by port, then the counter
  (``v2rEthPortFieldStats``; ``jsonTableKey`` is the port's vendor alias from CONFIG_DB ``PORT|<name>`` ``alias``
  where it has one, ``etp10`` in the doc's example, else the SONiC name).
- ``COUNTERS/Ethernet*/Queues``: one object keyed ``<port>:<queue index>`` holding that queue's whole counter hash,
  plus ``<port>:<queue index>:periodic`` holding ``SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES`` from
  ``PERIODIC_WATERMARKS`` (``v2rEthPortQueStats``). The hash of a queue the PFC watchdog guards also carries the
  watchdog's fields, ``PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED`` among them, and the strings ``PFC_WD_STATUS``
  (``operational``/``stormed``) and ``PFC_WD_ACTION`` (sonic-gnmi ``doc/grpc_telemetry.md``, the example answer of
  ``COUNTERS/Ethernet*/Queues``). ECN marks per queue are ``SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS``, present where
  the platform supports them and ``counterpoll wredqueue enable`` turned the ``WRED_ECN_QUEUE`` flex counter group on
  (sonic-net/SONiC ``doc/qos/ECN_and_WRED_statistics_HLD.md``: "By default these flexcounter groups are disabled").
  (``COUNTERS/Ethernet*/Pfcwd`` answers the same hashes for the guarded queues only, so subscribing both would
  serve each watchdog counter twice under one name.)
- ``NEIGH_STATE_TABLE`` (target ``STATE_DB``, a plain table path, ``TableData2Msi`` in ``db_client.go``): one
  object keyed by neighbor address with ``state`` (FRR's ``show bgp summary json`` state: ``Established``,
  ``Active``, ``Connect``, ...) and ``peerType``, which the bgp container's ``bgpmon`` writes every 15 s
  (sonic-net/sonic-buildimage ``src/sonic-bgpcfgd/bgpmon/bgpmon.py``).

gnmic flattens an object below the subscribed path (``/``-joined) and names the series after the whole path
(``telemetry.switch`` docstring), so the port, queue and neighbor end up in the name; ``sonic_relabel`` moves
them to labels ``port``, ``queue`` and ``neighbor`` (their values with every run outside ``[a-zA-Z0-9_]`` as ``_``,
so ``10.0.0.57`` reads ``10_0_0_57``). With ``strings-as-labels`` gnmic turns every string value of an event into a
label on all of that event's series, named after the shortest unique path tail
(``prometheus_common.go`` ``buildUniqueLabelsFromValues``), which for ``10.0.0.57/state`` would be a label name
starting with a digit; ``SONIC_PROCESSORS`` therefore delete the watchdog's and ``peerType``'s strings
(``event-delete``) and turn a neighbor's state into a number (``event-strings`` ``replace``: 1 established,
0 otherwise) before the prometheus output sees them (``telemetry.gnmi.SONIC_PROCESSORS``).
"""

from __future__ import annotations

import re

from fabric.export.telemetry.gnmi import GNMIC_METRIC_PREFIX, SONIC_BGP_PATH, SONIC_QUEUES_PATH
from fabric.export.telemetry.sonic_link import DOM_TABLE, FLAP_TABLE, SONIC_FLAPS, SONIC_RX_POWER, SONIC_TEMPERATURE, link_relabel

_NOT_NAME = re.compile(r"[^a-zA-Z0-9_]+")
PORT_PATH = "COUNTERS/Ethernet*/"  # + a port counter's name
QUEUES_PATH = SONIC_QUEUES_PATH
BGP_PATH = SONIC_BGP_PATH

SONIC_PORT = f"{GNMIC_METRIC_PREFIX}_sonic_port"  # + _<counter>{port}
SONIC_QUEUE = f"{GNMIC_METRIC_PREFIX}_sonic_queue"  # + _<field>{port, queue}
SONIC_QUEUE_PERIODIC = f"{GNMIC_METRIC_PREFIX}_sonic_queue_periodic"  # + _SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES
SONIC_BGP = f"{GNMIC_METRIC_PREFIX}_sonic_bgp_neighbor_state"  # {neighbor}: 1 established, 0 otherwise
# The queue hash's fields the rules and the dashboard read (see above for each source)
QUEUE_FIELDS = ("SAI_QUEUE_STAT_PACKETS", "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED")
WATERMARK_FIELD = "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES"


def _raw(path: str) -> str:
    return f"{GNMIC_METRIC_PREFIX}_{_NOT_NAME.sub('_', path).lstrip('_')}"


def sonic_metric_name(path: str, key: str, field: str = "") -> str:
    """The name gnmic gives one entry of a SONiC answer: the subscribed path, the object's key, then the field.

    Args:
        path: the subscribed path.
        key: the answer's key (a port, ``<port>:<queue>``, a neighbor address).
        field: the field below the key; a port counter's path names its own.

    Example:
        >>> sonic_metric_name("COUNTERS/Ethernet*/SAI_PORT_STAT_PFC_3_RX_PKTS", "Ethernet8")
        'gnmic_COUNTERS_Ethernet_SAI_PORT_STAT_PFC_3_RX_PKTS_Ethernet8_SAI_PORT_STAT_PFC_3_RX_PKTS'
        >>> sonic_metric_name("COUNTERS/Ethernet*/Queues", "etp10:3", "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED")
        'gnmic_COUNTERS_Ethernet_Queues_etp10_3_PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED'
    """
    return _raw(f"/{path}/{key}/{field or path.rsplit('/', 1)[1]}")


def _move(regex: str, name: str, labels: dict[str, str]) -> list[dict[str, object]]:
    """Relabel rules that copy each group into its label, then rename (labels first, while the name still holds them)."""
    rules: list[dict[str, object]] = [
        {"source_labels": ["__name__"], "regex": regex, "target_label": label, "replacement": group} for label, group in labels.items()
    ]
    rules.append({"source_labels": ["__name__"], "regex": regex, "target_label": "__name__", "replacement": name})
    return rules


def sonic_relabel(paths: list[str]) -> list[dict[str, object]]:
    """``metric_relabel_configs`` for the gnmic job, one set per subscribed SONiC path.

    A port counter's own name brackets the port, so its regex is exact whatever the alias looks like.

    Example:
        >>> [r["target_label"] for r in sonic_relabel(["COUNTERS/Ethernet*/SAI_PORT_STAT_PFC_3_RX_PKTS"])]
        ['port', '__name__']
    """
    rules: list[dict[str, object]] = []
    for path in paths:
        if path == QUEUES_PATH:
            queue = _raw(f"/{QUEUES_PATH}")
            rules += _move(f"{queue}_(.+)_([0-9]+)_((?:SAI|PFC)_[A-Za-z0-9_]+)", f"{SONIC_QUEUE}_$3", {"port": "$1", "queue": "$2"})
            rules += _move(f"{queue}_(.+)_([0-9]+)_periodic_(SAI_[A-Za-z0-9_]+)", f"{SONIC_QUEUE_PERIODIC}_$3", {"port": "$1", "queue": "$2"})
        elif path == BGP_PATH:
            rules += _move(f"{_raw('/' + BGP_PATH)}_(.+)_state", SONIC_BGP, {"neighbor": "$1"})
        elif path in (FLAP_TABLE, DOM_TABLE):  # link flaps and optics (telemetry.sonic_link)
            for regex, name, labels in link_relabel(GNMIC_METRIC_PREFIX):
                if f"_{path}_" in regex:
                    rules += _move(regex, name, labels)
        elif path.startswith(PORT_PATH):
            counter = path.rsplit("/", 1)[1]
            rules += _move(f"{_raw('/' + path)}_(.+)_{counter}", f"{SONIC_PORT}_{counter}", {"port": "$1"})
    return rules


def sonic_names(paths: list[str]) -> set[str]:
    """The relabelled names the subscribed SONiC paths give, for the rules and panels to read.

    Example:
        >>> sorted(sonic_names(["NEIGH_STATE_TABLE"]))
        ['gnmic_sonic_bgp_neighbor_state']
    """
    names: set[str] = set()
    for path in paths:
        if path == QUEUES_PATH:
            names |= {f"{SONIC_QUEUE}_{f}" for f in QUEUE_FIELDS} | {f"{SONIC_QUEUE_PERIODIC}_{WATERMARK_FIELD}"}
        elif path == BGP_PATH:
            names.add(SONIC_BGP)
        elif path == FLAP_TABLE:
            names.add(SONIC_FLAPS)
        elif path == DOM_TABLE:
            names |= {SONIC_RX_POWER, SONIC_TEMPERATURE}
        elif path.startswith(PORT_PATH):
            names.add(f"{SONIC_PORT}_{path.rsplit('/', 1)[1]}")
    return names
