"""ISC Kea DHCPv4 configuration for the OOB plane: every BMC and management port gets its planned address.

The BMCs' MAC addresses are not in the definition, so a lease is keyed by where the cable lands: the DHCP relay in
front of the BMCs adds the Relay Agent Information option 82 (RFC 3046) with the management switch's name as
remote-id (sub-option 2) and the access port as circuit-id (sub-option 1). Cumulus Linux 5.7-5.13 does this with
``nv set service dhcp-relay default agent enable on``, ``... agent remote-id <name>`` and
``... agent use-pif-circuit-id enable on`` (the physical port, not the SVI, as circuit-id;
https://docs.nvidia.com/networking-ethernet-software/nvue-reference/Show-Commands/DHCP-Relay); 5.14+ writes
``agent state enabled`` and ``agent use-pif-circuit-id state enabled`` (the CL 5.14 NVUE OpenAPI spec).

Kea 2.2 (Debian 12) has no open-source ``flex-id`` hook and its ``circuit-id`` host identifier alone is not unique
(every switch has a ``swp1``), so each endpoint gets a client class that tests both sub-options,
``relay4[2].hex == '<switch>' and relay4[1].hex == '<port>'`` on Cumulus; SONiC's relay (``dhcrelay -a %h:%p %P``) puts
``<hostname>:<port alias>`` in circuit-id and a MAC in remote-id, so a SONiC switch's class tests
``relay4[1].hex == '<switch>:<alias>'`` alone, as SONiC's own port-based DHCP design does (sonic-net/SONiC
``doc/dhcp_server/port_based_dhcp_server_high_level_design.md``); an EOS switch's class tests
``relay4[1].hex == '<switch>:<interface>'`` (circuit-id format ``%h:%p``,
``fabric.render.nos.eos.oob``) (Kea ARM, "Using Expressions in Classification",
https://kea.readthedocs.io/en/kea-2.2.0/arm/classify.html), and a one-address pool guarded by that class
(``client-class`` on a pool, https://kea.readthedocs.io/en/kea-2.2.0/arm/dhcp4-srv.html). A device on an unplanned port
matches no class and gets no address. A replaced BMC (new MAC, same port) gets its address once the old lease expires
or is deleted (``lease4-del``): the one-address pool is held by the old lease until then. ``kea-dhcp4 -t`` checks the rendered file in the tests.
"""

from __future__ import annotations

import json
from ipaddress import IPv4Network
from typing import Any

from fabric.plan.oob.types import OobLink
from fabric.plan.types import ClusterPlan
from fabric.render.nos.sonic.oob import sonic_aliases

KEA_FILE = "dhcp/kea-dhcp4.json"


def render_kea(plan: ClusterPlan) -> dict[str, str]:
    """``{"dhcp/kea-dhcp4.json": text}`` for a plan with an OOB network, ``{}`` otherwise.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> conf = json.loads(render_kea(plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml")))[KEA_FILE])
        >>> conf["Dhcp4"]["subnet4"][0]["pools"][0]
        {'pool': '10.103.252.2 - 10.103.252.2', 'client-class': 'oob-mgmt-swp1'}
    """
    if plan.oob is None:
        return {}
    oob_plane = plan.plane("oob")
    cidr = IPv4Network(oob_plane.cidr or "0.0.0.0/0")
    classes: list[dict[str, Any]] = []
    pools: list[dict[str, Any]] = []
    aliases = {s.name: sonic_aliases(s.model) if s.nos == "sonic" else None for s in plan.oob.switches}
    hostname_circuit = {s.name for s in plan.oob.switches if s.nos == "eos"}  # circuit-id <hostname>:<interface>
    no_relay = {s.name for s in plan.oob.switches if s.nos == "nxos"}  # NX-OS switches relay nothing (fabric.plan.oob.build)
    for link in (x for x in plan.oob.links if x.b_address is not None and x.a_device not in no_relay):
        name = f"{link.a_device}-{link.a_port}"  # one class per switch port: stable, and says where the cable lands
        address = str(link.b_address).split("/")[0]
        test = _option82_test(link, aliases.get(link.a_device), hostname_circuit=link.a_device in hostname_circuit)
        classes.append({"name": name, "test": test, "comment": f"{link.b_device} {link.b_port} ({link.kind})"})
        pools.append({"pool": f"{address} - {address}", "client-class": name})
    subnet: dict[str, Any] = {"id": 1, "subnet": str(cidr), "pools": pools}
    if oob_plane.gateway:
        subnet["option-data"] = [{"name": "routers", "data": oob_plane.gateway}]
    config = {
        "Dhcp4": {
            # Every request is relayed (giaddr set), so Kea needs no raw socket on a client segment.
            "interfaces-config": {"interfaces": ["*"], "dhcp-socket-type": "udp"},
            "lease-database": {"type": "memfile", "persist": True, "name": "/var/lib/kea/kea-leases4.csv"},
            "valid-lifetime": plan.oob.dhcp_lease_seconds,
            "client-classes": classes,
            "subnet4": [subnet],
            "loggers": [{"name": "kea-dhcp4", "output_options": [{"output": "stdout"}], "severity": "INFO"}],
        }
    }
    return {KEA_FILE: json.dumps(config, indent=2) + "\n"}


def _option82_test(link: OobLink, aliases: dict[str, str] | None, *, hostname_circuit: bool = False) -> str:
    """The class test for the port ``link`` lands on: remote-id and circuit-id (Cumulus), ``<host>:<alias>`` (SONiC), ``<host>:<port>`` (EOS)."""
    if hostname_circuit:
        return f"relay4[1].hex == '{link.a_device}:{link.a_port}'"
    if aliases is None:
        return f"relay4[2].hex == '{link.a_device}' and relay4[1].hex == '{link.a_port}'"
    return f"relay4[1].hex == '{link.a_device}:{aliases[link.a_port]}'"
