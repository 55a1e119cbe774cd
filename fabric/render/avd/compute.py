"""Arista AVD structured config for one EOS switch: the same intent as the EOS text, in AVD's ``eos_cli_config_gen`` schema.

``render --format avd`` writes it as ``<switch>.yml`` so an Arista shop can feed the fabric into its AVD pipeline, and the
reference test renders it with pyavd's ``get_device_config`` and compares the command set with our EOS text
(docs/switches.md, "What a real switch needs: Arista EOS", lists the deliberate differences). Keys follow the eos_cli_config_gen schema of
pyavd 6.4 (``pyavd/_eos_cli_config_gen/schema``); pyavd validates them in that test.
"""

from __future__ import annotations

from typing import Any

import yaml

from fabric.catalog.fec import needs_rs_fec
from fabric.errors import RenderError
from fabric.plan.compute.facts import PortFacts, SwitchFacts
from fabric.render.avd.vrfs import shared_spine
from fabric.render.breakout import eos_speed
from fabric.render.guards import one_line, token
from fabric.render.nos.eos.compute import WATCHDOG_PORT_ACTION

Structured = dict[str, Any]


def build_structured_config(facts: SwitchFacts) -> Structured:
    """The eos_cli_config_gen structured config of one EOS switch (keys in AVD's schema)."""
    s, m = facts.switch, facts.management
    unnumbered = any(p.address is None and p.kind == "fabric" for p in facts.ports)
    config: Structured = {
        "hostname": s.name,
        "service_routing_protocols_model": "multi-agent",
        "vrfs": [{"name": m.vrf, "ip_routing": False}],
        "ip_name_server": {"vrfs": [{"name": m.vrf, "servers": [{"ip_address": a} for a in m.dns]}]} if m.dns else {},
        "ntp": {"vrf": m.vrf, "servers": [{"name": a} for a in m.ntp]} if m.ntp else {},
        "logging": {"vrfs": [{"name": m.vrf, "hosts": [{"name": a} for a in m.syslog]}]} if m.syslog else {},
        "standard_access_lists": [_ssh_acl(facts)],
        "management_ssh": {"vrfs": [{"name": m.vrf, "enable": True, "ip_access_group_in": "MGMT-SSH"}]},
        "management_interfaces": [{"name": m.interface, "description": "oob management", "vrf": m.vrf, "ip_address": m.address}],
        "ethernet_interfaces": [_ethernet(facts, p) for p in facts.ports],
        "loopback_interfaces": [{"name": "Loopback0", "description": "router-id", "ip_address": s.loopback}],
        "ip_routing": True,
        "static_routes": [{"vrf": m.vrf, "prefix": "0.0.0.0/0", "next_hop": m.gateway}] if m.gateway else [],
        "prefix_lists": [
            {
                "name": "FABRIC-OUT",
                "sequence_numbers": [
                    {"sequence": 10 * i, "action": f"permit {prefix} ge {ge}"} for i, (prefix, ge) in enumerate(facts.fabric_prefixes, 1)
                ],
            }
        ],
        "route_maps": [
            {"name": "FABRIC-OUT", "sequence_numbers": [{"sequence": 10, "type": "permit", "match": ["ip address prefix-list FABRIC-OUT"]}]}
        ],
        "router_bgp": _router_bgp(facts, unnumbered=unnumbered),
    }
    if m.domain:
        config["dns_domain"] = m.domain
    if m.gnmi_port:  # AVD management_api_gnmi schema: transport.grpc[].name/port/vrf/ip_access_group; standard_access_lists
        grpc = {"name": "GNMI", "port": m.gnmi_port, "vrf": m.vrf, "ip_access_group": "MGMT-GNMI"}
        config["management_api_gnmi"] = {"transport": {"grpc": [grpc]}}
        config["standard_access_lists"].append({"name": "MGMT-GNMI", "sequence_numbers": [{"sequence": 10, "action": f"permit {m.allowed_prefix}"}]})
    if unnumbered:
        config["ip_routing_ipv6_interfaces"] = True
        config["ipv6_unicast_routing"] = True
    if facts.load_balancing.adaptive_routing:  # fabric.plan.load_balancing: EOS DLB on ECMP groups
        config["ip_hardware"] = {"fib": {"load_balance_distribution": {"dynamic": {"enabled": True}}}}
    config.update(_qos(facts))
    config = shared_spine(facts, config)  # a shared spine: a VRF per plane (fabric.render.avd.vrfs)
    return {k: v for k, v in config.items() if v not in ({}, [], None)}


def _ssh_acl(facts: SwitchFacts) -> Structured:
    # AVD management_ssh schema, vrfs[].ip_access_group_in: "Standard ACL Name." (pyavd 6.4.0)
    return {"name": "MGMT-SSH", "sequence_numbers": [{"sequence": 10, "action": f"permit {facts.management.allowed_prefix}"}]}


def _ethernet(facts: SwitchFacts, port: PortFacts) -> Structured:
    interface: Structured = {
        "name": port.name,
        "description": port.description,
        "mtu": port.mtu,
        "speed": eos_speed(facts.switch.model, port.speed_gbps),
        "switchport": {"enabled": False},
    }
    if needs_rs_fec(facts.switch.model, port.speed_gbps):  # AVD 6.4 ethernet_interfaces[].error_correction_encoding
        interface["error_correction_encoding"] = {"enabled": True, "reed_solomon": True}
    if port.address:
        interface["ip_address"] = port.address
    else:
        interface["ipv6_enable"] = True
    if port.lossless:
        interface["service_profile"] = "ROCE"
    if port.kind == "fabric" and facts.underlay.bfd:
        ms, mult = facts.underlay.bfd_interval_ms, facts.underlay.bfd_multiplier
        interface["bfd"] = {"interval": ms, "min_rx": ms, "multiplier": mult}
    return interface


def _router_bgp(facts: SwitchFacts, *, unnumbered: bool) -> Structured:
    underlay = facts.underlay
    group: Structured = {"name": "FABRIC", "send_community": "all", "route_map_out": "FABRIC-OUT"}
    if underlay.bfd:
        group["bfd"] = True
    af_group: Structured = {"name": "FABRIC", "activate": True}
    if unnumbered:
        af_group["next_hop"] = {"address_family_ipv6": {"enabled": True, "originate": True}}
    return {
        "as": str(facts.switch.asn),
        "router_id": facts.router_id,
        "bgp": {"default": {"ipv4_unicast": False}},
        "maximum_paths": {"paths": underlay.max_paths},
        "peer_groups": [group],
        "neighbors": [
            {"ip_address": n.address, "peer_group": "FABRIC", "remote_as": str(n.remote_asn), "description": n.peer}
            for n in facts.neighbors
            if n.address
        ],
        "neighbor_interfaces": [
            {"name": n.interface, "peer_group": "FABRIC", "remote_as": str(n.remote_asn)} for n in facts.neighbors if not n.address
        ],
        "address_family_ipv4": {"peer_groups": [af_group], "networks": [{"prefix": p} for p in facts.originated]},
    }


def _qos(facts: SwitchFacts) -> Structured:
    r = facts.roce
    if r is None:
        return {}
    wd = r.pfc_watchdog
    pfc: Structured = {"enabled": True, "priorities": [{"priority": p, "no_drop": True} for p in r.pfc_priorities]}
    if wd.enabled:
        pfc["watchdog"] = {"enabled": True, **({"action": WATCHDOG_PORT_ACTION[wd.action]} if wd.action in WATCHDOG_PORT_ACTION else {})}
    low, high = r.ecn.min_threshold_bytes, r.ecn.max_threshold_bytes
    assert low is not None, "the switch's contract carries its resolved thresholds (fabric.plan.buffers.resolved_roce)"
    assert high is not None, "the switch's contract carries its resolved thresholds (fabric.plan.buffers.resolved_roce)"
    ecn: Structured = {"units": "kbytes", "min": low // 1000, "max": high // 1000}
    queues = [
        {
            "id": r.traffic_class,
            "bandwidth_guaranteed_percent": r.bandwidth_percent,
            "random_detect": {"ecn": {"threshold": {**ecn, "max_probability": r.ecn.probability, "weight": 0}}},
        },
        {"id": r.cnp.traffic_class, "priority": "priority strict" if r.cnp.strict else "no priority"},
    ]
    out: Structured = {
        "qos": {
            "map": {
                "dscp": [f"{r.dscp} to traffic-class {r.traffic_class}", f"{r.cnp.dscp} to traffic-class {r.cnp.traffic_class}"],
                "traffic_class": [f"{r.traffic_class} to cos {r.priority}", f"{r.cnp.traffic_class} to cos {r.cnp.priority}"],
            }
        },
        "qos_profiles": [{"name": "ROCE", "trust": "dscp", "priority_flow_control": pfc, "uc_tx_queues": queues}],
    }
    if wd.enabled:
        timers = {
            "timeout": f"{wd.detection_ms / 1000:g}",
            "recovery_time": f"{wd.restoration_ms / 1000:g}",
            "polling_interval": f"{wd.polling_ms / 1000:g}",
        }
        out["priority_flow_control"] = {"watchdog": timers}
    return out


def render_avd(facts: SwitchFacts) -> dict[str, str]:
    """``<switch>.yml``: the structured config as YAML (keys in schema order, as written)."""
    text = yaml.safe_dump(_guard(build_structured_config(facts), facts.switch.name), sort_keys=False, default_flow_style=False)
    return {f"{facts.switch.name}.yml": f"# {facts.switch.name}: AVD structured config generated by gpufabric; do not edit\n{text}"}


def _guard(value: Any, path: str) -> Any:  # noqa: ANN401 - walks any structured config value
    """``value`` once every string in it is safe on the EOS line AVD prints it into (defence in depth, as the templates).

    A ``description`` is free text on one line; any other string is EOS words separated by single spaces
    (``permit 10.0.0.0/16 ge 31``), each one safe word (``fabric.render.guards.token``).

    Raises:
        RenderError: naming the structured-config path of the refused value.
    """
    if isinstance(value, dict):
        return {k: _guard(v, f"{path}.{k}") for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [_guard(v, f"{path}[{i}]") for i, v in enumerate(value)]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    if isinstance(value, str):
        try:
            if path.endswith(".description"):
                one_line(value)
            else:
                for word in value.split(" "):
                    token(word, "eos")
        except RenderError as exc:
            msg = f"AVD structured config {path}: {exc}"
            raise RenderError(msg) from exc
    return value
