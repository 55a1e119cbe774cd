"""The twin of two planes over shared spines (fabric.plane_spines: shared): 2 FRR spines, each with a VRF per plane,
2 leaves per plane, 4 nodes with one port in each plane. Within a plane the nodes reach each other across the shared
spines; across planes they cannot, even after the hosts' ``unreachable`` routes (roles/network_planes) are replaced by
routes that send the whole compute block out of every port: only the spines' VRFs stand between the planes.

The proof that it is the VRFs: the spines' outbound filters are opened to both planes' blocks and the planes still do
not meet; the control, the same open filters with both planes' ports in one VRF, lets the ping through.

Needs root, FRR and OpenSSH (as the lab's). Run one at a time under the lock:
flock /tmp/gpufabric-container.lock .venv/bin/python -m pytest tests/twin/test_shared_spines_twin.py -q -x
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from ipaddress import IPv4Network
from pathlib import Path

import pytest

from fabric.model import ClusterSpec
from fabric.plan import ClusterPlan, plan_cluster
from fabric.plan.compute.facts import build_switch_facts
from fabric.plan.compute.spine_vrfs import VrfFacts, spine_vrfs
from fabric.render import render_configs
from fabric.render.nos.frr import render_vrf_conf, render_vrf_devices
from fabric.twin.lab import LabState, lab_down, lab_namespaces, lab_up, namespace
from tests.apply.conftest import CONVERGE_S, state_dir
from tests.twin.test_planes_twin import in_ns, ping, two_plane_lab, vtysh, wait_for_route

pytestmark = pytest.mark.twin  # builds a twin: the twin lane of ./dev test, one twin at a time (docs/testing.md)

__all__ = ["state_dir"]

CLUSTER = f"gfs{os.getpid()}"
OPEN = (("10.255.0.0/16", 32), ("10.100.0.0/16", 31))  # both planes' loopbacks and host links: a filter that keeps nothing apart


def shared_lab(cluster: str) -> ClusterSpec:
    """The two-plane lab with one spine layer for both planes."""
    spec = two_plane_lab(cluster)
    assert spec.fabric is not None
    return spec.model_copy(update={"fabric": spec.fabric.model_copy(update={"plane_spines": "shared"})})


def test_the_shared_spine_lab_plans_one_spine_layer_with_a_vrf_per_plane() -> None:
    """No root needed: the shape the twin builds, and each spine port's VRF."""
    plan = plan_cluster(shared_lab("labs"))
    assert plan.fabric is not None
    assert [s.name for s in plan.fabric.switches] == ["spine01", "spine02", "p1-leaf01", "p1-leaf02", "p2-leaf01", "p2-leaf02"]
    vrfs = spine_vrfs(build_switch_facts(plan, ["spine01"])[0])
    assert [(v.name, [p.peer for p in v.ports], v.loopback) for v in vrfs] == [
        ("Vrf-plane1", ["p1-leaf01", "p1-leaf02"], "10.255.0.1/32"),
        ("Vrf-plane2", ["p2-leaf01", "p2-leaf02"], "10.255.128.1/32"),
    ]


def spine_files(plan: ClusterPlan, variant: str) -> dict[str, tuple[str, str]]:
    """Each spine's (frr.conf, vrfs.ip): as rendered, with open filters, or (the control) open filters in one VRF."""
    files = render_configs(plan)
    out: dict[str, tuple[str, str]] = {}
    for facts in build_switch_facts(plan, [s.name for s in plan.fabric.spines] if plan.fabric else []):
        vrfs = spine_vrfs(facts)
        if variant != "rendered":
            vrfs = tuple(dataclasses.replace(v, fabric_prefixes=OPEN) for v in vrfs)
        if variant == "one-vrf":
            first = vrfs[0]
            vrfs = (VrfFacts(first.name, 1, first.table, first.loopback, facts.ports, facts.neighbors, OPEN),)
        name = facts.switch.name
        if variant == "rendered":
            out[name] = (files[f"switches/{name}/frr.conf"], files[f"switches/{name}/vrfs.ip"])
        else:
            out[name] = (render_vrf_conf(facts, vrfs, management=True), render_vrf_devices(vrfs))
    return out


def kernel_vrfs() -> str | None:
    """Why this kernel cannot run the twin's VRFs (no ``vrf`` link type: CONFIG_NET_VRF), or None when it can."""
    probe = f"{CLUSTER}-vrfprobe"
    subprocess.run(["ip", "netns", "add", probe], check=True, capture_output=True, timeout=30)
    try:
        made = subprocess.run(
            ["ip", "-n", probe, "link", "add", "probe", "type", "vrf", "table", "1001"], check=False, capture_output=True, text=True, timeout=30
        )
    finally:
        subprocess.run(["ip", "netns", "del", probe], check=True, capture_output=True, timeout=30)
    return None if made.returncode == 0 else f"this kernel has no VRF device ({made.stderr.strip()}): CONFIG_NET_VRF / modprobe vrf"


@pytest.fixture(scope="module")
def plan() -> ClusterPlan:
    assert os.geteuid() == 0, "the twin needs root"
    missing = kernel_vrfs()
    if missing:
        pytest.skip(missing)
    return plan_cluster(shared_lab(CLUSTER))


@pytest.fixture
def twin(plan: ClusterPlan, state_dir: Path) -> Iterator[tuple[LabState, Path]]:
    state = lab_up(plan, state_dir)
    try:
        yield state, state_dir
    finally:
        lab_down(plan.name, state_dir, lab_namespaces(plan))


def push(state: LabState, directory: Path, plan: ClusterPlan, variant: str) -> None:
    spines = spine_files(plan, variant)
    files = render_configs(plan)
    for switch in state.switches:
        conf = directory / f"{switch.name}.conf"
        if switch.name in spines:  # lab_up made the rendered VRF devices (vrfs.ip); the variant may move ports between them
            text, devices = spines[switch.name]
            batch = directory / f"{switch.name}.ip"
            batch.write_text("".join(line + "\n" for line in devices.splitlines() if " master " in line), encoding="utf-8")
            subprocess.run(["ip", "-n", switch.namespace, "-batch", str(batch)], check=True, capture_output=True, timeout=30)
        else:
            text = files[f"switches/{switch.name}/frr.conf"]
        conf.write_text(text, encoding="utf-8")
        vtysh(state, switch.name, "-f", str(conf))


def open_hosts(ns: str) -> None:
    """Replace every per-port table's ``unreachable`` compute block by a route for the whole block out of that port."""
    tables = in_ns(ns, "ip", "route", "show", "table", "all").stdout
    for table in re.findall(r"^unreachable 10\.100\.0\.0/16 table (\d+)", tables, re.MULTILINE):
        via = re.search(r"via (\S+) dev (\S+)", in_ns(ns, "ip", "route", "show", "table", table).stdout)
        assert via, table
        done = in_ns(ns, "ip", "route", "replace", "10.100.0.0/16", "via", via.group(1), "dev", via.group(2), "table", table)
        assert done.returncode == 0, done.stderr
    assert "unreachable" not in in_ns(ns, "ip", "route", "show", "table", "all").stdout


def leaf_routes(state: LabState, leaf: str) -> list[str]:
    return list(json.loads(vtysh(state, leaf, "-c", "show ip route json")))


@pytest.mark.parametrize(("variant", "crosses"), [("rendered", False), ("open-filters", False), ("one-vrf", True)])
def test_shared_spines_keep_planes_apart_by_their_vrfs(twin: tuple[LabState, Path], plan: ClusterPlan, variant: str, crosses: bool) -> None:
    state, directory = twin
    push(state, directory, plan, variant)
    # within each plane: leaf01 learns leaf02's host /31s through the shared spines' plane VRF
    wait_for_route(state, "p1-leaf01", "10.100.0.4/31")
    wait_for_route(state, "p2-leaf01", "10.100.128.4/31")
    node1, node3 = namespace(plan.name, "node1"), namespace(plan.name, "node3")
    within = [ping(node1, "eth1", "10.100.0.5"), ping(node1, "eth3", "10.100.128.5")]
    assert all(p.returncode == 0 for p in within), [p.stdout + p.stderr for p in within]
    if variant == "rendered":  # each VRF's table holds only its plane; the default VRF holds no plane's routes
        for spine in ("spine01", "spine02"):
            for vrf, other in (("Vrf-plane1", "10.100.128.0/17"), ("Vrf-plane2", "10.100.0.0/17")):
                table = json.loads(vtysh(state, spine, "-c", f"show ip route vrf {vrf} json"))
                assert not [p for p in table if IPv4Network(p).subnet_of(IPv4Network(other))], (spine, vrf, table)
            default = json.loads(vtysh(state, spine, "-c", "show ip route json"))
            assert not [p for p in default if IPv4Network(p).subnet_of(IPv4Network("10.100.0.0/16"))], (spine, default)
    for node in (node1, node3):
        open_hosts(node)
    if crosses:  # the control: one VRF carries plane 2's hosts to plane 1's leaves
        wait_for_route(state, "p1-leaf01", "10.100.128.4/31")
    else:
        time.sleep(min(CONVERGE_S, 5))  # room for a leak to show, were there one
    crossed = ping(node1, "10.100.0.1", "10.100.128.5")  # out of node1's plane-1 port, to node3's plane-2 port
    assert (crossed.returncode == 0) is crosses, crossed.stdout + crossed.stderr
    other = [p for p in leaf_routes(state, "p1-leaf01") if IPv4Network(p).subnet_of(IPv4Network("10.100.128.0/17"))]
    assert bool(other) is crosses, other
