"""The twin of a two-plane fabric: 2 planes x (2 leaves + 2 spines) of FRR switches, 4 nodes with one port in each plane.
Within a plane the rendered configs converge and nodes reach each other across the spines; between planes nothing is
reachable, not even when a host sends plane-2 traffic into its plane-1 port. Needs root, FRR and OpenSSH (as the lab's).

Run one at a time under the lock: flock /tmp/gpufabric-container.lock .venv/bin/python -m pytest tests/twin/test_planes_twin.py -q -x
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabric.model import ClusterSpec
from fabric.plan import ClusterPlan, plan_cluster
from fabric.render import render_configs
from fabric.twin.lab import LabState, lab_down, lab_namespaces, lab_up, namespace
from tests.apply.conftest import CONVERGE_S, state_dir
from tests.conftest import ROOT

pytestmark = pytest.mark.twin  # builds a twin: the twin lane of ./dev test, one twin at a time (docs/testing.md)

__all__ = ["state_dir"]

CLUSTER = f"gfp{os.getpid()}"


def two_plane_lab(cluster: str) -> ClusterSpec:
    """The lab definition with two compute planes: each node's dual-port NIC (eth1, eth3) gives one port to each plane."""
    data = yaml.safe_load((ROOT / "inventories" / "lab" / "cluster.yaml").read_text(encoding="utf-8"))
    data["name"] = cluster
    data["planes"]["compute"]["max_ports_per_node"] = 2
    data["fabric"].update(planes=2, plane_split="port")
    data["nodes"][0]["ports"]["compute"] = {"count": 2, "speed_gbps": 100, "names": ["eth1", "eth3"], "ports_per_nic": 2}
    return ClusterSpec.model_validate(data)


def test_the_two_plane_lab_plans_two_fabrics_of_two_leaves_and_two_spines() -> None:
    """No root needed: the shape the twin builds."""
    plan = plan_cluster(two_plane_lab("lab2"))
    assert plan.fabric is not None
    assert [s.name for s in plan.fabric.switches] == [
        "p1-spine01", "p1-spine02", "p2-spine01", "p2-spine02", "p1-leaf01", "p1-leaf02", "p2-leaf01", "p2-leaf02",
    ]  # fmt: skip
    ports = {(n.hostname, i.name): (i.switch, i.address) for n in plan.nodes for i in n.interfaces if i.plane == "compute"}
    assert ports[("node1", "eth1")] == ("p1-leaf01", "10.100.0.1/31")
    assert ports[("node3", "eth3")] == ("p2-leaf02", "10.100.128.5/31")


@pytest.fixture(scope="module")
def plan() -> ClusterPlan:
    assert os.geteuid() == 0, "the twin needs root"
    return plan_cluster(two_plane_lab(CLUSTER))


@pytest.fixture
def twin(plan: ClusterPlan, state_dir: Path) -> Iterator[tuple[LabState, Path]]:
    state = lab_up(plan, state_dir)
    try:
        yield state, state_dir
    finally:
        lab_down(plan.name, state_dir, lab_namespaces(plan))


def vtysh(state: LabState, switch: str, *args: str) -> str:
    s = state.switch(switch)
    cmd = ["ip", "netns", "exec", s.namespace, "vtysh", "--vty_socket", f"{s.run_dir}/run", "--config_dir", s.run_dir, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=True).stdout


def in_ns(ns: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", "netns", "exec", ns, *args], capture_output=True, text=True, timeout=30, check=False)


def ping(ns: str, source: str, target: str) -> subprocess.CompletedProcess[str]:
    return in_ns(ns, "ping", "-c", "2", "-W", "2", "-I", source, target)


def wait_for_route(state: LabState, switch: str, prefix: str) -> dict[str, Any]:
    deadline = time.monotonic() + CONVERGE_S
    routes: dict[str, Any] = {}
    while time.monotonic() < deadline:
        routes = json.loads(vtysh(state, switch, "-c", f"show ip route {prefix} json"))
        if any(h.get("active") for r in routes.get(prefix, []) for h in r.get("nexthops", [])):
            return routes
        time.sleep(0.5)
    pytest.fail(f"{switch} has no route to {prefix} after {CONVERGE_S} s: {routes}")


def test_planes_converge_alone_and_never_reach_each_other(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    state, directory = twin
    files = render_configs(plan)
    for switch in state.switches:
        conf = directory / f"{switch.name}.conf"
        conf.write_text(files[f"switches/{switch.name}/frr.conf"], encoding="utf-8")
        vtysh(state, switch.name, "-f", str(conf))
    # within each plane: leaf01 learns leaf02's host /31s through the plane's spines
    wait_for_route(state, "p1-leaf01", "10.100.0.4/31")
    wait_for_route(state, "p2-leaf01", "10.100.128.4/31")
    node1 = namespace(plan.name, "node1")
    # node1 -> node3 within plane 1 (eth1) and within plane 2 (eth3): across leaves and spines
    within = [ping(node1, "eth1", "10.100.0.5"), ping(node1, "eth3", "10.100.128.5")]
    assert all(p.returncode == 0 for p in within), [p.stdout + p.stderr for p in within]
    # no switch of one plane knows a prefix of the other (host /31s or loopbacks)
    other = {1: ("10.100.128.0/17", "10.255.128.0/17"), 2: ("10.100.0.0/17", "10.255.0.0/17")}
    for name, plane in (("p1-leaf01", 1), ("p1-spine01", 1), ("p2-leaf02", 2), ("p2-spine02", 2)):
        table = json.loads(vtysh(state, name, "-c", "show ip route json"))
        crossing = [p for p in table if any(IPv4Network(p).subnet_of(IPv4Network(block)) for block in other[plane])]
        assert not crossing, (name, crossing)
        assert any(IPv4Network(p).subnet_of(IPv4Network(other[3 - plane][0])) for p in table), (name, "its own plane's hosts")
    # a plane-1 address cannot reach a plane-2 address (its table, as roles/network_planes writes it, says unreachable)
    refused = ping(node1, "10.100.0.1", "10.100.128.5")
    assert refused.returncode != 0, refused.stdout
    control = ping(node1, "10.100.128.1", "10.100.128.5")  # the same host, from its plane-2 address: reached
    assert control.returncode == 0, control.stdout + control.stderr
    # ... and even sent into plane 1 on purpose (a route through the plane-1 leaf), the plane-1 fabric drops it
    forced = in_ns(node1, "ip", "route", "add", "10.100.128.5/32", "via", "10.100.0.0", "dev", "eth1")
    assert forced.returncode == 0, forced.stderr
    crossed = ping(node1, "eth1", "10.100.128.5")
    assert crossed.returncode != 0, crossed.stdout
    assert " 0% packet loss" not in crossed.stdout
