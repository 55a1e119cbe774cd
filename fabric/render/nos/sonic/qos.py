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
from functools import lru_cache
from typing import Any

from fabric.catalog.switches import SonicBuffers
from fabric.plan.compute.facts import SwitchFacts

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
    (``fabric.render.nos.sonic.compute._is_plainly_safe``) reads the one object once, and no code changes an entry of
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


def _dscp_to_tc(facts: SwitchFacts) -> dict[str, str]:
    """Every DSCP to TC 0, except the RoCE DSCP to the lossless TC and CNP to its strict TC.

    SONiC's default map sends DSCP 26 to lossy TC 1: the whole map is rewritten.
    """
    roce = facts.roce
    assert roce is not None
    mapping = dict.fromkeys(map(str, range(64)), "0")
    mapping[str(roce.dscp)] = str(roce.traffic_class)
    mapping[str(roce.cnp.dscp)] = str(roce.cnp.traffic_class)
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


def qos_tables(facts: SwitchFacts, buffers: SonicBuffers) -> dict[str, Any]:
    """The QoS and buffer tables, or nothing when the fabric carries no RoCE."""
    roce = facts.roce
    if roce is None:
        return {}
    lossless = [p for p in facts.ports if p.lossless]
    names = [p.name for p in lossless]
    ports = tuple(names)
    pfc = ",".join(str(p) for p in roce.pfc_priorities)
    identity = {str(i): str(i) for i in PRIORITIES}
    tc, cnp = roce.traffic_class, roce.cnp.traffic_class
    port_qos = {
        "dscp_to_tc_map": QOS_MAP,
        "tc_to_pg_map": QOS_MAP,
        "tc_to_queue_map": QOS_MAP,
        "pfc_to_queue_map": QOS_MAP,
        "pfc_enable": pfc,
        "pfcwd_sw_enable": pfc if roce.pfc_watchdog.enabled else "",
    }
    tables: dict[str, Any] = {
        "DSCP_TO_TC_MAP": {QOS_MAP: _dscp_to_tc(facts)},
        "TC_TO_PRIORITY_GROUP_MAP": {QOS_MAP: identity},
        "TC_TO_QUEUE_MAP": {QOS_MAP: identity},
        "MAP_PFC_PRIORITY_TO_QUEUE": {QOS_MAP: identity},
        "WRED_PROFILE": {
            WRED: {
                "ecn": "ecn_all",
                "wred_green_enable": "true",
                "green_min_threshold": str(roce.ecn.min_threshold_bytes),
                "green_max_threshold": str(roce.ecn.max_threshold_bytes),
                "green_drop_probability": str(roce.ecn.probability),
            }
        },
        "SCHEDULER": {
            "scheduler.roce": {"type": "DWRR", "weight": str(roce.bandwidth_percent)},
            "scheduler.default": {"type": "DWRR", "weight": str(100 - roce.bandwidth_percent)},
            "scheduler.cnp": {"type": "STRICT"} if roce.cnp.strict else {"type": "DWRR", "weight": "1"},
        },
        "PORT_QOS_MAP": _shared(names, port_qos),
        "QUEUE": {  # later keys win, as in one dict display: the CNP queue over the RoCE one, queue 0 over both
            **_shared(_keys(ports, (str(tc),)), {"scheduler": "scheduler.roce", "wred_profile": WRED}),
            **_shared(_keys(ports, (str(cnp),)), {"scheduler": "scheduler.cnp"}),
            **_shared(_keys(ports, ("0",)), {"scheduler": "scheduler.default"}),
        },
        "CABLE_LENGTH": {PROFILE_SET: {p.name: f"{p.cable_m}m" for p in lossless}},
        **_buffer_tables(ports, set(roce.pfc_priorities), buffers, facts.switch.nos_version),
    }
    if roce.pfc_watchdog.enabled:
        wd = roce.pfc_watchdog
        watchdog = {"action": wd.action, "detection_time": str(wd.detection_ms), "restoration_time": str(wd.restoration_ms)}
        tables["PFC_WD"] = {"GLOBAL": {"POLL_INTERVAL": str(wd.polling_ms)}, **_shared(names, watchdog)}
    return tables


def _buffer_tables(ports: tuple[str, ...], lossless: set[int], buffers: SonicBuffers, release: str) -> dict[str, Any]:
    """Dynamic-model buffer objects, as the SKU's buffers_defaults_objects.j2 writes them with ``dynamic_mode`` set."""
    separate = buffers.ingress_pools == "separate"
    lossy_ingress = "ingress_lossy_pool" if separate else "ingress_lossless_pool"
    pools: dict[str, dict[str, str]] = {
        "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic"},
        "egress_lossless_pool": {"type": "egress", "mode": "dynamic", "size": str(buffers.egress_lossless_pool_size)},
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
        "LOSSLESS_TRAFFIC_PATTERN": {PROFILE_SET: {"mtu": TRAFFIC_PATTERN_MTU, "small_packet_percentage": SMALL_PACKET_PERCENTAGE[release]}},
    }
