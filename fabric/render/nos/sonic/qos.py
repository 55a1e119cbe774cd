"""SONiC ``config_db`` QoS and buffer tables: the RoCE contract (maps, schedulers, ECN, PFC, watchdog) and buffers.

Buffers follow SONiC's dynamic buffer model, the model of the NVIDIA Spectrum platforms
(``sonic-device_metadata.yang``: "This model is used by Mellanox so far"): the objects the SKU's
``buffers_dynamic.json.j2`` gives (pools, the five lossy/lossless profiles, PG and queue bindings, per-port profile
lists, ``DEFAULT_LOSSLESS_BUFFER_PARAMETER`` and ``LOSSLESS_TRAFFIC_PATTERN``), with every lossless PG bound to
``NULL`` so the switch computes its headroom from the port's speed, ``CABLE_LENGTH`` and MTU. Only cabled ports get
buffers; the switch gives none to the admin-down rest.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from fabric.catalog.switches import SonicBuffers
from fabric.model.qos import RoceSpec
from fabric.plan.compute.facts import SwitchFacts
from fabric.render.nos.sonic.guard import guard_config_db
from fabric.render.nos.sonic.text import Tables, encode

QOS_MAP = "ROCE"
WRED = "ROCE_LOSSLESS"
PRIORITIES = range(8)
PROFILE_SET = "AZURE"  # the one name SONiC's templates give CABLE_LENGTH and the dynamic buffer parameters
# files/build_templates/buffers_config.j2 (dynamic_mode) in sonic-buildimage: DEFAULT_LOSSLESS_BUFFER_PARAMETER|AZURE
# default_dynamic_th "0" on every branch; LOSSLESS_TRAFFIC_PATTERN|AZURE mtu "1024" with small_packet_percentage "100"
# on the 202405 branch and "50" on 202411 (and master @086b03bd).
DEFAULT_DYNAMIC_TH = "0"
TRAFFIC_PATTERN_MTU = "1024"
SMALL_PACKET_PERCENTAGE = {"202405": "100", "202411": "50"}


def _shared(keys: Iterable[str], entry: dict[str, str]) -> dict[str, dict[str, str]]:
    """``entry`` under every key, one dict for all: the encoder writes each key's entry the same, the guard
    (``fabric.render.nos.sonic.guard._is_plainly_safe``) reads the one object once, and no code changes an entry of
    these tables once built."""
    return dict.fromkeys(keys, entry)  # shared on purpose (above)


@lru_cache(maxsize=64)
def _keys(ports: tuple[str, ...], suffixes: tuple[str, ...]) -> tuple[str, ...]:
    """``port|suffix`` for every port and suffix (a queue, a PG range), in that order: once per port list, as switches of a
    tier have the same cabled ports.

    Example:
        >>> _keys(("Ethernet0", "Ethernet8"), ("3", "4"))
        ('Ethernet0|3', 'Ethernet0|4', 'Ethernet8|3', 'Ethernet8|4')
    """
    return tuple(f"{p}|{r}" for p in ports for r in suffixes)


def _dscp_to_tc(c: QosInputs) -> dict[str, str]:
    """Every DSCP to TC 0, except the RoCE DSCP to the lossless TC and CNP to its strict TC.

    SONiC's default map sends DSCP 26 to lossy TC 1: the whole map is rewritten.
    """
    mapping = dict.fromkeys(map(str, range(64)), "0")
    mapping[str(c.dscp)] = str(c.traffic_class)
    mapping[str(c.cnp_dscp)] = str(c.cnp_traffic_class)
    return mapping


def ranges(values: set[int]) -> list[str]:
    """Contiguous runs of priorities as SONiC writes PG and queue ranges.

    Example:
        >>> ranges({0, 1, 2, 4, 5, 6, 7}), ranges({3})
        (['0-2', '4-7'], ['3'])
    """
    out: list[str] = []
    for value in sorted(values):
        if out and int(out[-1].split("-")[-1]) == value - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{value}"
        else:
            out.append(str(value))
    return out


@dataclass(frozen=True, slots=True)
class QosInputs:
    """All the QoS tables read but the ports: the switch's RoCE contract (``RoceSpec``), its SKU's buffers
    (``SonicBuffers``) and its release, as plain values, hashable, so the tables built from one set of inputs and port
    list are built once (``port_tables``). ``watchdog``: action, detection, restoration and polling times (ms) when the
    PFC watchdog is on."""

    dscp: int
    traffic_class: int
    cnp_dscp: int
    cnp_traffic_class: int
    cnp_strict: bool
    pfc_priorities: tuple[int, ...]
    bandwidth_percent: int
    ecn_min: int | None
    ecn_max: int | None
    ecn_probability: int
    watchdog: tuple[str, int, int, int] | None
    separate_ingress_pools: bool
    egress_lossless_pool_size: int
    release: str


def qos_inputs(roce: RoceSpec, buffers: SonicBuffers, release: str) -> QosInputs:
    """The values of ``roce``, ``buffers`` and ``release`` that the QoS tables print."""
    wd, cnp, ecn = roce.pfc_watchdog, roce.cnp, roce.ecn
    return QosInputs(
        dscp=roce.dscp,
        traffic_class=roce.traffic_class,
        cnp_dscp=cnp.dscp,
        cnp_traffic_class=cnp.traffic_class,
        cnp_strict=cnp.strict,
        pfc_priorities=tuple(roce.pfc_priorities),
        bandwidth_percent=roce.bandwidth_percent,
        ecn_min=ecn.min_threshold_bytes,
        ecn_max=ecn.max_threshold_bytes,
        ecn_probability=ecn.probability,
        watchdog=(wd.action, wd.detection_ms, wd.restoration_ms, wd.polling_ms) if wd.enabled else None,
        separate_ingress_pools=buffers.ingress_pools == "separate",
        egress_lossless_pool_size=buffers.egress_lossless_pool_size,
        release=release,
    )


def qos_tables(facts: SwitchFacts, buffers: SonicBuffers) -> dict[str, Any]:
    """The QoS and buffer tables, or nothing when the fabric carries no RoCE."""
    if facts.roce is None:
        return {}
    ports = tuple(p.name for p in facts.ports if p.lossless)
    return {**port_tables(qos_inputs(facts.roce, buffers, facts.switch.nos_version), ports).tables, "CABLE_LENGTH": cable_length(facts)}


def cable_length(facts: SwitchFacts) -> dict[str, Any]:
    """``CABLE_LENGTH``: each lossless port's cable, from which the switch computes its headroom (the one QoS table that
    differs between switches of a tier)."""
    return {PROFILE_SET: {p.name: f"{p.cable_m}m" for p in facts.ports if p.lossless}}


@lru_cache(maxsize=32)
def port_tables(c: QosInputs, ports: tuple[str, ...]) -> Tables:
    """The QoS and buffer tables but ``CABLE_LENGTH``, guarded and encoded (``fabric.render.nos.sonic.text``), once per
    inputs and lossless port list: a pure function of these two (it reads nothing else), so every switch with the same
    two gets the same tables, checked and encoded by their first build.

    The tables are shared by those switches: no code changes them once built (``_shared``).

    Raises:
        RenderError: a port name that is not one SONiC word (``guard_config_db``).
    """
    names = list(ports)
    pfc = ",".join(str(p) for p in c.pfc_priorities)
    identity = {str(i): str(i) for i in PRIORITIES}
    tc, cnp = c.traffic_class, c.cnp_traffic_class
    port_qos = {
        "dscp_to_tc_map": QOS_MAP,
        "tc_to_pg_map": QOS_MAP,
        "tc_to_queue_map": QOS_MAP,
        "pfc_to_queue_map": QOS_MAP,
        "pfc_enable": pfc,
        "pfcwd_sw_enable": pfc if c.watchdog else "",
    }
    tables: dict[str, Any] = {
        "DSCP_TO_TC_MAP": {QOS_MAP: _dscp_to_tc(c)},
        "TC_TO_PRIORITY_GROUP_MAP": {QOS_MAP: identity},
        "TC_TO_QUEUE_MAP": {QOS_MAP: identity},
        "MAP_PFC_PRIORITY_TO_QUEUE": {QOS_MAP: identity},
        "WRED_PROFILE": {
            WRED: {
                "ecn": "ecn_all",
                "wred_green_enable": "true",
                "green_min_threshold": str(c.ecn_min),
                "green_max_threshold": str(c.ecn_max),
                "green_drop_probability": str(c.ecn_probability),
            }
        },
        "SCHEDULER": {
            "scheduler.roce": {"type": "DWRR", "weight": str(c.bandwidth_percent)},
            "scheduler.default": {"type": "DWRR", "weight": str(100 - c.bandwidth_percent)},
            "scheduler.cnp": {"type": "STRICT"} if c.cnp_strict else {"type": "DWRR", "weight": "1"},
        },
        "PORT_QOS_MAP": _shared(names, port_qos),
        "QUEUE": {  # later keys win, as in one dict display: the CNP queue over the RoCE one, queue 0 over both
            **_shared(_keys(ports, (str(tc),)), {"scheduler": "scheduler.roce", "wred_profile": WRED}),
            **_shared(_keys(ports, (str(cnp),)), {"scheduler": "scheduler.cnp"}),
            **_shared(_keys(ports, ("0",)), {"scheduler": "scheduler.default"}),
        },
        **_buffer_tables(ports, set(c.pfc_priorities), c),
    }
    if c.watchdog:
        action, detection, restoration, polling = c.watchdog
        watchdog = {"action": action, "detection_time": str(detection), "restoration_time": str(restoration)}
        tables["PFC_WD"] = {"GLOBAL": {"POLL_INTERVAL": str(polling)}, **_shared(names, watchdog)}
    return encode(guard_config_db({k: v for k, v in tables.items() if v}))


def _buffer_tables(ports: tuple[str, ...], lossless: set[int], c: QosInputs) -> dict[str, Any]:
    """Dynamic-model buffer objects, as the SKU's buffers_defaults_objects.j2 writes them with ``dynamic_mode`` set."""
    separate = c.separate_ingress_pools
    lossy_ingress = "ingress_lossy_pool" if separate else "ingress_lossless_pool"
    pools: dict[str, dict[str, str]] = {
        "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic"},
        "egress_lossless_pool": {"type": "egress", "mode": "dynamic", "size": str(c.egress_lossless_pool_size)},
        "egress_lossy_pool": {"type": "egress", "mode": "dynamic"},
    }
    if separate:
        pools["ingress_lossy_pool"] = {"type": "ingress", "mode": "dynamic"}
    lossless_ranges, lossy_ranges = tuple(ranges(lossless)), tuple(ranges(set(PRIORITIES) - lossless))  # once, not per port
    ingress = "ingress_lossless_profile,ingress_lossy_profile" if separate else "ingress_lossless_profile"
    return {
        "BUFFER_POOL": pools,
        "BUFFER_PROFILE": {
            "ingress_lossless_profile": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "7"},
            "ingress_lossy_profile": {"pool": lossy_ingress, "size": "0", "dynamic_th": "3"},
            "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "dynamic_th": "7"},
            "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "9216", "dynamic_th": "7"},
            "q_lossy_profile": {"pool": "egress_lossy_pool", "size": "0", "dynamic_th": "3"},
        },
        "BUFFER_PG": {  # one dict per kind of entry, shared by every port's key (_shared)
            **_shared(_keys(ports, lossless_ranges), {"profile": "NULL"}),
            **_shared(_keys(ports, lossy_ranges), {"profile": "ingress_lossy_profile"}),
        },
        "BUFFER_QUEUE": {
            **_shared(_keys(ports, lossless_ranges), {"profile": "egress_lossless_profile"}),
            **_shared(_keys(ports, lossy_ranges), {"profile": "q_lossy_profile"}),
        },
        "BUFFER_PORT_INGRESS_PROFILE_LIST": _shared(ports, {"profile_list": ingress}),
        "BUFFER_PORT_EGRESS_PROFILE_LIST": _shared(ports, {"profile_list": "egress_lossless_profile,egress_lossy_profile"}),
        "DEFAULT_LOSSLESS_BUFFER_PARAMETER": {PROFILE_SET: {"default_dynamic_th": DEFAULT_DYNAMIC_TH}},
        "LOSSLESS_TRAFFIC_PATTERN": {PROFILE_SET: {"mtu": TRAFFIC_PATTERN_MTU, "small_packet_percentage": SMALL_PACKET_PERCENTAGE[c.release]}},
    }
