"""The OOB plane on the twin: the cables of every management switch, a Linux bridge for the OOB core, one namespace per BMC.

What the planned OOB network is, at L2/L3: each management switch (``fabric.plan.oob.build``) is a namespace whose own
config (its rendered ``nv set`` lines, booted as its startup revision and changed by the push, ``fabric.twin.nvue_standin``)
builds the bridge of the plane's VLAN (``br100``) with its SVI address and enslaves its ports; every BMC cable is a
veth from the switch's access port (``swp5``) into the BMC stand-in's namespace (``<cluster>-<host>-bmc``, its planned
address, default route to the plane's gateway); every switch's first uplink is a veth into the core's bridge, which
holds the plane's gateway (the core is not a planned switch: the twin builds it). Only the first uplink is cabled: the
twin's plain bridges run no LACP or STP, and two uplinks would loop. The compute switches'
management ports stay off the twin's OOB plane (their FRR runs in the default VRF, where a management address would
join the two planes). Nothing routes between the OOB namespaces and the rest of the twin: ``oob_checks`` proves it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from ipaddress import IPv4Interface

from fabric.plan.oob.types import OobLink
from fabric.plan.types import ClusterPlan

RunFn = Callable[..., object]
"""The twin's command runner (``fabric.twin.lab._run``): argv in, raises on failure."""

BRIDGE = "br0"
PING_TIMEOUT_S = 10


def bmc_device(hostname: str) -> str:
    """The twin device name of a node's BMC stand-in: ``<host>-bmc``."""
    return f"{hostname}-bmc"


def oob_devices(plan: ClusterPlan) -> tuple[str, ...]:
    """Every twin device of the OOB plane, one namespace each: the core, the management switches, the BMC stand-ins."""
    if plan.oob is None:
        return ()
    bmcs = sorted({bmc_device(x.b_device) for x in plan.oob.links if x.kind == "bmc"})
    return (plan.oob.core, *(s.name for s in plan.oob.switches), *bmcs)


def cable_oob(plan: ClusterPlan, ns: dict[str, str], run: RunFn) -> None:
    """The core's bridge and gateway address, BMC and uplink veths, inside namespaces the caller created (``ns``: device → name)."""
    oob = plan.oob
    if oob is None:
        return
    plane = plan.plane("oob")
    prefixlen = IPv4Interface(oob.switches[0].mgmt_address).network.prefixlen if oob.switches else 32
    _bridge(ns[oob.core], f"{plane.gateway}/{prefixlen}" if plane.gateway else None, run)
    uplinked: set[str] = set()
    for link in oob.links:
        if link.kind == "bmc" and link.b_address:
            _bmc(ns[link.a_device], ns[bmc_device(link.b_device)], link, plane.gateway, run)
        elif link.kind == "uplink" and link.a_device not in uplinked:
            uplinked.add(link.a_device)
            _veth(ns[link.a_device], link.a_port, ns[oob.core], link.a_device, run)
            run("ip", "-n", ns[oob.core], "link", "set", link.a_device, "master", BRIDGE)


def _bridge(ns: str, address: str | None, run: RunFn) -> None:
    run("ip", "-n", ns, "link", "add", BRIDGE, "type", "bridge")
    run("ip", "-n", ns, "link", "set", BRIDGE, "up")
    if address:
        run("ip", "-n", ns, "addr", "add", address, "dev", BRIDGE)


def _veth(a_ns: str, a_port: str, b_ns: str, b_port: str, run: RunFn) -> None:
    run("ip", "-n", a_ns, "link", "add", a_port, "type", "veth", "peer", "name", b_port, "netns", b_ns)
    run("ip", "-n", a_ns, "link", "set", a_port, "up")
    run("ip", "-n", b_ns, "link", "set", b_port, "up")


def _bmc(switch_ns: str, bmc_ns: str, link: OobLink, gateway: str | None, run: RunFn) -> None:
    _veth(switch_ns, link.a_port, bmc_ns, link.b_port, run)
    run("ip", "-n", bmc_ns, "addr", "add", str(link.b_address), "dev", link.b_port)
    if gateway:
        run("ip", "-n", bmc_ns, "route", "add", "default", "via", gateway)


@dataclass(frozen=True, slots=True)
class PlaneCheck:
    """One reachability probe on the twin: who pinged what, whether it should answer, and whether it did."""

    source: str
    target: str
    address: str
    expect: bool
    answered: bool
    output: str

    @property
    def ok(self) -> bool:
        """The probe came out as the plan says: an answer inside the plane, none across planes."""
        return self.expect == self.answered


def oob_checks(plan: ClusterPlan, ns: dict[str, str]) -> list[PlaneCheck]:
    """BMC → its switch, BMC → another switch's BMC (across the core): answered; node ↔ BMC (compute and OOB): no route.

    Args:
        plan: the twin's plan (with an OOB network and cabled nodes).
        ns: device → namespace of every twin device (``fabric.twin.lab.namespace``).
    """
    oob = plan.oob
    if oob is None:
        return []
    bmcs = [x for x in oob.links if x.kind == "bmc" and x.b_address]
    if not bmcs:
        return []
    first, last = bmcs[0], bmcs[-1]
    svi = next(s.mgmt_address for s in oob.switches if s.name == first.a_device)
    probes = [
        (bmc_device(first.b_device), first.a_device, _ip(svi), True),
        (bmc_device(first.b_device), bmc_device(last.b_device), _ip(str(last.b_address)), True),
    ]
    cabled = [n for n in plan.nodes if any(i.switch for i in n.interfaces)]
    if cabled:
        node = cabled[0]
        compute = next(str(i.address) for i in node.interfaces if i.switch and i.address)
        probes += [
            (node.hostname, bmc_device(first.b_device), _ip(str(first.b_address)), False),
            (bmc_device(first.b_device), node.hostname, _ip(compute), False),
        ]
    return [probe(ns[source], source, target, address, expect=expect) for source, target, address, expect in probes]


def _ip(interface: str) -> str:
    return str(IPv4Interface(interface).ip)


def probe(namespace: str, source: str, target: str, address: str, *, expect: bool, device: str | None = None) -> PlaneCheck:
    """One ping from ``namespace`` (out of ``device`` when given, ``ping -I``) and whether it came out as ``expect``."""
    argv = ["ip", "netns", "exec", namespace, "ping", "-c", "1", "-W", "2", *(["-I", device] if device else []), address]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=PING_TIMEOUT_S, check=False)  # noqa: S603 - fixed argv
    lines = (result.stdout + result.stderr).strip().splitlines()
    summary = next((line for line in lines if "transmitted" in line or "unreachable" in line.lower()), lines[-1] if lines else "")
    return PlaneCheck(source, target, address, expect, result.returncode == 0, summary.strip())
