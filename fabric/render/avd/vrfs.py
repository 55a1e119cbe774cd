"""A shared spine on EOS (fabric.plan.compute.shared_spines), as AVD structured config: a VRF per plane.

AVD 6.4 eos_cli_config_gen schema (pyavd 6.4.0, the reference tests/render/test_avd_reference.py renders): ``vrfs[]``
(``vrf instance``, ``ip_routing``), ``ethernet_interfaces[].vrf``, ``loopback_interfaces[].vrf``, ``router_bgp.vrfs[]``
(``router_id``, ``neighbors[]`` with ``peer_group``, ``remote_as`` and ``route_map_out``, ``networks[]``,
``address_family_ipv4.neighbors[].activate``). EOS runs one BGP ASN for every VRF (EOS User Manual, "Border Gateway
Protocol (BGP)": ``router bgp`` then ``vrf``), the shared spine's one ASN.
"""

from __future__ import annotations

from typing import Any

from fabric.plan.compute.facts import SwitchFacts
from fabric.plan.compute.spine_vrfs import spine_vrfs

Structured = dict[str, Any]


def policy_name(vrf: str) -> str:
    """The outbound prefix list and route map of one VRF.

    Example:
        >>> policy_name("Vrf-plane2")
        'FABRIC-OUT-VRF-PLANE2'
    """
    return f"FABRIC-OUT-{vrf.upper()}"


def shared_spine(facts: SwitchFacts, config: Structured) -> Structured:
    """``config`` with a VRF per plane when ``facts`` is a shared spine's (unchanged otherwise)."""
    vrfs = spine_vrfs(facts)
    if not vrfs:
        return config
    port_vrf = {p.name: v.name for v in vrfs for p in v.ports}
    config = dict(config)
    config["vrfs"] = [*config["vrfs"], *({"name": v.name, "ip_routing": True} for v in vrfs)]
    config["ethernet_interfaces"] = [{**e, "vrf": port_vrf[e["name"]]} if e["name"] in port_vrf else e for e in config["ethernet_interfaces"]]
    config["loopback_interfaces"] = [
        {"name": f"Loopback{v.plane}", "description": f"{v.name} router-id", "vrf": v.name, "ip_address": v.loopback} for v in vrfs
    ]
    config["prefix_lists"] = [
        {
            "name": policy_name(v.name),
            "sequence_numbers": [{"sequence": 10 * i, "action": f"permit {prefix} ge {ge}"} for i, (prefix, ge) in enumerate(v.fabric_prefixes, 1)],
        }
        for v in vrfs
    ]
    config["route_maps"] = [
        {
            "name": policy_name(v.name),
            "sequence_numbers": [{"sequence": 10, "type": "permit", "match": [f"ip address prefix-list {policy_name(v.name)}"]}],
        }
        for v in vrfs
    ]
    bgp: Structured = dict(config["router_bgp"])
    bgp.pop("router_id", None)
    bgp.pop("neighbors", None)
    bgp.pop("neighbor_interfaces", None)
    bgp.pop("address_family_ipv4", None)
    bgp["peer_groups"] = [{k: val for k, val in g.items() if k != "route_map_out"} for g in bgp["peer_groups"]]
    bgp["vrfs"] = [
        {
            "name": v.name,
            "router_id": v.router_id,
            "maximum_paths": {"paths": facts.underlay.max_paths},
            "neighbors": [
                {
                    "ip_address": n.address,
                    "peer_group": "FABRIC",
                    "remote_as": str(n.remote_asn),
                    "description": n.peer,
                    "route_map_out": policy_name(v.name),
                }
                for n in v.neighbors
            ],
            "networks": [{"prefix": v.loopback}],
            "address_family_ipv4": {"neighbors": [{"ip_address": n.address, "activate": True} for n in v.neighbors]},
        }
        for v in vrfs
    ]
    config["router_bgp"] = bgp
    return config
