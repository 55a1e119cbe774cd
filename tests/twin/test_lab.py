"""The local twin on this machine: built from the lab definition, reachable over SSH with a verified host key,
converging with the rendered FRR configs, and leaving nothing behind. Needs root, FRR and OpenSSH (./dev installs them)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabric.errors import LabError
from fabric.model import ClusterSpec
from fabric.plan import ClusterPlan, plan_cluster
from fabric.render import render_configs
from fabric.twin.lab import LabState, is_alive, lab_down, lab_namespaces, lab_status, lab_up, load_state, namespace
from fabric.twin.procs import executable, start_ticks
from tests.apply.conftest import CLUSTER, CONVERGE_S, netns_list
from tests.conftest import ROOT

pytestmark = pytest.mark.twin  # builds a twin: the twin lane of ./dev test, one twin at a time (docs/testing.md)


def vtysh(state: LabState, switch: str, *args: str) -> str:
    s = state.switch(switch)
    cmd = ["ip", "netns", "exec", s.namespace, "vtysh", "--vty_socket", f"{s.run_dir}/run", "--config_dir", s.run_dir, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=True).stdout


def test_twin_is_reachable_over_ssh_with_a_verified_host_key_and_starts_unconfigured(twin: tuple[LabState, Path]) -> None:
    state, _ = twin
    leaf = state.switch("leaf01")

    def ssh(known_hosts: str) -> list[str]:
        return [
            "ssh", "-T", "-p", str(leaf.ssh_port), "-i", state.client_key, "-o", f"UserKnownHostsFile={known_hosts}",
            "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "root@127.0.0.1",
        ]  # fmt: skip

    result = subprocess.run(ssh(state.known_hosts), input="show running-config\nexit\n", capture_output=True, text=True, timeout=20, check=False)
    assert "hostname leaf01" in result.stdout, result.stderr
    assert "router bgp" not in result.stdout, "the twin starts with no fabric configuration"
    wrong = Path(state.directory) / "wrong_known_hosts"
    wrong.write_text(f"[127.0.0.1]:{leaf.ssh_port} ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHNvbWVvdGhlcmtleXRoYXRpc25vdG91cnMxMjM0\n", encoding="utf-8")
    refused = subprocess.run(ssh(str(wrong)), input="exit\n", capture_output=True, text=True, timeout=20, check=False)
    assert refused.returncode != 0
    assert "host key" in refused.stderr.lower()


def test_rendered_frr_configs_converge_with_ecmp_and_carry_jumbo_frames_across_racks(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    state, directory = twin
    files = render_configs(plan)
    for switch in state.switches:
        conf = directory / f"{switch.name}.conf"
        conf.write_text(files[f"switches/{switch.name}/frr.conf"], encoding="utf-8")
        vtysh(state, switch.name, "-f", str(conf))
    deadline = time.monotonic() + CONVERGE_S
    routes: dict[str, Any] = {}
    while time.monotonic() < deadline:
        routes = json.loads(vtysh(state, "leaf01", "-c", "show ip route 10.100.0.4/31 json"))
        hops = [h for r in routes.get("10.100.0.4/31", []) for h in r.get("nexthops", []) if h.get("active")]
        if len(hops) == 2:
            break
        time.sleep(0.5)
    else:
        pytest.fail(f"leaf01 has no 2-way ECMP to leaf02's host subnet after {CONVERGE_S} s: {routes}")
    node1, node3 = namespace(plan.name, "node1"), namespace(plan.name, "node3")
    ping = subprocess.run(
        ["ip", "netns", "exec", node1, "ping", "-c", "2", "-W", "2", "-M", "do", "-s", "8972", "10.100.0.5"],
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    assert ping.returncode == 0, ping.stdout + ping.stderr
    assert node3 in netns_list()


def test_down_removes_every_process_and_namespace(plan: ClusterPlan, state_dir: Path) -> None:
    directory = state_dir
    state = lab_up(plan, directory)
    assert lab_status(directory)["up"] is True
    assert all(is_alive(pid) for pid in state.pids)
    for process in state.processes:  # each daemon recorded by its identity: PID, start time, executable
        assert process.start == start_ticks(process.pid), process
        assert process.exe == executable(process.pid), process
    lab_down(plan.name, directory, lab_namespaces(plan))
    assert not [n for n in netns_list() if n.startswith(f"{CLUSTER}-")]
    assert not [pid for pid in state.pids if is_alive(pid)]
    assert lab_status(directory) == {"up": False}


def test_up_after_a_crash_cleans_up_first_and_never_kills_a_foreign_process(plan: ClusterPlan, state_dir: Path) -> None:
    directory = state_dir
    first = lab_up(plan, directory)
    (directory / "lab.json").unlink()  # the record is lost, as after a crash
    # not the twin's: it names a switch's config file (as the twin's zebra does), and a PID file names it
    bystander = subprocess.Popen(["sh", "-c", "sleep 60", "sh", "-f", str(directory / "frr" / "leaf01" / "frr.conf")])
    try:
        (directory / "stale.pid").write_text(str(bystander.pid), encoding="utf-8")
        (directory / "frr" / "leaf01" / "run" / "zebra.pid").write_text(str(bystander.pid), encoding="utf-8")
        second = lab_up(plan, directory)
        try:
            assert not [pid for pid in first.pids if is_alive(pid)], "the crashed twin's daemons were stopped"
            assert bystander.poll() is None, "a command line or a PID file must never kill a process the twin did not start"
            assert lab_status(directory)["up"] is True
            assert sorted(n for n in netns_list() if n.startswith(f"{CLUSTER}-")) == sorted(second.namespaces)
        finally:
            lab_down(plan.name, directory, lab_namespaces(plan))
    finally:
        bystander.kill()
        bystander.wait()


def test_a_state_directory_frr_cannot_reach_is_refused_before_anything_starts(plan: ClusterPlan, tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    with pytest.raises(LabError, match="not searchable by others"):
        lab_up(plan, private / "twin")
    assert not [n for n in netns_list() if n.startswith(f"{CLUSTER}-")]


def ours(prefix: str) -> list[str]:
    return sorted(n for n in netns_list() if n.startswith(prefix))


def test_a_corrupt_state_file_still_comes_down_cleanly_and_status_names_a_dead_daemon(plan: ClusterPlan, state_dir: Path) -> None:
    state = lab_up(plan, state_dir)
    try:
        bgpd = {p.name: p.pid for p in state.processes}["leaf01/bgpd"]
        subprocess.run(["kill", str(bgpd)], check=True)
        deadline = time.monotonic() + 5
        while is_alive(bgpd) and time.monotonic() < deadline:
            time.sleep(0.05)
        status = lab_status(state_dir)
        assert (status["up"], status["dead"]) == (False, ["leaf01/bgpd"])
        lab_json = state_dir / "lab.json"
        lab_json.write_text(lab_json.read_text(encoding="utf-8")[:100], encoding="utf-8")  # truncated, as by a full disk
        with pytest.raises(LabError, match="corrupt"):
            load_state(state_dir)
    finally:
        removed = lab_down(plan.name, state_dir, lab_namespaces(plan)).removed
    assert not [pid for pid in state.pids if is_alive(pid)], "every daemon found from its command line and stopped"
    assert not ours(f"{CLUSTER}-")
    assert len([r for r in removed if r.startswith("namespace")]) == len(state.namespaces)


def test_two_twins_named_x_and_x_b_do_not_touch_each_other(plan: ClusterPlan, state_dir: Path) -> None:
    data = yaml.safe_load((ROOT / "inventories" / "lab" / "cluster.yaml").read_text(encoding="utf-8"))
    data["name"] = f"{CLUSTER}-b"
    other = plan_cluster(ClusterSpec.model_validate(data))
    (state_dir / "x").mkdir()
    (state_dir / "x-b").mkdir()
    x = lab_up(plan, state_dir / "x")
    try:
        xb = lab_up(other, state_dir / "x-b")
        try:
            assert all(is_alive(pid) for pid in x.pids), "bringing up x-b left x alone"
            assert set(x.namespaces) <= set(netns_list())
            lab_down(plan.name, state_dir / "x", lab_namespaces(plan))
            assert all(is_alive(pid) for pid in xb.pids), "taking down x left x-b alone"
            assert ours(f"{CLUSTER}-b-") == sorted(xb.namespaces)
            assert lab_status(state_dir / "x-b")["up"] is True
        finally:
            lab_down(other.name, state_dir / "x-b", lab_namespaces(other))
    finally:
        lab_down(plan.name, state_dir / "x", lab_namespaces(plan))
    assert not ours(f"{CLUSTER}-")


def _netns_of(pid: int) -> str:
    return subprocess.run(["ip", "netns", "identify", str(pid)], capture_output=True, text=True, timeout=10, check=True).stdout.strip()


def test_status_names_a_dead_bgpd_and_sshd_and_up_restarts_exactly_those(plan: ClusterPlan, state_dir: Path) -> None:
    state = lab_up(plan, state_dir)
    after: dict[str, int] = {}
    try:
        before = {p.name: p.pid for p in state.processes}
        for name in ("leaf01/bgpd", "spine02/sshd"):
            subprocess.run(["kill", "-9", str(before[name])], check=True)
        deadline = time.monotonic() + 5
        while any(is_alive(before[n]) for n in ("leaf01/bgpd", "spine02/sshd")) and time.monotonic() < deadline:
            time.sleep(0.05)
        status = lab_status(state_dir)
        assert (status["up"], status["dead"]) == (False, ["leaf01/bgpd", "spine02/sshd"])
        assert "lab up" in str(status["heal"])

        healed = lab_up(plan, state_dir)  # an existing twin: heal it, never rebuild it
        after = {p.name: p.pid for p in healed.processes}
        assert sorted(n for n in after if after[n] != before[n]) == ["leaf01/bgpd", "spine02/sshd"], "only the dead were restarted"
        assert lab_status(state_dir)["up"] is True
        assert load_state(state_dir) == healed
        assert _netns_of(after["leaf01/bgpd"]) == namespace(plan.name, "leaf01"), "bgpd runs in leaf01's namespace again"
        assert _netns_of(after["spine02/sshd"]) == "", "the sshd listens on the host's loopback, as before"
        assert "bgpd" in vtysh(healed, "leaf01", "-c", "show daemons")
        spine02 = healed.switch("spine02")
        login = subprocess.run(
            ["ssh", "-T", "-p", str(spine02.ssh_port), "-i", healed.client_key, "-o", f"UserKnownHostsFile={healed.known_hosts}",
             "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "root@127.0.0.1"],
            input="show version\nexit\n", capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        assert "FRRouting" in login.stdout, login.stderr
    finally:
        lab_down(plan.name, state_dir, lab_namespaces(plan))
    assert not [pid for pid in after.values() if is_alive(pid)]
    assert not ours(f"{CLUSTER}-")
