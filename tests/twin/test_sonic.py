"""A SONiC compute fabric on the twin: its rendered frr.conf runs in FRR (BGP, ECMP, push, rollback, drain on the real
routing config); the NOSes without an FRR the twin can run are refused with what to rehearse instead."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from fabric.apply.nos import ADAPTERS, Adapter
from fabric.apply.push import candidates
from fabric.apply.rollout import RolloutOptions, push_fabric
from fabric.apply.session import DeviceAccess, Session
from fabric.errors import DrainError, LabError
from fabric.model import ClusterSpec, load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from fabric.twin.access import adapters_for
from fabric.twin.lab import lab_down, lab_namespaces
from fabric.twin.procs import is_current
from fabric.twin.rehearse import SCOPE, config_db_addresses, refuse_unrehearsable
from fabric.twin.state import load_state
from tests.conftest import ROOT

pytestmark = pytest.mark.twin  # builds a twin: the twin lane of ./dev test, one twin at a time (docs/testing.md)

SONIC = ROOT / "tests" / "data" / "sonic-twin" / "cluster.yaml"
CLUSTER = f"gfs{os.getpid()}"  # namespaces <cluster>-<device>: this run's own, never a developer's twin
FAST = ("--post-check-hold", "1")
COMPUTE = ("--plane", "compute")
SWITCHES = ["spine01", "spine02", "leaf01", "leaf02"]


def fabric(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "400"}
    return subprocess.run([sys.executable, "-m", "fabric", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False, env=env)


def sonic_data(**underlay: object) -> dict[str, object]:
    data = yaml.safe_load(SONIC.read_text(encoding="utf-8"))
    data["name"] = CLUSTER
    data["fabric"]["underlay"].update(underlay)
    return data


def write(data: dict[str, object], path: Path) -> Path:
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def with_compute(nos: str, model: str) -> ClusterPlan:
    data = sonic_data()
    data["fabric"]["leaf"] = data["fabric"]["spine"] = {"model": model, "nos": nos}  # type: ignore[index]
    return plan_cluster(ClusterSpec.model_validate(data))


def vtysh(directory: Path, switch: str, command: str) -> str:
    run = directory / "frr" / switch / "run"
    argv = ["ip", "netns", "exec", f"{CLUSTER}-{switch}", "vtysh", "--vty_socket", str(run), "-c", command]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True).stdout


@pytest.fixture
def sonic_twin(state_dir: Path) -> Iterator[tuple[Path, Path]]:
    """The SONiC definition under this run's cluster name, and a state directory; the twin is torn down by its record."""
    plan = plan_cluster(ClusterSpec.model_validate(sonic_data()))
    definition = write(sonic_data(), state_dir.parent / f"{state_dir.name}-sonic.yaml")
    try:
        yield definition, state_dir
    finally:
        lab_down(CLUSTER, state_dir, lab_namespaces(plan))
        definition.unlink(missing_ok=True)


def test_config_db_addresses_are_the_interface_and_loopback_keys() -> None:
    files = candidates(plan_cluster(ClusterSpec.model_validate(sonic_data())))
    document = json.loads(files["leaf01"])
    assert set(document) == {"config_db", "frr"}, "off the twin a SONiC switch's candidate is config_db + frr.conf"
    addresses = config_db_addresses(json.dumps(document["config_db"]))
    assert ("Ethernet0", "10.100.0.0/31") in addresses
    assert ("Loopback0", "10.255.1.1/32") in addresses
    assert all("|" not in name for name, _ in addresses)


def test_adapters_for_a_real_fabric_is_every_nos_its_own(tmp_path: Path) -> None:
    assert adapters_for(tmp_path) is ADAPTERS
    assert adapters_for(tmp_path)["sonic"].nos == "sonic"


def test_drain_is_decided_by_the_adapter_that_pushes() -> None:
    """A real SONiC fabric is still refused ``--drain`` (GCU's route-map paths are unchecked); on the twin the FRR
    adapter pushes it, so the drain policy applies and the rollout goes on to the switches."""
    plan = plan_cluster(ClusterSpec.model_validate(sonic_data()))
    rehearsal = {**ADAPTERS, "sonic": ADAPTERS["frr"]}
    wanted = candidates(plan, ("compute",), rehearsal)
    access = {name: DeviceAccess(name, "192.0.2.1", 22, "admin", None, "/dev/null") for name in wanted}
    reached: list[str] = []

    def unreachable(device: DeviceAccess, adapter: Adapter) -> Session:
        reached.append(f"{device.name}:{adapter.nos}")
        raise ConnectionError(device.name)

    options = RolloutOptions(commit=True, drain=True, planes=("compute",))
    with pytest.raises(DrainError, match=r"leaf01 \(sonic\)"):
        push_fabric(plan, wanted, access, options, lambda *_: None, change="c", connector=unreachable)
    assert not reached, "refused before any switch is touched"
    options = RolloutOptions(commit=True, drain=True, planes=("compute",), adapters=rehearsal)
    results = push_fabric(plan, wanted, access, options, lambda *_: None, change="c", connector=unreachable)
    assert all(r.error for r in results)
    assert sorted(reached) == sorted(f"{name}:frr" for name in wanted), "each switch through the FRR adapter"


@pytest.mark.parametrize(
    ("nos", "model", "why"),
    [
        ("eos", "7060x5-64s", "Arista's own agents"),
        ("nxos", "n9k-c9332d-gx2b", "Cisco's own BGP"),
        ("cumulus", "sn4600c", "NVUE"),
    ],
)
def test_a_fabric_without_an_frr_to_run_is_refused_with_what_to_rehearse_instead(nos: str, model: str, why: str) -> None:
    with pytest.raises(LabError) as refused:
        refuse_unrehearsable(with_compute(nos, model))
    text = str(refused.value)
    assert f"not {nos} (" in text
    assert why in text
    assert "'render', 'lint'" in text
    assert "'diff --offline'" in text
    assert "nos: frr" in text, "the push itself on a copy with the lab model"


def test_an_infiniband_fabric_is_refused_without_an_frr_copy_to_push_on() -> None:
    with pytest.raises(LabError) as refused:
        refuse_unrehearsable(plan_cluster(load_cluster(ROOT / "inventories" / "onprem-ib" / "cluster.yaml")))
    text = str(refused.value)
    assert "not mlnx-os" in text
    assert "subnet manager" in text
    assert "'diff --offline'" in text
    assert "nos: frr" not in text, "an InfiniBand fabric has no Ethernet FRR copy"


def test_lab_up_of_an_eos_fabric_exits_with_the_refusal(state_dir: Path) -> None:
    data = sonic_data()
    data["fabric"]["leaf"] = data["fabric"]["spine"] = {"model": "7060x5-64s", "nos": "eos"}  # type: ignore[index]
    definition = write(data, state_dir.parent / f"{state_dir.name}-eos.yaml")
    try:
        up = fabric("lab", "up", str(definition), "--state", str(state_dir), timeout=60)
    finally:
        definition.unlink(missing_ok=True)
    assert up.returncode == 1, up.stdout + up.stderr
    refusal = " ".join(up.stderr.split())
    assert "not eos" in refusal, refusal
    assert "diff --offline" in refusal, refusal
    assert "nos: frr" in refusal, refusal
    assert not [ns for ns in _netns() if ns.startswith(f"{CLUSTER}-")], "nothing built"


def test_sonic_twin_up_verify_push_rollback_drain_down(sonic_twin: tuple[Path, Path]) -> None:
    definition, state = sonic_twin
    up = fabric("lab", "up", str(definition), "--state", str(state), timeout=120)
    assert up.returncode == 0, up.stdout + up.stderr
    assert SCOPE in " ".join(up.stdout.split()), "lab up says what is rehearsed and what is not"
    lab = load_state(state)
    assert lab is not None
    assert [s.rehearses for s in lab.switches] == ["sonic"] * 4
    links = subprocess.run(["ip", "-n", f"{CLUSTER}-leaf01", "-o", "addr", "show"], capture_output=True, text=True, check=True).stdout
    assert re.search(r"Ethernet0\s+inet 10\.100\.0\.0/31", links), "SONiC's port name, config_db's address"
    assert re.search(r"\blo\s+inet 10\.255\.1\.1/32", links)

    verified = fabric("verify", str(definition), "--state", str(state), *COMPUTE, "--wait", "90", "--traffic")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "4/4 switches in sync" in verified.stdout
    assert "1/1 leaf pairs pass" in verified.stdout
    assert "router bgp 65101" in vtysh(state, "leaf01", "show running-config"), "booted from its own rendered frr.conf"
    routes = json.loads(vtysh(state, "leaf01", "show ip route 10.255.1.2/32 json"))
    assert len(routes["10.255.1.2/32"][0]["nexthops"]) == 2, "ECMP over both spines, as planned"

    bgpd = next(p for p in lab.processes if p.name == "leaf01/bgpd")
    os.kill(bgpd.pid, signal.SIGKILL)
    healed = fabric("lab", "up", str(definition), "--state", str(state), timeout=120)
    assert healed.returncode == 0, healed.stdout + healed.stderr
    assert "restarted leaf01/bgpd" in healed.stdout
    assert "router bgp 65101" in vtysh(state, "leaf01", "show running-config"), "frr.conf as booted (never saved): vtysh -b gives bgpd its lines"
    assert fabric("verify", str(definition), "--state", str(state), *COMPUTE, "--wait", "90").returncode == 0

    clean = fabric("diff", str(definition), "--state", str(state), *COMPUTE)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    baseline = fabric("push", str(definition), "--state", str(state), *COMPUTE, "--commit", "--json", *FAST)
    assert baseline.returncode == 0, baseline.stderr
    before = json.loads(baseline.stdout)["change"]

    edited = write(sonic_data(max_paths=32), definition)  # a routing change: ECMP width
    pending = fabric("diff", str(edited), "--state", str(state), *COMPUTE)
    assert pending.returncode == 3, pending.stdout + pending.stderr
    assert "maximum-paths 32" in pending.stdout
    assert '"op"' not in pending.stdout, "the FRR path: vtysh lines, no GCU patch"
    assert "vtysh: " not in pending.stdout
    pushed = fabric("push", str(edited), "--state", str(state), *COMPUTE, "--commit", "--json", *FAST)
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    assert [n for n, d in json.loads(pushed.stdout)["devices"].items() if d["committed"]] == SWITCHES
    assert "maximum-paths 32" in vtysh(state, "leaf01", "show running-config")
    offline = fabric("diff", str(edited), "--state", str(state), *COMPUTE, "--offline")
    assert offline.returncode == 0, offline.stdout + offline.stderr  # the record holds frr.conf text: the FRR adapter reads it
    after = fabric("verify", str(edited), "--state", str(state), *COMPUTE, "--wait", "60")
    assert after.returncode == 0, after.stdout + after.stderr

    back = fabric("rollback", str(edited), "--to", before, "--state", str(state), *COMPUTE, "--commit", *FAST)
    assert back.returncode == 0, back.stdout + back.stderr
    assert "maximum-paths 64" in vtysh(state, "leaf01", "show running-config")
    original = write(sonic_data(), definition)
    assert fabric("verify", str(original), "--state", str(state), *COMPUTE, "--wait", "60").returncode == 0

    drained = fabric("push", str(write(sonic_data(max_paths=32), definition)), "--state", str(state), *COMPUTE, "--commit", "--drain", *FAST)
    assert drained.returncode == 0, drained.stdout + drained.stderr
    assert "drain" in drained.stderr, "each switch drained before its change"
    assert "maximum-paths 32" in vtysh(state, "spine02", "show running-config")

    healed_state = load_state(state)
    assert healed_state is not None
    processes = healed_state.processes
    down = fabric("lab", "down", str(definition), "--state", str(state), timeout=60)
    assert down.returncode == 0, down.stdout + down.stderr
    assert not [ns for ns in _netns() if ns.startswith(f"{CLUSTER}-")]
    assert not [p.name for p in processes if is_current(p)]


def _netns() -> list[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in listed.splitlines() if line.strip()]
