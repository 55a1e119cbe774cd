"""Every plane's switches through the one push: which switches, in what order, and the storage / OOB switches of the
twin pushed for real (root): ownership kept, the change recorded, a dropped plane VLAN or a management-ACL lock-out
caught by the post-check and reverted."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabric.__main__ import main
from fabric.apply.checks.l2 import l2_expect, l2_problems, read_l2
from fabric.apply.nos import ADAPTERS
from fabric.apply.planes import PLANES, plane_batches, plane_devices, select_devices
from fabric.apply.push import candidates, push_and_record
from fabric.apply.record import ChangeRecord
from fabric.apply.rollout import RolloutOptions, batches, open_session, push_fabric
from fabric.apply.session import DeviceAccess
from fabric.apply.transaction import PushResult
from fabric.model import load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from fabric.render.vlan_list import vlan_ids
from fabric.twin.access import twin_access
from fabric.twin.lab import LabState, lab_down, lab_namespaces, lab_up, namespace
from tests.apply.test_push_cli import definition
from tests.conftest import ROOT

pytestmark = pytest.mark.twin  # builds a twin: the twin lane of ./dev test, one twin at a time (docs/testing.md)

QUIET = lambda *_: None  # noqa: E731 - a progress sink
CUMULUS = ADAPTERS["cumulus"]
L2 = ["oob-su1", "oob-su2", "oob-su3", "oob-su4", "oob-mgmt", "stor-a", "stor-b"]


def test_a_bad_plane_exits_2_and_names_the_choices(capsys: pytest.CaptureFixture[str]) -> None:
    lab = str(ROOT / "inventories" / "lab" / "cluster.yaml")
    for command, bad in ((["push", lab, "--plane", "sorage", "--commit"], "sorage"), (["verify", lab, "--plane", "storage,bogus"], "bogus")):
        code = main(command)
        err = capsys.readouterr().err
        assert code == 2, err
        assert f"--plane: '{bad}' is not a plane; choose from oob, storage, inband, compute" in err


def test_every_plane_in_push_order_oob_one_at_a_time_pairs_one_side_at_a_time_compute_last() -> None:
    lab = plan_cluster(load_cluster(ROOT / "inventories" / "lab" / "cluster.yaml"))
    assert [d.name for d in select_devices(lab)] == [*L2, "spine01", "spine02", "leaf01", "leaf02"]
    assert plane_batches(select_devices(lab), 4, batches(lab, 4)) == [
        *([n] for n in L2[:5]), ["stor-a"], ["stor-b"], ["spine01"], ["leaf01"], ["spine02", "leaf02"]
    ]  # fmt: skip
    assert [d.name for d in select_devices(lab, ("inband",))] == ["stor-a", "stor-b"], "a converged network carries in-band too"
    roce = plan_cluster(load_cluster(ROOT / "inventories" / "onprem-roce" / "cluster.yaml"))
    devices = select_devices(roce, PLANES)
    order = plane_batches(devices, 4, batches(roce, 4))
    plane = {d.name: d.plane for d in devices}
    side = {d.name: d.group for d in devices if d.plane in {"storage", "inband"}}
    assert [plane[b[0]] for b in order] == sorted((plane[b[0]] for b in order), key=PLANES.index), "planes never interleave"
    assert all(len(b) == 1 for b in order if plane[b[0]] == "oob")
    assert all(len({side[n] for n in b}) == 1 for b in order if b[0] in side), "a batch never holds both sides of a pair"
    assert sorted(n for b in order for n in b) == sorted(d.name for d in devices), "every switch once"
    for found in plane_devices(roce).values():
        assert all(d.mgmt_address for d in found)
    assert set(candidates(roce, ("oob", "storage", "inband"))) == {d.name for d in devices if d.plane != "compute"}


@pytest.fixture(scope="module")
def lab(plan: ClusterPlan) -> Iterator[tuple[LabState, Path]]:
    """One twin for the module (its tests leave it as they found it)."""
    directory = ROOT / ".gpufabric" / "tests" / f"planes-{os.getpid()}"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    state = lab_up(plan, directory)
    try:
        yield state, directory
    finally:
        lab_down(plan.name, directory, lab_namespaces(plan))
        shutil.rmtree(directory, ignore_errors=True)


def on(lab: LabState, name: str, *commands: str) -> list[str]:
    session = open_session(twin_access(lab)[name], CUMULUS)
    try:
        return [session.show(c) for c in commands]
    finally:
        session.disconnect()


def mtu(plan: ClusterPlan, device: str, port: str) -> int:
    shown = subprocess.run(["ip", "-n", namespace(plan.name, device), "-j", "link", "show", port], capture_output=True, text=True, check=True)
    return int(json.loads(shown.stdout)[0]["mtu"])


def test_storage_and_oob_pushes_keep_unowned_lines_record_the_change_and_go_plane_by_plane(lab: tuple[LabState, Path], plan: ClusterPlan) -> None:
    state, directory = lab
    # drift: an owned MTU and description changed by hand, next to lines gpufabric does not own
    on(state, "stor-a", "nv set interface swp1s0 link mtu 1500", "nv set system aaa user admin role system-admin", "nv config apply -y")
    on(state, "oob-su1", "nv unset interface swp1 description", "nv set service snmp-server listening-address localhost", "nv config apply -y")
    assert mtu(plan, "stor-a", "swp1s0") == 1500
    steps: list[tuple[str, str]] = []
    options = RolloutOptions(commit=True, planes=("storage", "oob"), post_check_hold_s=1.0)
    change, results = push_and_record(
        plan, definition(plan, directory), directory, twin_access(state), options, progress=lambda d, s: steps.append((d, s))
    )
    assert [r.device for r in results] == L2, "OOB first, then storage; no compute switch"
    assert {r.device for r in results if r.committed} == {"stor-a", "oob-su1"}, [r.error for r in results]
    assert not [r for r in results if r.error]
    assert [d for d, s in steps if s == "applying"] == L2, "one device at a time, in push order"
    assert next(r for r in results if r.device == "stor-a").diff == ["nv set interface swp1s0 link mtu 9000"]
    stor_a, oob_su1 = on(state, "stor-a", "nv config show -o commands")[0], on(state, "oob-su1", "nv config show -o commands")[0]
    assert "nv set system aaa user admin role system-admin" in stor_a, "an unowned line survives"
    assert "nv set interface swp1s0 link mtu 9000" in stor_a
    assert "nv set service snmp-server listening-address localhost" in oob_su1
    assert "nv set interface swp1 description 'node1 bmc'" in oob_su1
    assert mtu(plan, "stor-a", "swp1s0") == 9000, "the switch's port runs the planned MTU again"
    record = directory / "changes" / change
    assert "link mtu 1500" in (record / "stor-a.backup").read_text(encoding="utf-8")
    assert (record / "stor-a.applied").exists()
    assert (record / "oob-su1.applied").exists()
    assert not (record / "leaf01.backup").exists()
    audit = [json.loads(line) for line in (directory / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(a["event"], sorted(a["devices"])) for a in audit] == [("started", sorted(L2)), ("finished", sorted(L2))]


def push_edited(lab: tuple[LabState, Path], plan: ClusterPlan, plane: str, name: str, edit: tuple[str, str]) -> dict[str, PushResult]:
    """Push ``plane`` with ``name``'s rendered candidate edited (``old``, ``new``), the others as rendered; result by switch."""
    state, directory = lab
    rendered = candidates(plan, (plane,))
    edited = rendered[name].replace(*edit)
    assert edited != rendered[name]
    record = ChangeRecord(directory, f"{name}-edited")
    record.begin(definition(plan, directory), commit=True, rollback_to=None)
    options = RolloutOptions(commit=True, planes=(plane,), post_check_s=4.0, post_check_hold_s=1.0)
    results = push_fabric(plan, {**rendered, name: edited}, twin_access(state), options, QUIET, change=record.change, record=record)
    return {r.device: r for r in results}


def test_a_candidate_that_drops_a_plane_vlan_fails_the_l2_post_check_and_is_reverted(lab: tuple[LabState, Path], plan: ClusterPlan) -> None:
    state, _ = lab
    results = push_edited(lab, plan, "storage", "stor-a", ("nv set bridge domain br_default vlan 101\n", ""))
    stor_a, stor_b = results["stor-a"], results["stor-b"]
    assert stor_a.diff == ["nv unset bridge domain br_default vlan 101"], "only that VLAN, not every VLAN of the bridge"
    assert stor_a.error is not None
    assert "VLAN 101 (storage) is not on the bridge" in stor_a.error
    assert "swp1s0 (node1 storage): VLAN 101 not on it" in stor_a.error
    assert stor_a.rolled_back
    assert not stor_a.committed
    assert not stor_b.reached, "the rollout stopped at the failed canary"
    assert "nv set bridge domain br_default vlan 101" in on(state, "stor-a", "nv config show -o commands")[0]
    session = open_session(twin_access(state)["stor-a"], CUMULUS)
    try:
        assert l2_problems(l2_expect(plan, "stor-a"), read_l2("cumulus", session)) == [], "VLAN 101 and its ports are back"
    finally:
        session.disconnect()


def test_an_oob_candidate_whose_acl_locks_the_station_out_is_reverted(lab: tuple[LabState, Path], plan: ClusterPlan) -> None:
    state, directory = lab
    results = push_edited(lab, plan, "oob", "oob-su2", ("source-ip 10.103.0.0/16", "source-ip 10.199.0.0/16"))
    assert results["oob-su1"].reached
    assert not results["oob-su1"].error
    su2 = results["oob-su2"]
    assert su2.error is not None
    assert "lock us out" in su2.error, su2.error
    assert su2.rolled_back
    assert not results["oob-mgmt"].reached, "the switch carrying the other switches' management ports was never touched"
    assert "source-ip 10.103.0.0/16" in on(state, "oob-su2", "nv config show -o commands")[0], "a fresh login works again"
    assert "control-plane acl MGMT-SSH: rule 20 deny matches 10.103.0.1" in (directory / "ssh" / "refused.log").read_text(encoding="utf-8")


def test_diff_and_verify_per_plane_from_the_command_line(lab: tuple[LabState, Path], plan: ClusterPlan, capsys: pytest.CaptureFixture[str]) -> None:
    _, directory = lab
    cluster = str(definition(plan, directory))
    assert main(["diff", cluster, "--state", str(directory), "--plane", "storage", "--plane", "oob", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert list(shown["devices"]) == L2
    assert main(["verify", cluster, "--state", str(directory), "--plane", "oob,storage", "--json"]) == 0
    verdicts = json.loads(capsys.readouterr().out)
    assert sorted(verdicts) == sorted(L2)
    assert all(v["ok"] for v in verdicts.values()), verdicts
    assert main(["diff", cluster, "--state", str(directory), "--plane", "compute", "--json"]) == 3, "the compute switches start bare"
    assert set(json.loads(capsys.readouterr().out)["devices"]) == {"spine01", "spine02", "leaf01", "leaf02"}


class FakeEos:
    """An EOS storage switch at the session boundary: its running config, and ``show vlan | json`` / ``show interfaces
    | json`` as EOS derives them from it (a VLAN's ports: access, trunk allowed lists, a mode-trunk port without a list
    carries every VLAN; a ``channel-group N`` member belongs to Port-ChannelN). ``no vlan N`` deletes the VLAN;
    ``configure session … abort`` puts the config from before the change back."""

    def __init__(self, running: str) -> None:
        self.running = self.before = running
        self.sent: list[str] = []

    def show(self, command: str) -> str:
        self.sent.append(command)
        if command == "show running-config":
            return self.running
        if command == "show vlan | json":
            return json.dumps({"vlans": self._vlans()})
        if command == "show interfaces | json":
            groups = {name: re.findall(r"channel-group (\d+)", "\n".join(body)) for name, body in self._interfaces().items()}
            member = {name: {"interfaceMembership": f"Member of Port-Channel{g[0]}"} if g else {} for name, g in groups.items()}
            return json.dumps({"interfaces": {name: {"lineProtocolStatus": "up", **extra} for name, extra in member.items()}})
        if command.startswith("configure session") and command.endswith(" abort"):
            self.running = self.before
        return ""

    def configure(self, lines: list[str]) -> str:
        self.sent += lines
        self.before = self.running
        for line in lines:
            if m := re.fullmatch(r"no vlan (\d+)", line.strip()):
                self.running = re.sub(rf"^vlan {m.group(1)}\n(?:   .*\n)*", "", self.running, flags=re.MULTILINE)
        return ""

    def exit_config_mode(self) -> None:
        return None

    def disconnect(self) -> None:
        return None

    def _interfaces(self) -> dict[str, list[str]]:
        return {m.group(1): m.group(2).splitlines() for m in re.finditer(r"^interface (\S+)\n((?:   .*\n)*)", self.running, re.MULTILINE)}

    def _vlans(self) -> dict[str, dict[str, dict[str, object]]]:
        ids = re.findall(r"^vlan (\d+)$", self.running, re.MULTILINE)
        out: dict[str, dict[str, dict[str, object]]] = {vid: {"interfaces": {}} for vid in ids}
        for name, body in self._interfaces().items():
            text = "\n".join(body)
            access = re.search(r"switchport access vlan (\d+)", text)
            allowed = re.search(r"switchport trunk allowed vlan (\S+)", text)
            listed = [str(v) for v in sorted(vlan_ids(allowed.group(1)))] if allowed else None  # EOS prints 101-102
            carried = [access.group(1)] if access else listed if listed is not None else ids if "switchport mode trunk" in text else []
            for vid in carried:
                if vid in out:
                    out[vid]["interfaces"][name] = {}
        return out


def test_eos_storage_switches_pass_the_l2_check_as_rendered_and_a_dropped_vlan_is_aborted() -> None:
    plan = plan_cluster(load_cluster(ROOT / "tests" / "data" / "storage" / "eos" / "cluster.yaml"))
    rendered = candidates(plan, ("storage",))
    for name, candidate in rendered.items():
        state = read_l2("eos", FakeEos(candidate))
        assert l2_problems(l2_expect(plan, name), state) == [], name
    dropped = re.sub(r"^vlan 101\n(?:   .*\n)*", "", rendered["stor-su1-1-a"], count=1, flags=re.MULTILINE)
    switches = {name: FakeEos(text) for name, text in rendered.items()}
    access = {name: DeviceAccess(name, "192.0.2.1", 22, "admin", None, "/dev/null") for name in rendered}
    options = RolloutOptions(commit=True, planes=("storage",), post_check_s=1.0, post_check_hold_s=0.0)
    results = {r.device: r for r in push_fabric(plan, {**rendered, "stor-su1-1-a": dropped}, access, options, QUIET, change="c1",
                                                 connector=lambda a, _: switches[a.name], previous=rendered)}  # fmt: skip
    failed = results["stor-su1-1-a"]
    assert failed.diff == ["no vlan 101"], "the last push had it (previous), so it is owned and removed"
    assert failed.error is not None
    assert "VLAN 101 (storage) is not on the bridge" in failed.error
    assert "Ethernet1/1 (gpu001 storage): VLAN 101 not on it" in failed.error, "a bond member, through its Port-Channel"
    assert failed.rolled_back
    assert "configure session gpufabric-c1 abort" in switches["stor-su1-1-a"].sent
    assert "vlan 101\n" in switches["stor-su1-1-a"].running, "the VLAN is back"
    assert not [n for n, r in results.items() if r.committed], "nothing else changed, nothing committed"
    assert not results["stor-su1-1-b"].reached, "side b is never reached after side a failed"
