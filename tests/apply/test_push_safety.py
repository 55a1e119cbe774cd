"""Fault tests on the twin: what a push does not own survives, broken or hung changes are rolled back and named, a
push that loses the way back in is rolled back, and a record that cannot be written touches nothing."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from fabric.apply.nos.frr import FrrAdapter
from fabric.apply.push import candidates, push_and_record
from fabric.apply.record import ChangeRecord
from fabric.apply.rollout import RolloutOptions, open_session, push_fabric
from fabric.apply.transaction import PushResult
from fabric.plan import ClusterPlan, plan_cluster
from fabric.twin.access import twin_access
from fabric.twin.lab import LabState
from tests.apply.test_changes import definition, run_json
from tests.apply.test_push_cli import fabric

pytestmark = pytest.mark.twin  # builds a twin: the twin lane of ./dev test, one twin at a time (docs/testing.md)

FRR = FrrAdapter()
QUIET = lambda *_: None  # noqa: E731 - a progress sink


FAST = ("--post-check-hold", "1")  # the hold time has its own test (the blackhole); here it only costs time


def show(lab: LabState, name: str, command: str) -> str:
    session = open_session(twin_access(lab)[name], FRR)
    try:
        return session.show(command)
    finally:
        session.disconnect()


def routes(lab: LabState, name: str) -> dict[str, int]:
    session = open_session(twin_access(lab)[name], FRR)
    try:
        return FRR.routes(session)
    finally:
        session.disconnect()


def push_one(plan: ClusterPlan, lab: LabState, state: Path, name: str, candidate: str, **options: object) -> PushResult:
    """Push one switch's candidate (the others get their rendered one, unchanged) through the real rollout."""
    wanted = {**candidates(plan), name: candidate}
    record = ChangeRecord(state, f"t{time.monotonic_ns()}")
    record.begin(sorted(state.glob("cluster-*.yaml"))[0], commit=True, rollback_to=None)
    opts = RolloutOptions(commit=True, **{"post_check_s": 10.0, **options})  # pyright: ignore[reportArgumentType]
    results = push_fabric(plan, wanted, twin_access(lab), opts, QUIET, change=record.change, record=record)
    return next(r for r in results if r.device == name)


def test_unowned_lines_survive_a_blackhole_fails_the_post_check_and_a_lockout_is_rolled_back(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    lab, state = twin
    base = definition(state, plan.name)
    _, first = push_and_record(
        plan, base, state, twin_access(lab), RolloutOptions(commit=True, post_check_s=30, post_check_hold_s=1.0), progress=QUIET
    )
    assert all(r.committed for r in first), [r.error for r in first]
    deadline = time.monotonic() + 30
    while routes(lab, "spine01").get("10.100.0.4/31", 0) < 1 and time.monotonic() < deadline:
        time.sleep(0.5)

    # an operator's static route and prefix list: not gpufabric's, so a push that changes leaf01 keeps them
    session = open_session(twin_access(lab)["leaf01"], FRR)
    try:
        session.configure(["ip route 10.99.0.0/24 Null0", "ip prefix-list HAND seq 5 permit 10.99.0.0/24"])
        session.exit_config_mode()
    finally:
        session.disconnect()
    rendered = candidates(plan)
    changed = push_one(plan, lab, state, "leaf01", rendered["leaf01"].replace("maximum-paths 64", "maximum-paths 32"))
    assert changed.committed, changed.error
    assert [line.strip() for line in changed.diff if line.strip() != "exit"] == [
        "router bgp 65101",
        "address-family ipv4 unicast",
        "maximum-paths 32",  # a single-valued setting: FRR replaces it
    ]
    running = show(lab, "leaf01", "show running-config")
    assert "maximum-paths 32" in running
    assert "maximum-paths 64" not in running
    assert "ip route 10.99.0.0/24 Null0" in running
    assert "ip prefix-list HAND seq 5 permit 10.99.0.0/24" in running

    # a prefix-list deny that blackholes leaf02's rack on spine01: BGP stays up, the routes do not
    blackhole = (
        rendered["spine01"]
        .replace(
            "route-map FABRIC-OUT permit 10\n",
            "ip prefix-list BLACKHOLE seq 5 permit 10.100.0.4/31\n!\nroute-map FABRIC-IN deny 5\n match ip address prefix-list BLACKHOLE\n"
            "exit\n!\nroute-map FABRIC-IN permit 10\nexit\n!\nroute-map FABRIC-OUT permit 10\n",
        )
        .replace(
            "  neighbor FABRIC route-map FABRIC-OUT out\n", "  neighbor FABRIC route-map FABRIC-OUT out\n  neighbor FABRIC route-map FABRIC-IN in\n"
        )
    )
    broken = push_one(plan, lab, state, "spine01", blackhole, post_check_s=15.0)
    assert broken.error is not None
    assert "post-check failed: route 10.100.0.4/31: 0 next hops, 1 before the change" in broken.error
    assert (broken.committed, broken.rolled_back) == (False, True)
    assert "FABRIC-IN" not in show(lab, "spine01", "show running-config")

    # the change would lock us out: the twin enforces each switch's management ACL at login (fabric/twin/login_gate.py), so the
    # fresh login before confirm is refused for real; the change is reverted, never confirmed, and leaf02 stays reachable
    excluding = rendered["leaf02"].replace("seq 10 permit 10.103.0.0/16", "seq 10 permit 10.199.0.0/16")
    record = ChangeRecord(state, "lockout")
    record.begin(base, commit=True, rollback_to=None)
    started = time.monotonic()
    results = push_fabric(plan, {**rendered, "leaf02": excluding}, twin_access(lab), RolloutOptions(commit=True, post_check_hold_s=1.0), QUIET,
                          change="lockout", record=record)  # fmt: skip
    leaf02 = next(r for r in results if r.device == "leaf02")
    assert leaf02.error is not None
    assert "a fresh SSH login" in leaf02.error
    assert "lock us out" in leaf02.error
    assert (leaf02.committed, leaf02.rolled_back) == (False, True)
    assert time.monotonic() - started < 120
    running = show(lab, "leaf02", "show running-config")  # a fresh login: reachable again
    assert "10.199.0.0/16" not in running
    assert "access-list MGMT-SSH seq 10 permit 10.103.0.0/16" in running


def test_the_twin_refuses_a_login_its_management_acl_excludes(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    lab, _ = twin
    session = open_session(twin_access(lab)["leaf01"], FRR)
    try:
        session.configure(["access-list GF-TEST seq 10 permit 10.199.0.0/16", "line vty", " access-class GF-TEST", "exit"])
        session.exit_config_mode()
        refused = _ssh(lab, "leaf01", "show version")
        assert refused.returncode != 0
        assert "Permission denied" in refused.stderr
        log = (Path(lab.directory) / "ssh" / "refused.log").read_text(encoding="utf-8")
        assert (
            f"{lab.switch('leaf01').namespace}: login refused by the management ACL: access-class GF-TEST (line vty): no entry permits 10.103.0.1"
            in log
        )
        session.configure(["access-list GF-TEST seq 5 permit host 10.103.0.1"])
        session.exit_config_mode()
        assert "FRRouting" in _ssh(lab, "leaf01", "show version").stdout
    finally:
        session.configure(["line vty", " no access-class GF-TEST", "exit", "no access-list GF-TEST"])
        session.disconnect()
    assert "FRRouting" in _ssh(lab, "leaf01", "show version").stdout


def _ssh(lab: LabState, name: str, command: str) -> subprocess.CompletedProcess[str]:
    argv = [
        "ssh", "-T", "-p", str(lab.switch(name).ssh_port), "-i", lab.client_key, "-o", f"UserKnownHostsFile={lab.known_hosts}",
        "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "root@127.0.0.1",
    ]  # fmt: skip
    return subprocess.run(argv, input=f"{command}\nexit\n", capture_output=True, text=True, timeout=30, check=False)


def test_a_hung_device_hits_its_deadline_is_rolled_back_and_named(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    lab, state = twin
    bgpd = {p.name: p.pid for p in lab.processes}["leaf01/bgpd"]
    resumed = threading.Event()

    def progress(device: str, step: str) -> None:
        if device == "leaf01" and step == "applying" and not resumed.is_set():
            os.kill(bgpd, signal.SIGSTOP)  # bgpd hangs: every vtysh command that needs it waits
            timer = threading.Timer(15.0, lambda: (os.kill(bgpd, signal.SIGCONT), resumed.set()))
            timer.daemon = True
            timer.start()

    started = time.monotonic()
    try:
        options = RolloutOptions(commit=True, deadline_s=12.0, post_check_hold_s=1.0)
        _, results = push_and_record(plan, definition(state, plan.name), state, twin_access(lab), options, progress=progress)
    finally:
        os.kill(bgpd, signal.SIGCONT)
    elapsed = time.monotonic() - started
    by_name = {r.device: r for r in results}
    leaf = by_name["leaf01"]
    assert leaf.error is not None
    assert "deadline of 12 s reached" in leaf.error
    assert leaf.rolled_back, leaf.error
    assert by_name["spine01"].committed
    assert [by_name[n].reached for n in ("spine02", "leaf02")] == [False, False]
    assert elapsed < 90, f"the push took {elapsed:.0f} s"
    assert "router bgp" not in show(lab, "leaf01", "show running-config")


def test_an_unwritable_or_full_record_touches_nothing(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    lab, state = twin
    cluster = definition(state, plan.name)
    (state / "changes").write_text("not a directory", encoding="utf-8")
    refused = fabric("push", str(cluster), "--state", str(state), "--commit", *FAST)
    assert refused.returncode == 1
    assert "cannot create the change record" in refused.stderr
    assert "Traceback" not in refused.stderr
    (state / "changes").unlink()
    (state / "audit.jsonl").symlink_to("/dev/full")  # a planted link: the record never writes through one
    linked = fabric("push", str(cluster), "--state", str(state), "--commit", *FAST)
    assert linked.returncode == 1
    assert "symbolic link" in linked.stderr
    (state / "audit.jsonl").unlink()
    changes = state / "changes"  # a full disk: a 64 KiB tmpfs under the record, filled to the last byte
    changes.mkdir(mode=0o700, exist_ok=True)  # the refused push may have begun it
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "gft-full", str(changes)], check=True)
    try:
        with (changes / "filler").open("wb") as filler, contextlib.suppress(OSError):
            filler.write(b"\0" * (1 << 20))
        full = fabric("push", str(cluster), "--state", str(state), "--commit", *FAST)
    finally:
        subprocess.run(["umount", str(changes)], check=True)
    assert full.returncode == 1
    assert "No space left on device" in full.stderr
    for switch in lab.switches:
        assert "router bgp" not in show(lab, switch.name, "show running-config"), f"{switch.name} was touched"


def _push_until(args: list[str], device: str, sig: int) -> tuple[int, str]:
    """Run ``python -m fabric push ...``; send ``sig`` once ``device`` is applying; its exit code and stderr."""
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.Popen([sys.executable, "-m", "fabric", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    lines: list[str] = []
    for line in proc.stderr:
        lines.append(line)
        if f" {device} " in line and line.rstrip().endswith("applying"):
            proc.send_signal(sig)
            break
    rest = proc.communicate(timeout=120)[1]
    return proc.returncode, "".join(lines) + rest


def test_sigint_then_sigkill_mid_rollout_leave_a_complete_record_and_rollback_restores(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    _, state = twin
    base = definition(state, plan.name)
    code, first = run_json("push", str(base), "--state", str(state), "--commit", *FAST)
    assert code == 0, first
    renumbered = definition(state, plan.name, underlay={"spine_asn": 65200})
    args = ["push", str(renumbered), "--state", str(state), "--commit", "--parallel", "1", "--plane", "compute", *FAST]

    code, stderr = _push_until(args, "spine01", signal.SIGINT)
    assert code == 130, stderr
    assert "Traceback" not in stderr
    audit = [json.loads(line) for line in (state / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [a["event"] for a in audit[-2:]] == ["started", "interrupted"]
    assert audit[-1]["devices"]["spine01"]["outcome"] == "committed", "the device in flight finished"
    assert {audit[-1]["devices"][n]["outcome"] for n in ("leaf01", "spine02", "leaf02")} == {"not reached"}
    interrupted = state / "changes" / audit[-1]["change"]
    assert sorted(p.name for p in interrupted.glob("*.backup")) == ["leaf01.backup", "leaf02.backup", "spine01.backup", "spine02.backup"]
    assert oct(interrupted.stat().st_mode & 0o777) == "0o700"
    assert oct((interrupted / "spine01.backup").stat().st_mode & 0o777) == "0o600"

    code, stderr = _push_until(args, "spine02", signal.SIGKILL)
    assert code == -signal.SIGKILL
    killed = sorted(p for p in (state / "changes").iterdir() if p.is_dir())[-1]
    outcomes = [json.loads(line) for line in (killed / "outcomes.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(o["device"], o["outcome"]) for o in outcomes] == [("spine01", "unchanged"), ("leaf01", "unchanged")]
    assert len(list(killed.glob("*.backup"))) == 4, "every backup was on disk before the first device was touched"
    assert json.loads((state / "audit.jsonl").read_text(encoding="utf-8").splitlines()[-1])["event"] == "started"

    code, rolled = run_json("rollback", str(base), "--state", str(state), "--to", first["change"], "--commit", *FAST)
    assert code == 0, rolled
    assert "spine01" in {n for n, d in rolled["devices"].items() if d["committed"]}
    code, verdict = run_json("verify", str(base), "--state", str(state), "--wait", "30")
    assert code == 0, verdict


def test_adding_a_leaf_and_removing_it_again_both_push_and_roll_back(plan: ClusterPlan, state_dir: Path) -> None:
    from fabric.apply.checks.verify import verify_fabric
    from fabric.model import ClusterSpec
    from fabric.twin.lab import lab_down, lab_namespaces, lab_up

    four = definition(state_dir, plan.name)
    six = definition(state_dir, plan.name, nodes=6)
    small, big = plan, plan_cluster(ClusterSpec.model_validate(yaml.safe_load(six.read_text(encoding="utf-8"))))
    twin_dir = state_dir / "twin"  # the twin takes only a new or empty directory; the definitions sit beside it
    lab = lab_up(big, twin_dir)  # leaf03 is cabled but not in the first definition
    try:
        access = twin_access(lab)
        options = RolloutOptions(commit=True, post_check_s=30, post_check_hold_s=1.0)
        _, before = push_and_record(small, four, state_dir, access, options, progress=QUIET)
        assert all(r.committed for r in before), [r.error for r in before]

        added, grown = push_and_record(big, six, state_dir, access, options, progress=QUIET)
        assert {r.device for r in grown if r.committed} == {"spine01", "spine02", "leaf03"}, [r.error for r in grown]
        assert all(v.ok for v in verify_fabric(big, candidates(big), access, wait_s=30, hold=2))

        _, shrunk = push_and_record(small, four, state_dir, access, options, progress=QUIET)
        spine = next(r for r in shrunk if r.device == "spine01")
        assert spine.committed, spine.error  # the peer removed on purpose is not "lost"
        assert "  no neighbor swp3" in spine.diff
        assert not [line for line in spine.diff if "no neighbor swp3 " in line], "one 'no neighbor', FRR refuses the rest after it"
        running = show(lab, "spine01", "show running-config")
        assert "neighbor swp3" not in running
        assert "leaf03" not in running

        _, restored = push_and_record(big, six, state_dir, access, options, progress=QUIET, rollback_to=added)
        assert {r.device for r in restored if r.committed} == {"spine01", "spine02"}, [r.error for r in restored]
        assert all(v.ok for v in verify_fabric(big, candidates(big), access, wait_s=30, hold=2))
    finally:
        lab_down(big.name, twin_dir, lab_namespaces(big))
