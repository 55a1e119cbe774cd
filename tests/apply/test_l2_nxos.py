"""The NX-OS L2 post-check: its reader on recorded NX-OS replies (a table of one row given as an object included), the
check passing and failing on them, hostile replies refused, and an NX-OS storage switch pushed through the whole
pipeline on its recorded transcript (``tests/data/transcripts/nxos-l2``), to a confirm and to a rollback."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import pytest
import yaml

from fabric.apply.checks.l2 import L2_READERS, l2_expect, l2_problems, read_l2
from fabric.apply.checks.l2_nxos import CHANNELS, INTERFACES, MAX_REPLY, VLANS, VPC, nxos_l2_state
from fabric.apply.checks.l2state import L2State
from fabric.apply.nos import ADAPTERS
from fabric.apply.planes import select_devices
from fabric.apply.push import candidates
from fabric.apply.rollout import RolloutOptions, push_fabric, targets
from fabric.apply.session import DeviceAccess
from fabric.errors import NxosReplyError
from fabric.model import load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from fabric.render.vlan_list import vlan_ids
from tests.apply.test_adapters import Replay
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "transcripts" / "nxos-l2"
SWITCH = "stor-su1-1-a"


@cache
def script() -> dict[str, Any]:
    return yaml.safe_load((DATA / f"{SWITCH}.yaml").read_text(encoding="utf-8"))


@cache
def plan() -> ClusterPlan:
    return plan_cluster(load_cluster(DATA / "cluster.yaml"))


def replies(**changed: str) -> dict[str, str]:
    """The four post-check replies of the commit, after the change (``changed``: some replaced by other recorded ones)."""
    r = script()["replies"]
    return {"vlans": r["vlans_after"], "links": r["links_before"], "channels": r["channels_before"], "vpc": r["vpc_after"], **changed}


def state(vlans: str, links: str, channels: str, vpc: str) -> L2State:
    return nxos_l2_state(vlans, links, channels, vpc)


def before() -> L2State:
    r = script()["replies"]
    return state(r["vlans_before"], r["links_before"], r["channels_before"], r["vpc_before"])


def test_the_reader_gives_vlans_ports_through_their_port_channels_links_and_vpc_state() -> None:
    was, now = before(), state(**replies())
    assert was.vlans == now.vlans == {1, 101, 102}
    assert was.ports["Ethernet1/1/1"] == {101}, "a bundled member carries its port-channel's VLANs (a one-member table: an object)"
    assert was.ports["Ethernet1/32/3"] == {101}, "by hand, VLAN 102 was off the peer link"
    assert now.ports["Ethernet1/32/3"] == now.ports["port-channel2000"] == {101, 102}
    assert now.ports["Ethernet1/1/2"] == {102}
    assert now.up["Ethernet1/31/4"]
    assert now.up["mgmt0"]
    assert not now.up["Ethernet1/2"], "an unused port, shut"
    assert {k: v for k, v in now.up.items() if k.startswith("vPC")} == {
        "vPC peer adjacency": True, "vPC peer-link": True, "vPC 1": True, "vPC 3": True, "vPC 1999": True
    }  # fmt: skip
    expect = l2_expect(plan(), SWITCH)
    assert expect.vpc
    assert expect.lags == ("port-channel1999", "port-channel2000"), "the plan's peerlink and uplink under NX-OS's names"
    assert l2_problems(expect, now, was) == []
    assert "Ethernet1/32/3 (stor-su1-1-b peerlink): VLAN 102 not on it" in l2_problems(expect, was), "what the push repairs"


def test_a_table_of_one_row_is_an_object_and_reads_the_same_as_a_list() -> None:
    vlan = {"vlanshowbr-vlanid": 101, "vlanshowbr-vlanstate": "active", "vlanshowplist-ifidx": ["port-channel7,Eth1/7", "Ethernet1/8"]}
    link = {"interface": "Ethernet1/9", "state": "up"}
    member = {"port": "Eth1/9", "port-status": "P"}
    channel = {"group": 7, "port-channel": "port-channel7", "status": "U", "TABLE_member": {"ROW_member": member}}
    vpc = {"vpc-peer-status": "peer-ok", "TABLE_peerlink": {"ROW_peerlink": {"peerlink-ifindex": "Po7", "peer-link-port-state": "1"}},
           "TABLE_vpc": {"ROW_vpc": {"vpc-id": "7", "vpc-ifindex": "Po7", "vpc-port-state": "0"}}}  # fmt: skip

    def dump(one: bool) -> tuple[str, str, str, str]:
        rows = (lambda row: row) if one else (lambda row: [row])
        chan = {**channel, "TABLE_member": {"ROW_member": rows(member)}}
        vp = {**vpc, "TABLE_vpc": {"ROW_vpc": rows(vpc["TABLE_vpc"]["ROW_vpc"])}}
        return table("vlanbriefxbrief", rows(vlan)), table("interface", rows(link)), table("channel", rows(chan)), json.dumps(vp)

    single, listed = state(*dump(one=True)), state(*dump(one=False))
    assert single == listed
    assert single.ports == {"port-channel7": {101}, "Ethernet1/7": {101}, "Ethernet1/8": {101}, "Ethernet1/9": {101}}
    assert single.up == {"Ethernet1/9": True, "port-channel7": True, "vPC peer adjacency": True, "vPC peer-link": True, "vPC 7": False}


def test_a_member_down_fails_the_check() -> None:
    r = replies()
    channels = json.loads(r["channels"])
    uplink = next(c for c in channels["TABLE_channel"]["ROW_channel"] if c["port-channel"] == "port-channel1999")
    next(m for m in uplink["TABLE_member"]["ROW_member"] if m["port"] == "Ethernet1/31/1")["port-status"] = "D"
    links = json.loads(r["links"])
    next(row for row in links["TABLE_interface"]["ROW_interface"] if row["interface"] == "Ethernet1/31/1")["state"] = "down"
    now = state(r["vlans"], json.dumps(links), json.dumps(channels), r["vpc"])
    assert l2_problems(l2_expect(plan(), SWITCH), now, before()) == [
        "Ethernet1/31/1 (stor-spine-a uplink): VLAN 101, 102 not on it",
        "Ethernet1/31/1 (stor-spine-a uplink) is down after the change",
    ]


def test_a_vlan_missing_fails_the_check() -> None:
    vlans = json.loads(replies()["vlans"])
    rows = vlans["TABLE_vlanbriefxbrief"]["ROW_vlanbriefxbrief"]
    vlans["TABLE_vlanbriefxbrief"]["ROW_vlanbriefxbrief"] = [v for v in rows if v["vlanshowbr-vlanid"] != "102"]
    problems = l2_problems(l2_expect(plan(), SWITCH), state(**replies(vlans=json.dumps(vlans))), before())
    assert problems[:3] == [
        "VLAN 102 (inband) is not on the bridge",
        "Ethernet1/1/2 (gpu001 inband): VLAN 102 not on it",
        "Ethernet1/1/4 (gpu002 inband): VLAN 102 not on it",
    ]
    assert len(problems) == 13, "and every trunk member without 102"
    suspended = json.loads(replies()["vlans"])
    suspended["TABLE_vlanbriefxbrief"]["ROW_vlanbriefxbrief"][2]["vlanshowbr-vlanstate"] = "suspend"
    assert "VLAN 102 (inband) is not on the bridge" in l2_problems(l2_expect(plan(), SWITCH), state(**replies(vlans=json.dumps(suspended))))


def test_a_peer_link_down_fails_the_check() -> None:
    r = script()["replies"]
    now = state(r["vlans_peerlink_down"], r["links_peerlink_down"], r["channels_peerlink_down"], r["vpc_peerlink_down"])
    assert l2_problems(l2_expect(plan(), SWITCH), now, before()) == [
        "Ethernet1/32/3 (stor-su1-1-b peerlink): VLAN 101, 102 not on it",
        "Ethernet1/32/4 (stor-su1-1-b peerlink): VLAN 101, 102 not on it",
        "Ethernet1/32/3 (stor-su1-1-b peerlink) is down after the change",
        "Ethernet1/32/4 (stor-su1-1-b peerlink) is down after the change",
        "port-channel2000 (LAG) is down after the change",
        "vPC peer adjacency is down after the change",
        "vPC peer-link is down after the change",
    ]


def test_before_feature_vpc_the_switch_has_no_vpc_state_and_a_first_push_is_not_refused() -> None:
    r = replies(vpc="% Invalid command at '^' marker.\n")
    now = state(**r)
    assert not [k for k in now.up if k.startswith("vPC")]
    assert l2_problems(l2_expect(plan(), SWITCH), state(**replies()), now) == [], "nothing was up before: nothing is lost"
    assert l2_problems(l2_expect(plan(), SWITCH), now, state(**replies()))[-1] == "vPC peer-link is down after the change"


def table(name: str, row: object) -> str:
    """NX-OS's ``TABLE_<name>`` / ``ROW_<name>`` around ``row``."""
    return json.dumps({f"TABLE_{name}": {f"ROW_{name}": row}})


def test_verify_wants_the_vpc_pair_formed_whatever_it_was_before() -> None:
    r, expect = script()["replies"], l2_expect(plan(), SWITCH)
    down = state(r["vlans_peerlink_down"], r["links_peerlink_down"], r["channels_peerlink_down"], r["vpc_peerlink_down"])
    assert l2_problems(expect, down)[-2:] == ["vPC peer adjacency is down", "vPC peer-link is down"]
    assert l2_problems(expect, state(**replies(vpc="% Invalid command at '^' marker.\n"))) == ["no vPC state: is feature vpc on?"]
    assert l2_problems(expect, state(**replies())) == []


VLAN_ROW = {"vlanshowbr-vlanid": "101", "vlanshowbr-vlanstate": "active"}
PEER_LINK_WORD = {"vpc-peer-status": "peer-ok", "TABLE_peerlink": {"ROW_peerlink": {"peer-link-port-state": "up"}}}
BAD_MEMBER = {"port-channel": "Po1", "status": "U", "TABLE_member": {"ROW_member": {"port": "Eth1/1", "port-status": "X"}}}
HOSTILE = {
    "not JSON": (VLANS, "vlans", "% Permission denied for the role\n", "the reply is not JSON"),
    "an array": (INTERFACES, "links", "[]", "the reply is a JSON list, not an object"),
    "rows of strings": (VLANS, "vlans", table("vlanbriefxbrief", ["101"]), "neither an object nor a list"),
    "a table without rows": (CHANNELS, "channels", json.dumps({"TABLE_channel": {"row": []}}), "TABLE_channel holds no ROW_channel"),
    "VLAN 5000": (VLANS, "vlans", table("vlanbriefxbrief", {**VLAN_ROW, "vlanshowbr-vlanid": "5000"}), "'5000' is not in 1-4094"),
    "a name with a newline": (INTERFACES, "links", table("interface", {"interface": "Eth1/1\nrm", "state": "up"}), "is no interface name"),
    "a range of 10**5 ports": (VLANS, "vlans", table("vlanbriefxbrief", {**VLAN_ROW, "vlanshowplist-ifidx": "Ethernet1/1-99999"}), "wider than 4096"),
    "a port list of numbers": (VLANS, "vlans", table("vlanbriefxbrief", {**VLAN_ROW, "vlanshowplist-ifidx": [1]}), "not a string"),
    "an undocumented member flag": (CHANNELS, "channels", table("channel", BAD_MEMBER), "member flag 'X' is none NX-OS documents"),
    "a peer-link state word": (VPC, "vpc", json.dumps(PEER_LINK_WORD), "not 0 or 1"),
    "a state that is an object": (INTERFACES, "links", table("interface", {"interface": "mgmt0", "state": {}}), "state is a JSON object"),
    "nesting 10**5 deep": (INTERFACES, "links", "[" * 100_000 + "]" * 100_000, "the reply is not JSON (RecursionError)"),
    "a reply over the bound": (VLANS, "vlans", " " * (MAX_REPLY + 1), "more than the 4194304 this reader takes"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_reply_of_an_unknown_shape_is_refused_naming_the_command(case: str) -> None:
    command, which, reply, problem = HOSTILE[case]
    with pytest.raises(NxosReplyError) as caught:
        state(**replies(**{which: reply}))
    assert str(caught.value).startswith(f"{command!r}: "), caught.value
    assert problem in str(caught.value)


def test_read_l2_sends_the_four_commands_and_leaves_vpc_out_off_a_pair() -> None:
    r = replies()
    session = Replay([{"show": VLANS, "reply": r["vlans"]}, {"show": INTERFACES, "reply": r["links"]}, {"show": CHANNELS, "reply": r["channels"]}])
    assert read_l2("nxos", session).vlans == {1, 101, 102}
    assert not session.steps
    assert not session.mismatches
    assert "nxos" in L2_READERS


def push(name: str) -> tuple[dict[str, Any], Any, list[Replay]]:
    """Push the storage plane with only the recorded switch's candidate, on its recorded transcript ``pushes.<name>``."""
    run = script()["pushes"][name]
    rendered = candidates(plan(), ("storage",))[SWITCH]
    candidate = rendered.replace(*run["edit"]) if "edit" in run else rendered
    assert "edit" not in run or candidate != rendered
    sessions = [Replay(list(run["steps"])), Replay(list(run["reach"]))]
    handed: list[str] = []

    def connect(access: DeviceAccess, _: object) -> Replay:
        assert access.name == SWITCH, "only the switch with a candidate is reached"
        handed.append(access.name)
        return sessions[len(handed) - 1]

    access = {n: DeviceAccess(n, "192.0.2.1", 22, "admin", None, "/dev/null") for n in candidates(plan(), ("storage",))}
    # the other switches have no candidate (not reached, an error each): go on past them to the recorded one
    options = RolloutOptions(commit=True, planes=("storage",), post_check_s=0.0, post_check_hold_s=0.0, stop_on_failure=False)
    results = push_fabric(plan(), {SWITCH: candidate}, access, options, lambda *_: None, change=run["change"], connector=connect)  # pyright: ignore[reportArgumentType]
    for session in sessions:
        assert not session.mismatches, session.mismatches[0]
        assert not session.steps, f"transcript steps never sent: {session.steps[:2]}"
    return run, {r.device: r for r in results}, sessions


UNOWNED = ("username", "aaa", "tacacs", "snmp", "feature", "ntp", "license", "mgmt0", "Ethernet1/2", "Ethernet1/33", "line vty", "vrf context")


def sent_changes(sessions: list[Replay]) -> list[str]:
    return [line for sent in sessions[0].sent if "\n" in sent or not sent.startswith("show ") for line in sent.splitlines()]


def test_an_nxos_storage_push_runs_through_the_l2_post_check_to_a_confirm() -> None:
    run, results, sessions = push("commit")
    result = results[SWITCH]
    assert (result.changed, result.committed, result.rolled_back, result.error) == (True, True, False, None)
    assert result.diff == [c for step in run["steps"] if "configure" in step for c in step["configure"]]
    assert "show vpc brief | json" in sessions[0].sent, "a vPC pair's state is read before and after"
    assert sessions[1].sent == ["show version"], "a fresh login before confirming"
    touched = [(word, line) for word in UNOWNED for line in sent_changes(sessions) if word.lower() in line.lower()]
    assert not touched, touched
    assert {n for n, r in results.items() if not r.reached} == {n for n in results if n != SWITCH}, "no candidate: not reached"


def test_an_nxos_storage_push_that_downs_the_peer_link_is_rolled_back() -> None:
    _, results, sessions = push("peerlink-down")
    result = results[SWITCH]
    assert (result.changed, result.committed, result.rolled_back) == (True, False, True)
    assert result.error is not None
    assert result.error.startswith("post-check failed: Ethernet1/32/3 (stor-su1-1-b peerlink): VLAN 101, 102 not on it")
    assert "vPC peer-link is down after the change" in result.error
    assert "  shutdown" in result.diff
    assert sessions[0].sent[-3:] == [
        "rollback running-config checkpoint gpufabric-20261123T111500000000Z", "no checkpoint gpufabric-20261123T111500000000Z", "show running-config"
    ]  # fmt: skip
    assert sessions[1].sent == [], "the L2 check failed first: no fresh login was needed"


def test_a_reply_it_cannot_trust_after_the_change_fails_the_check_and_the_checkpoint_is_rolled_back(monkeypatch: pytest.MonkeyPatch) -> None:
    commit = script()["pushes"]["commit"]
    change = commit["change"]
    steps = [dict(step) for step in commit["steps"][:12]]
    assert steps[8]["show"] == VLANS
    steps[8]["reply"] = "% Permission denied for the role\n"
    steps += [
        {"show": f"rollback running-config checkpoint gpufabric-{change}", "reply": "Rollback completed successfully."},
        {"show": f"no checkpoint gpufabric-{change}", "reply": ""},
        {"show": "show running-config", "reply": script()["replies"]["running"]},
    ]
    monkeypatch.setitem(script()["pushes"], "hostile", {"change": change, "steps": steps, "reach": []})
    _, results, _ = push("hostile")
    result = results[SWITCH]
    assert (result.committed, result.rolled_back) == (False, True)
    assert result.error == (
        "post-check failed: unreadable reply: 'show vlan brief | json': the reply is not JSON (JSONDecodeError), "
        "it starts '% Permission denied for the role'"
    )


def test_the_nxos_adapter_diff_of_the_recorded_running_config_touches_only_owned_lines() -> None:
    running = script()["replies"]["running"]
    diff = ADAPTERS["nxos"].diff(running, candidates(plan(), ("storage",))[SWITCH])
    # NX-OS prints the uplink's 101,102 as 101-102, and so does the render: only the peer link's line differs
    assert diff == ["interface port-channel2000", "  switchport trunk allowed vlan 101-102", "  exit"]


def as_nxos_reports(config: str) -> tuple[str, str, str, str]:
    """The four replies a switch running ``config`` gives, as NX-OS derives them: a VLAN's ports are its access ports,
    the trunks allowing it and the port-channels, never a member (``channel-group N``: bundled into port-channelN, flag
    P); every interface is up; a ``vpc domain`` has its peer adjacency formed, its peer link and every ``vpc N`` up."""
    ids = re.findall(r"^vlan (\d+)$", config, re.MULTILINE)
    blocks = {m[1]: m[2] for m in re.finditer(r"^interface (\S+)\n((?:  .*\n)*)", config, re.MULTILINE)}
    members: dict[str, list[str]] = {}
    carried: dict[str, list[str]] = {vid: [] for vid in ids}
    for name, body in blocks.items():
        if group := re.search(r"channel-group (\d+)", body):
            members.setdefault(f"port-channel{group[1]}", []).append(name)
            continue
        access = re.search(r"switchport access vlan (\d+)", body)
        allowed = re.search(r"switchport trunk allowed vlan (\S+)", body)
        for vid in [access[1]] if access else sorted(map(str, vlan_ids(allowed[1]))) if allowed else []:
            carried[vid].append(name)
    vlans = [{"vlanshowbr-vlanid": vid, "vlanshowbr-vlanstate": "active", "vlanshowplist-ifidx": ",".join(ports)} for vid, ports in carried.items()]
    links = [{"interface": name, "state": "up"} for name in blocks]
    channels = [
        {"port-channel": pc, "status": "U", "TABLE_member": {"ROW_member": [{"port": m, "port-status": "P"} for m in ms]}}
        for pc, ms in members.items()
    ]
    peer = next((name for name, body in blocks.items() if "vpc peer-link" in body), None)
    vpcs = [{"vpc-id": m[1], "vpc-port-state": "1"} for m in re.finditer(r"^  vpc (\d+)$", config, re.MULTILINE)]
    vpc = {
        "vpc-peer-status": "peer-ok",
        **json.loads(table("peerlink", {"peerlink-ifindex": peer, "peer-link-port-state": "1"})),
        **json.loads(table("vpc", vpcs)),
    }
    return table("vlanbriefxbrief", vlans), table("interface", links), table("channel", channels), json.dumps(vpc if peer else {})


@pytest.mark.parametrize("case", ["storage/nxos", "render/nxos"])
def test_every_rendered_nxos_storage_and_oob_switch_is_a_target_now_and_passes_the_check_as_rendered(case: str) -> None:
    cluster = plan_cluster(load_cluster(ROOT / "tests" / "data" / case / "cluster.yaml"))
    devices = [d for d in select_devices(cluster, ("oob", "storage")) if d.nos == "nxos"]
    assert devices, case
    rendered = candidates(cluster, ("oob", "storage"))
    access = {d.name: DeviceAccess(d.name, "192.0.2.1", 22, "admin", None, "/dev/null") for d in devices}
    for target in targets(cluster, rendered, access, {}, devices):  # no longer refused
        assert target.l2 is not None
        assert target.l2.vpc == (target.name.startswith("stor-")), "only a storage pair runs vPC"
        reports = as_nxos_reports(target.candidate)
        assert l2_problems(target.l2, state(*reports), state(*reports)) == [], target.name
