"""Community SONiC: ``config_db.json`` (ports, addresses, management, QoS, PFC, ECN, buffers) and ``frr.conf`` (BGP, split mode)."""

from __future__ import annotations

import json
from typing import Any

from fabric.plan.facts import SwitchFacts
from fabric.render.frr import render_frr_conf

QOS_MAP = "ROCE"
WRED = "ROCE_LOSSLESS"
PRIORITIES = range(8)


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


def _qos_tables(facts: SwitchFacts) -> dict[str, Any]:
    roce = facts.roce
    if roce is None:
        return {}
    lossless = [p for p in facts.ports if p.lossless]
    pfc = ",".join(str(p) for p in roce.pfc_priorities)
    identity = {str(i): str(i) for i in PRIORITIES}
    tc, cnp = roce.traffic_class, roce.cnp.traffic_class
    profiles = {(b.speed_gbps, b.cable_m): b for b in facts.buffer_profiles}
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
        "PORT_QOS_MAP": {
            p.name: {
                "dscp_to_tc_map": QOS_MAP,
                "tc_to_pg_map": QOS_MAP,
                "tc_to_queue_map": QOS_MAP,
                "pfc_to_queue_map": QOS_MAP,
                "pfc_enable": pfc,
                "pfcwd_sw_enable": pfc if roce.pfc_watchdog.enabled else "",
            }
            for p in lossless
        },
        "QUEUE": {
            **{f"{p.name}|{tc}": {"scheduler": "scheduler.roce", "wred_profile": WRED} for p in lossless},
            **{f"{p.name}|{cnp}": {"scheduler": "scheduler.cnp"} for p in lossless},
            **{f"{p.name}|0": {"scheduler": "scheduler.default"} for p in lossless},
        },
        "CABLE_LENGTH": {"AZURE": {p.name: f"{p.cable_m}m" for p in lossless}},
        "BUFFER_PROFILE": {
            b.name: {
                "pool": "ingress_lossless_pool",
                "xoff": str(b.xoff_bytes),
                "xon": str(b.xon_bytes),
                "size": str(b.xon_bytes),
                "dynamic_th": "-3",
            }
            for b in facts.buffer_profiles
        },
        "BUFFER_PG": {f"{p.name}|{pfc.replace(',', '-')}": {"profile": profiles[p.speed_gbps, p.cable_m].name} for p in lossless},
    }
    if roce.pfc_watchdog.enabled:
        wd = roce.pfc_watchdog
        tables["PFC_WD"] = {
            "GLOBAL": {"POLL_INTERVAL": str(wd.polling_ms)},
            **{p.name: {"action": wd.action, "detection_time": str(wd.detection_ms), "restoration_time": str(wd.restoration_ms)} for p in lossless},
        }
    return tables


def build_config_db(facts: SwitchFacts) -> dict[str, Any]:
    """The config_db tables of one switch, keys sorted on output."""
    s, m = facts.switch, facts.management
    interface: dict[str, Any] = {}
    for p in facts.ports:
        interface[p.name] = {} if p.address else {"ipv6_use_link_local_only": "enable"}
        if p.address:
            interface[f"{p.name}|{p.address}"] = {}
    db: dict[str, Any] = {
        "DEVICE_METADATA": {
            "localhost": {
                "hostname": s.name,
                "hwsku": s.model,
                "type": "LeafRouter" if s.tier == "leaf" else "SpineRouter",
                "bgp_asn": str(s.asn),
                "docker_routing_config_mode": "split",
                "buffer_model": "traditional",
                "default_pfcwd_status": "enable" if facts.roce and facts.roce.pfc_watchdog.enabled else "disable",
            }
        },
        "PORT": {
            p.name: {"admin_status": "up", "mtu": str(p.mtu), "speed": str(p.speed_gbps * 1000), "description": p.description} for p in facts.ports
        },
        "INTERFACE": interface,
        "LOOPBACK_INTERFACE": {"Loopback0": {}, f"Loopback0|{s.loopback}": {}},
        "MGMT_VRF_CONFIG": {"vrf_global": {"mgmtVrfEnabled": "true"}},
        "MGMT_INTERFACE": {f"{m.interface}|{m.address}": {"gwaddr": m.gateway} if m.gateway else {}},
        "NTP_SERVER": {a: {} for a in m.ntp},
        "SYSLOG_SERVER": {a: {} for a in m.syslog},
        "DNS_NAMESERVER": {a: {} for a in m.dns},
        "ACL_TABLE": {
            "SSH_ONLY": {"type": "CTRLPLANE", "services": ["SSH"], "stage": "ingress", "policy_desc": "SSH only from the management prefix"}
        },
        "ACL_RULE": {
            "SSH_ONLY|RULE_10": {"PRIORITY": "9999", "SRC_IP": m.allowed_prefix, "PACKET_ACTION": "ACCEPT"},
            "SSH_ONLY|DEFAULT_RULE": {"PRIORITY": "1", "ETHER_TYPE": "0x0800", "PACKET_ACTION": "DROP"},
        },
        **_qos_tables(facts),
    }
    return {k: v for k, v in db.items() if v}


def render_sonic(facts: SwitchFacts) -> dict[str, str]:
    """``config_db.json`` and the split-mode ``frr.conf`` (management lives in config_db)."""
    text = json.dumps(build_config_db(facts), indent=2, sort_keys=True) + "\n"
    return {"config_db.json": text, "frr.conf": render_frr_conf(facts, management=False)}
