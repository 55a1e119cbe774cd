"""A shared spine on SONiC (fabric.plan.compute.shared_spines): the config_db tables of its VRF per plane.

SONiC's forms (sonic-buildimage ``src/sonic-yang-models``, 202405 and 202411, the models tests/render checks against):

- ``VRF|Vrf-plane<k>``: the VRF (sonic-vrf.yang; the name matches ``Vrf[a-zA-Z0-9_-]+``); vrfmgrd makes the kernel VRF;
- ``INTERFACE|EthernetN`` with ``vrf_name`` (sonic-interface.yang: a leafref to ``VRF``), its /31 as before;
- ``LOOPBACK_INTERFACE|Loopback<k>`` with ``vrf_name`` and ``Loopback<k>|a.b.c.d/32`` (sonic-loopback-interface.yang):
  plane k's loopback in its VRF; no ``Loopback0``, so the default VRF has no address of any plane.

The BGP half is FRR's, one instance per VRF (``fabric.render.nos.frr.render_vrf_conf``), as SONiC's own bgpd templates write
``router bgp ASN vrf VRF`` for a VRF's neighbours (dockers/docker-fpm-frr/frr/bgpd).
"""

from __future__ import annotations

from typing import Any

from fabric.plan.compute.facts import SwitchFacts
from fabric.plan.compute.spine_vrfs import spine_vrfs


def vrf_tables(facts: SwitchFacts, interface: dict[str, Any]) -> dict[str, Any]:
    """A shared spine's ``VRF``, ``INTERFACE`` (each port with its ``vrf_name``) and ``LOOPBACK_INTERFACE``; nothing on
    any other switch.

    """
    vrfs = spine_vrfs(facts)
    if not vrfs:
        return {}
    tables: dict[str, Any] = {"VRF": {v.name: {} for v in vrfs}, "INTERFACE": dict(interface), "LOOPBACK_INTERFACE": {}}
    for v in vrfs:
        for p in v.ports:
            tables["INTERFACE"][p.name] = {**interface.get(p.name, {}), "vrf_name": v.name}
        tables["LOOPBACK_INTERFACE"][f"Loopback{v.plane}"] = {"vrf_name": v.name}
        tables["LOOPBACK_INTERFACE"][f"Loopback{v.plane}|{v.loopback}"] = {}
    return tables
