"""The FRR transaction over netmiko against the real twin: converge, idempotence, a rejected line, a broken change."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from fabric.apply.nos.frr import FrrAdapter
from fabric.apply.session import DeviceAccess, Session, connect
from fabric.apply.transaction import PostCheck, PushResult, bgp_no_regression, transaction
from fabric.plan import ClusterPlan
from fabric.render import render_configs
from fabric.twin.lab import LabState, namespace
from tests.apply.conftest import CONVERGE_S

pytestmark = pytest.mark.twin  # builds a twin: the twin lane of ./dev test, one twin at a time (docs/testing.md)

FRR = FrrAdapter()


def session(state: LabState, name: str) -> Session:
    s = state.switch(name)
    return connect(DeviceAccess(name, "127.0.0.1", s.ssh_port, "root", state.client_key, state.known_hosts), FRR.device_type, FRR.error_pattern)


def push_frr(conn: Session, candidate: str, *, commit: bool, post_check: PostCheck | None = None) -> PushResult:
    return transaction(FRR, conn, candidate, FRR.running(conn), change="t1", commit=commit, post_check=post_check)


def push_all(state: LabState, configs: dict[str, str], *, commit: bool = True) -> dict[str, PushResult]:
    results = {}
    for switch in state.switches:
        conn = session(state, switch.name)
        try:
            check = bgp_no_regression(FRR, FRR.bgp_sessions(conn), expected_peers=2, timeout_s=CONVERGE_S)
            results[switch.name] = push_frr(conn, configs[switch.name], commit=commit, post_check=check)
        finally:
            conn.disconnect()
    return results


def rendered(plan: ClusterPlan) -> dict[str, str]:
    files = render_configs(plan)
    return {s.name: files[f"switches/{s.name}/frr.conf"] for s in plan.fabric.switches} if plan.fabric else {}


def wait_for_ecmp(state: LabState, timeout_s: float = CONVERGE_S) -> int:
    conn = session(state, "leaf01")
    try:
        deadline, hops = time.monotonic() + timeout_s, 0
        while time.monotonic() < deadline:
            routes = json.loads(conn.show("show ip route 10.100.0.4/31 json") or "{}")
            hops = sum(1 for r in routes.get("10.100.0.4/31", []) for h in r.get("nexthops", []) if h.get("active"))
            if hops == 2:
                break
            time.sleep(0.5)
        return hops
    finally:
        conn.disconnect()


def jumbo_ping(plan: ClusterPlan) -> subprocess.CompletedProcess[str]:
    cmd = ["ip", "netns", "exec", namespace(plan.name, "node1"), "ping", "-c", "2", "-W", "2", "-M", "do", "-s", "8972", "10.100.0.5"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=False)


def test_dry_run_shows_the_diff_and_changes_nothing(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    state, _ = twin
    results = push_all(state, rendered(plan), commit=False)
    assert all(r.changed and r.diff and not r.committed for r in results.values())
    assert "router bgp 65101" in results["leaf01"].diff
    conn = session(state, "leaf01")
    try:
        assert "router bgp" not in conn.show("show running-config")
    finally:
        conn.disconnect()


def test_push_converges_the_fabric_and_a_second_push_changes_nothing(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    state, _ = twin
    first = push_all(state, rendered(plan))
    assert all(r.changed and r.committed and r.error is None for r in first.values()), {n: r.error for n, r in first.items()}
    assert wait_for_ecmp(state) == 2
    ping = jumbo_ping(plan)
    assert ping.returncode == 0, ping.stdout + ping.stderr
    second = push_all(state, rendered(plan))
    assert {n: (r.changed, r.diff, r.committed) for n, r in second.items()} == {n: (False, [], False) for n in first}


def test_a_rejected_line_aborts_and_leaves_the_running_config_as_it_was(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    state, _ = twin
    configs = rendered(plan)
    push_all(state, configs)
    conn = session(state, "leaf01")
    try:
        before = conn.show("show running-config")
        broken = (
            configs["leaf01"]
            .replace("  maximum-paths 64", "  maximum-pathz 32")
            .replace("network 10.100.0.2/31", "network 10.100.0.2/31\n  network 10.99.0.0/24")
        )
        result = push_frr(conn, broken, commit=True)
        after = conn.show("show running-config")
    finally:
        conn.disconnect()
    assert result.error is not None
    assert "maximum-pathz" in result.error
    assert (result.committed, result.rolled_back) == (False, True)
    assert after == before


def test_a_change_that_breaks_bgp_fails_the_post_check_and_is_rolled_back(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    state, _ = twin
    configs = rendered(plan)
    push_all(state, configs)
    assert wait_for_ecmp(state) == 2
    conn = session(state, "spine01")
    try:
        check = bgp_no_regression(FRR, FRR.bgp_sessions(conn), expected_peers=2, timeout_s=8)
        wrong_asn = configs["spine01"].replace("router bgp 65100", "router bgp 65101")  # leaf01's own AS: that session cannot come up
        result = push_frr(conn, wrong_asn, commit=True, post_check=check)
    finally:
        conn.disconnect()
    assert result.error is not None
    assert result.error.startswith("post-check failed")
    assert result.rolled_back
    assert wait_for_ecmp(state) == 2, "connectivity is restored after the rollback"
    assert jumbo_ping(plan).returncode == 0


@pytest.mark.parametrize("known_hosts_line", ["", "[127.0.0.1]:{port} ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHNvbWVvdGhlcmtleXRoYXRpc25vdG91cnMxMjM0"])
def test_unknown_or_wrong_host_key_is_refused(twin: tuple[LabState, Path], known_hosts_line: str) -> None:
    state, directory = twin
    leaf = state.switch("leaf01")
    known = directory / "other_known_hosts"
    known.write_text(known_hosts_line.format(port=leaf.ssh_port) + "\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"(?i)host key|not found in known_hosts|BadHostKey"):
        connect(DeviceAccess("leaf01", "127.0.0.1", leaf.ssh_port, "root", state.client_key, str(known)), FRR.device_type, FRR.error_pattern)
