"""The peer: pyavd 6.4.0 on the same S-spine x L-leaf EOS fabric, end to end, in its own virtualenv (``./dev bench``).

Runs as a user of AVD runs it (mode A of shared/reference/perf-anchor.md): every device gets its own copy of the whole
fabric's variables, as Ansible hostvars carry them, then the public pipeline of pyavd
(python-avd/pyavd/__init__.py in aristanetworks/avd): ``validate_inputs`` per device, ``AVDDesign._from_dict`` per
device (what ``get_device_structured_config`` does itself for a dict; done once here), ``get_avd_facts`` for the whole
fabric, ``get_device_structured_config`` and ``get_device_config`` per device, and every config written to a file.

The fabric, from the reference: eBGP underlay, no overlay (no VXLAN/EVPN, no MLAG); spines platform 7800R3, one ASN
65000, Loopback0 from 10.255.0.0/24; one node group per leaf (platform 7060X5, AS 65100 + id, Loopback0 from
10.255.1.0/24), uplinks Ethernet33..32+S to Ethernet<leaf id> on every spine, /31s from 10.254.0.0/16, MTU 9214;
32 routed /31 host ports per leaf (Ethernet1-32, from 100.64.0.0/10, advertised by BGP); the RoCE profile
ROCE_LOSSLESS (trust DSCP, TX queue 3 at 50 % with ECN 150-1500 kB, queue 6 strict, PFC priority 3 no-drop with
watchdog; DSCP 26 -> TC 3, DSCP 48 -> TC 6) on every fabric link and host port, given as eos_cli_config_gen keys
through ``custom_structured_configuration_*`` (eos_designs has no QoS model of its own).

Usage: .venv-pyavd/bin/python bench/pyavd_fabric.py SPINES LEAVES OUTDIR   (prints one JSON line: devices, lines, bytes)
"""

from __future__ import annotations

import copy
import ipaddress
import json
import sys
from pathlib import Path
from typing import Any

HOST_PORTS = 32
HOST_POOL = ipaddress.ip_network("100.64.0.0/10")
QOS_PROFILE = "ROCE_LOSSLESS"


def roce_qos() -> dict[str, Any]:
    """The RoCE lossless QoS as eos_cli_config_gen data (qos_profiles, qos.map.dscp, priority_flow_control)."""
    return {
        "custom_structured_configuration_qos_profiles": [
            {
                "name": QOS_PROFILE,
                "trust": "dscp",
                "tx_queues": [
                    {
                        "id": 3,
                        "bandwidth_percent": 50,
                        "random_detect": {"ecn": {"threshold": {"units": "kbytes", "min": 150, "max": 1500, "max_probability": 100}}},
                    },
                    {"id": 6, "priority": "priority strict"},
                ],
                "priority_flow_control": {
                    "enabled": True,
                    "priorities": [{"priority": 3, "no_drop": True}],
                    "watchdog": {"enabled": True, "action": "drop"},
                },
            }
        ],
        "custom_structured_configuration_qos": {"map": {"dscp": ["26 to traffic-class 3", "48 to traffic-class 6"]}},
        "custom_structured_configuration_priority_flow_control": {"watchdog": {"action": "drop", "timeout": 0.2, "polling_interval": 0.1}},
    }


def fabric_vars(spines: int, leaves: int) -> dict[str, Any]:
    """The group variables of the whole fabric (what every device's hostvars carry)."""
    spine_names = [f"spine{i:02d}" for i in range(1, spines + 1)]
    node_groups = []
    for leaf in range(1, leaves + 1):
        ports = []
        for port in range(1, HOST_PORTS + 1):
            subnet = HOST_POOL.network_address + ((leaf - 1) * HOST_PORTS + port - 1) * 2
            ports.append({"name": f"Ethernet{port}", "ip_address": f"{subnet}/31", "qos_profile": QOS_PROFILE, "description": f"gpu-{leaf}-{port}"})
        node = {"name": f"leaf{leaf:03d}", "id": leaf, "uplink_switch_interfaces": [f"Ethernet{leaf}"] * spines, "l3_interfaces": ports}
        node_groups.append({"group": f"LEAF{leaf:03d}", "bgp_as": str(65100 + leaf), "nodes": [node]})
    return {
        "fabric_name": "FABRIC",
        "underlay_routing_protocol": "ebgp",
        "overlay_routing_protocol": "none",
        "underlay_filter_redistribute_connected": False,
        "p2p_uplinks_mtu": 9214,
        "p2p_uplinks_qos_profile": QOS_PROFILE,
        "spine": {
            "defaults": {"platform": "7800R3", "bgp_as": "65000", "loopback_ipv4_pool": "10.255.0.0/24"},
            "nodes": [{"name": name, "id": i} for i, name in enumerate(spine_names, 1)],
        },
        "l3leaf": {
            "defaults": {
                "platform": "7060X5",
                "loopback_ipv4_pool": "10.255.1.0/24",
                "uplink_ipv4_pool": "10.254.0.0/16",
                "uplink_switches": spine_names,
                "uplink_interfaces": [f"Ethernet{HOST_PORTS + 1 + j}" for j in range(spines)],
                "max_uplink_switches": spines,
                "vtep": False,
                "mlag": False,
            },
            "node_groups": node_groups,
        },
        **roce_qos(),
    }


def main() -> None:
    spines, leaves, out = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    import pyavd
    from pyavd.api.schemas import AVDDesign

    group = fabric_vars(spines, leaves)
    types = {f"spine{i:02d}": "spine" for i in range(1, spines + 1)} | {f"leaf{i:03d}": "l3leaf" for i in range(1, leaves + 1)}
    designs: dict[str, Any] = {}
    for host, node_type in types.items():
        hostvars = copy.deepcopy(group) | {"type": node_type}  # Ansible hands every device its own copy
        result = pyavd.validate_inputs(hostvars)
        problems = [*result.validation_result.violations, *result.validation_result.ignored_eos_config_keys]
        if result.validated_data is None or problems:
            found = [f"{getattr(v, 'path', '')}: {getattr(v, 'message', v)}" for v in problems][:3]
            msg = f"{host}: pyavd rejects the inputs: {found}"
            raise SystemExit(msg)
        designs[host] = AVDDesign._from_dict(result.validated_data)
    facts = pyavd.get_avd_facts(designs)
    out.mkdir(parents=True, exist_ok=True)
    lines = size = 0
    for host, design in designs.items():
        config = pyavd.get_device_config(pyavd.get_device_structured_config(host, design, facts))
        (out / f"{host}.cfg").write_text(config, encoding="utf-8")
        lines += config.count("\n")
        size += len(config)
    print(json.dumps({"devices": len(designs), "lines": lines, "bytes": size}))


if __name__ == "__main__":
    main()
