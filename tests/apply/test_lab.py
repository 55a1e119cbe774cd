"""The local twin on this machine: built from the lab definition, reachable over SSH with a verified host key,
converging with the rendered FRR configs, and leaving nothing behind. Needs root, FRR and OpenSSH (./dev installs them)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from fabric.apply.lab import LabError, LabState, is_alive, lab_down, lab_status, lab_up, namespace
from fabric.plan import ClusterPlan
from fabric.render import render_configs
from tests.apply.conftest import CLUSTER, CONVERGE_S, netns_list


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
    lab_down(plan.name, directory)
    assert not [n for n in netns_list() if n.startswith(f"{CLUSTER}-")]
    assert not [pid for pid in state.pids if is_alive(pid)]
    assert lab_status(directory) == {"up": False}


def test_up_after_a_crash_cleans_up_first_and_never_kills_a_foreign_process(plan: ClusterPlan, state_dir: Path) -> None:
    directory = state_dir
    first = lab_up(plan, directory)
    (directory / "lab.json").unlink()  # the record is lost, as after a crash
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        (directory / "stale.pid").write_text(str(bystander.pid), encoding="utf-8")
        second = lab_up(plan, directory)
        try:
            assert not [pid for pid in first.pids if is_alive(pid)], "the crashed twin's daemons were stopped"
            assert bystander.poll() is None, "a PID file must never kill a process the twin did not start"
            assert lab_status(directory)["up"] is True
            assert sorted(n for n in netns_list() if n.startswith(f"{CLUSTER}-")) == sorted(second.namespaces)
        finally:
            lab_down(plan.name, directory)
    finally:
        bystander.kill()
        bystander.wait()


def test_a_state_directory_frr_cannot_reach_is_refused_before_anything_starts(plan: ClusterPlan, tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    with pytest.raises(LabError, match="not searchable by others"):
        lab_up(plan, private / "twin")
    assert not [n for n in netns_list() if n.startswith(f"{CLUSTER}-")]
