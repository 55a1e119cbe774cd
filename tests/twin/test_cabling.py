"""verify --cabling on the twin, for real: lldpd runs in every compute switch's and node's namespace, the twin is
miswired on purpose (five faults: rails swapped on a node, a cable in another port of its leaf, a cable gone, a leaf's
uplinks swapped, a node on the wrong rail's leaf) and the diagnosis names each exactly; the correct twin reports
nothing; lab down stops exactly the lldpd it started, with or without its record. Needs root, FRR, OpenSSH, lldpd."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from fabric.plan import ClusterPlan
from fabric.twin.lab import LabState, lab_down, lab_namespaces, lab_up, namespace
from fabric.twin.lldp import LLDPD
from fabric.twin.procs import is_current, start_ticks
from fabric.twin.state import claim, load_state
from tests.apply.cabling.conftest import FAULTS, rails_definition, rails_plan
from tests.conftest import ROOT

pytestmark = pytest.mark.twin  # builds a twin: the twin lane of ./dev test, one twin at a time (docs/testing.md)

CLUSTER = f"gfc{os.getpid()}"  # namespaces <cluster>-<device>: this run's own
SETTLE_S = 30.0  # lldpd sends every second (tx-interval 1); a neighbour of a deleted port goes with the port


@pytest.fixture(scope="module")
def rails() -> ClusterPlan:
    assert os.geteuid() == 0, "the twin needs root"
    return rails_plan(CLUSTER)


@pytest.fixture(scope="module")
def twin(rails: ClusterPlan) -> Iterator[tuple[LabState, Path]]:
    directory = ROOT / ".gpufabric" / "tests" / f"cabling-{os.getpid()}"
    directory.mkdir(parents=True, exist_ok=True)
    (directory.parent / "defs").mkdir(exist_ok=True)
    try:
        state = lab_up(rails, directory)
        yield state, directory
    finally:
        lab_down(rails.name, directory, lab_namespaces(rails))
        shutil.rmtree(directory, ignore_errors=True)


def verify(directory: Path) -> tuple[int, dict[str, object]]:
    definition = directory.parent / "defs" / f"{CLUSTER}.yaml"
    definition.write_text(yaml.safe_dump(rails_definition(CLUSTER)), encoding="utf-8")
    argv = [sys.executable, "-m", "fabric", "verify", str(definition), "--cabling", "--state", str(directory), "--json"]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, cwd=ROOT)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def settle(directory: Path, done: object) -> tuple[int, dict[str, object]]:
    """verify --cabling until ``done(data)`` or ``SETTLE_S`` has passed; the last answer."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        code, data = verify(directory)
        if done(data) or time.monotonic() > deadline:  # type: ignore[operator]
            return code, data
        time.sleep(1)


def said(data: dict[str, object]) -> list[str]:
    return sorted(f"{f['kind']}: {f['problem']}" for f in data["faults"])  # type: ignore[attr-defined, index]


def ip(cluster: str, device: str, *args: str) -> None:
    subprocess.run(["ip", "-n", namespace(cluster, device), *args], check=True, capture_output=True, timeout=30)


def rewire(cluster: str, a: tuple[str, str], b: tuple[str, str]) -> None:
    """A new cable: a veth from a's port to b's, both up."""
    ip(cluster, a[0], "link", "add", a[1], "type", "veth", "peer", "name", b[1], "netns", namespace(cluster, b[0]))
    ip(cluster, a[0], "link", "set", a[1], "up")
    ip(cluster, b[0], "link", "set", b[1], "up")


def unplug(cluster: str, device: str, port: str) -> None:
    ip(cluster, device, "link", "del", port)  # a veth goes with its peer: the cable is gone


def test_the_twin_reads_its_cabling_back_and_names_five_planted_faults(twin: tuple[LabState, Path], rails: ClusterPlan) -> None:
    state, directory = twin
    lldpd = [p for p in state.processes if p.name.endswith("/lldpd")]
    assert len(lldpd) == 10  # 2 spines, 4 leaves, 4 nodes
    assert all(is_current(p) for p in lldpd)
    started = time.monotonic()
    code, data = settle(directory, lambda d: d["matched"] == 16)
    print(f"correct twin: all 16 cables seen in {time.monotonic() - started:.1f} s")
    assert code == 0
    assert data["faults"] == []
    assert (data["planned"], data["checked"], data["matched"]) == (16, 16, 16)

    c = rails.name
    for device, port in (("leaf-su01-r1", "swp1"), ("leaf-su01-r2", "swp1")):
        unplug(c, device, port)  # node1's rail-1 and rail-2 cables ...
    rewire(c, ("leaf-su01-r1", "swp1"), ("node1", "eth3"))  # ... back in each other's NIC
    rewire(c, ("leaf-su01-r2", "swp1"), ("node1", "eth1"))
    unplug(c, "leaf-su01-r1", "swp2")  # node2's rail-1 cable into an empty port of the same leaf
    rewire(c, ("leaf-su01-r1", "swp9"), ("node2", "eth1"))
    unplug(c, "leaf-su02-r2", "swp2")  # node4's rail-2 cable gone
    for port in ("swp3", "swp4"):
        unplug(c, "leaf-su02-r1", port)  # leaf-su02-r1's uplinks to spine01 and spine02 exchanged
    rewire(c, ("leaf-su02-r1", "swp3"), ("spine02", "swp3"))
    rewire(c, ("leaf-su02-r1", "swp4"), ("spine01", "swp3"))
    unplug(c, "leaf-su02-r1", "swp1")  # node3's rail-1 cable on the rail-2 leaf
    rewire(c, ("leaf-su02-r2", "swp9"), ("node3", "eth1"))

    started = time.monotonic()
    code, data = settle(directory, lambda d: said(d) == sorted(FAULTS))
    print(f"miswired twin: five faults named in {time.monotonic() - started:.1f} s")
    assert code == 1
    assert said(data) == sorted(FAULTS)


def test_lab_down_stops_exactly_its_lldpd_even_without_its_record(rails: ClusterPlan) -> None:
    directory = ROOT / ".gpufabric" / "tests" / f"cabling-down-{os.getpid()}"
    directory.mkdir(parents=True, exist_ok=True)
    try:
        state = lab_up(rails, directory)
        lldpd = [p for p in state.processes if p.name.endswith("/lldpd")]
        assert lldpd
        (directory / "lab.json").unlink()  # the record is lost
        report = lab_down(rails.name, directory, lab_namespaces(rails))
        assert not [p for p in lldpd if is_current(p)], report
        assert sum("lldpd" in line for line in report.removed) >= len(lldpd)
    finally:
        lab_down(rails.name, directory, lab_namespaces(rails))
        shutil.rmtree(directory, ignore_errors=True)


def test_a_record_naming_an_lldpd_outside_the_twin_leaves_it_alone(tmp_path: Path) -> None:
    """A record (with the marker's own token) that names, with its exact identity, an lldpd running outside the twin's
    namespaces (the host's own, say): lab down leaves it running and says why."""
    directory = tmp_path / "twin"
    marker = claim(directory, list)
    sock = tmp_path / "host.sock"
    host = subprocess.Popen([str(LLDPD), "-d", "-u", str(sock), "-I", "none0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        record = {
            "cluster": "fz", "directory": str(directory), "namespaces": ["fz-node1"], "switches": [], "client_key": "", "known_hosts": "",
            "processes": [{"name": "node1/lldpd", "pid": host.pid, "start": start_ticks(host.pid) or 0, "exe": os.path.realpath(LLDPD)}],
            "station": "", "l2_switches": [], "token": marker.token, "boot": marker.boot,
        }  # fmt: skip
        (directory / "lab.json").write_text(json.dumps(record), encoding="utf-8")
        assert load_state(directory) is not None  # a record the twin could have written
        down = lab_down("fz", directory)
        assert host.poll() is None, "the host's lldpd was stopped"
        assert [line for line in down.left if f"process {host.pid} (node1/lldpd) left alone" in line], down.left
    finally:
        host.terminate()
        host.wait(timeout=10)
