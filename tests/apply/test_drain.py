"""push --drain on the twin: a spine change under a continuous ping flood between racks loses no packet, the drain and
undrain are in the change record, and a NOS without a checked drain policy is refused before anything is touched. And
the post-check that reads the neighbours: a change whose loss only they see is rolled back."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from fabric.apply.checks.verify import verify_fabric
from fabric.apply.nos.frr import FrrAdapter
from fabric.apply.push import candidates, push_and_record
from fabric.apply.record import ChangeRecord
from fabric.apply.rollout import RolloutOptions, open_session, push_fabric
from fabric.apply.transaction import PushResult
from fabric.errors import DrainError
from fabric.plan import ClusterPlan
from fabric.twin.access import twin_access
from fabric.twin.lab import LabState
from fabric.twin.traffic import Flood, cross_rack_pairs, forwarded
from tests.apply.test_changes import definition

pytestmark = pytest.mark.twin  # builds a twin: the twin lane of ./dev test, one twin at a time (docs/testing.md)

QUIET = lambda *_: None  # noqa: E731 - a progress sink
FRR = FrrAdapter()


def busiest_spine(plan: ClusterPlan, spines: list[str], seconds: float = 2.0) -> tuple[str, int]:
    """The spine that forwards most of the flood now, and its packet rate."""
    start = {s: forwarded(plan, s) for s in spines}
    time.sleep(seconds)
    rates = {s: int((forwarded(plan, s) - start[s]) / seconds) for s in spines}
    name = max(rates, key=lambda s: rates[s])
    return name, rates[name]


def test_a_drained_spine_change_loses_no_packet_under_a_ping_flood(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    lab, state = twin
    access = twin_access(lab)
    base = definition(state, plan.name)
    options = RolloutOptions(commit=True, post_check_s=30, post_check_hold_s=1.0)
    _, first = push_and_record(plan, base, state, access, options, progress=QUIET)
    assert all(r.committed for r in first), [r.error for r in first]
    verdicts = verify_fabric(plan, candidates(plan), access, wait_s=60, hold=2)
    assert all(v.ok for v in verdicts), [(v.device, v.drift, v.problems) for v in verdicts if not v.ok]

    flood = Flood(plan, pairs=cross_rack_pairs(plan), interval_s=0.01)
    steps: list[str] = []
    drained_rates: list[int] = []
    try:
        spine, rate = busiest_spine(plan, ["spine01", "spine02"])
        assert rate > 50, f"the flood does not cross {spine} ({rate} packets/s)"
        wanted = candidates(plan)
        wanted[spine] = re.sub(r"router bgp \d+", "router bgp 65199", wanted[spine])  # resets every session of the spine
        record = ChangeRecord(state, "drained")
        record.begin(base, commit=True, rollback_to=None)
        drained = RolloutOptions(commit=True, post_check_s=30, post_check_hold_s=2.0, drain=True, drain_timeout_s=40)

        def progress(device: str, step: str) -> None:
            steps.append(f"{device}: {step}")
            if device == spine and step.startswith("drained"):
                drained_rates.append(busiest_spine(plan, [spine], 2.0)[1])

        started = time.monotonic()
        results = push_fabric(plan, wanted, access, drained, progress, change="drained", record=record)
        elapsed = time.monotonic() - started
    finally:
        counted = flood.stop()
    result = next(r for r in results if r.device == spine)
    assert (result.committed, result.error) == (True, None), steps
    assert counted.sent > 100 * elapsed, counted
    assert counted.lost == 0, (counted, steps)
    print(f"{spine} change drained: {elapsed:.1f} s, {counted}, {rate} -> {drained_rates} packets/s through it", *steps, sep="\n")
    assert len(drained_rates) == 1
    assert drained_rates[0] < rate / 10, f"{spine} forwarded {rate} packets/s before the drain, {drained_rates[0]} drained (BGP, BFD only)"
    events = [json.loads(line) for line in (state / "changes" / "drained" / "drain.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(e["device"], e["event"]) for e in events] == [(spine, "draining"), (spine, "drained"), (spine, "undrained")]
    assert "router bgp 65199" in result.diff[0] or any("router bgp 65199" in line for line in result.diff)
    assert elapsed < 150, elapsed
    verdicts = verify_fabric(plan, wanted, access, wait_s=30, hold=2)
    assert all(v.ok for v in verdicts), [(v.device, v.drift, v.problems) for v in verdicts if not v.ok]  # undrained, saved


def test_drain_is_refused_for_a_nos_without_a_checked_policy(plan: ClusterPlan) -> None:
    from fabric.apply.drain import refuse_undrainable

    with pytest.raises(DrainError, match=r"no checked drain policy for leaf01 \(eos\), spine01 \(nxos\)"):
        refuse_undrainable({"leaf01": "eos", "spine01": "nxos", "spine02": "frr"})


def test_a_loss_only_the_neighbours_see_fails_the_post_check_and_is_rolled_back(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    lab, state = twin
    access = twin_access(lab)
    base = definition(state, plan.name)
    _, first = push_and_record(plan, base, state, access, RolloutOptions(commit=True, post_check_s=30, post_check_hold_s=1.0), progress=QUIET)
    assert all(r.committed for r in first), [r.error for r in first]
    verdicts = verify_fabric(plan, candidates(plan), access, wait_s=60, hold=2)
    assert all(v.ok for v in verdicts), [(v.device, v.drift, v.problems) for v in verdicts if not v.ok]
    # spine01 stops announcing leaf02's first host subnet: its own table and sessions stay whole, leaf01 loses a path
    rendered = candidates(plan)
    hiding = rendered["spine01"].replace(
        "route-map FABRIC-OUT permit 10\n",
        "ip prefix-list GF-HIDE seq 5 permit 10.100.0.4/31\n!\nroute-map FABRIC-OUT deny 5\n match ip address prefix-list GF-HIDE\nexit\n!\n"
        "route-map FABRIC-OUT permit 10\n",
    )
    assert hiding != rendered["spine01"]

    def push(check: bool, *, drain: bool = False) -> PushResult:
        record = ChangeRecord(state, f"hide-{check}-{drain}")
        record.begin(base, commit=True, rollback_to=None)
        options = RolloutOptions(commit=True, post_check_s=20, post_check_hold_s=6.0, neighbour_check=check, drain=drain, drain_timeout_s=20)
        return next(r for r in push_fabric(plan, {**rendered, "spine01": hiding}, access, options, QUIET, change=record.change, record=record)
                    if r.device == "spine01")  # fmt: skip

    caught = push(check=True)
    assert caught.error is not None
    assert "post-check failed: leaf01: route 10.100.0.4/31: 1 next hops, 2 before the change" in caught.error
    assert (caught.committed, caught.rolled_back) == (False, True)
    assert "GF-HIDE" not in routes_and_config(lab, "spine01")[1]
    assert all(v.ok for v in verify_fabric(plan, rendered, access, wait_s=30, hold=2)), "leaf01 has both paths back"

    # drained, the neighbours route around spine01 anyway: the loss shows only once it is undrained, and is rolled back then
    late = push(check=True, drain=True)
    assert late.error is not None
    assert "undrained, but neighbours did not take the traffic back: leaf01: route 10.100.0.4/31: 1 next hops, 2 before" in late.error
    assert (late.committed, late.rolled_back) == (False, True)
    events = [json.loads(line)["event"] for line in (state / "changes" / "hide-True-True" / "drain.jsonl").read_text(encoding="utf-8").splitlines()]
    assert events == ["draining", "drained", "undrained", "rolling back"]
    running = routes_and_config(lab, "spine01")[1]
    assert "GF-HIDE" not in running
    assert "graceful-shutdown" not in running
    assert all(v.ok for v in verify_fabric(plan, rendered, access, wait_s=30, hold=2)), "undrained, restored, both paths back"

    missed = push(check=False)  # the control: the switch's own post-check sees nothing wrong
    assert (missed.committed, missed.error) == (True, None)
    deadline = time.monotonic() + 20
    while routes_and_config(lab, "leaf01")[0].get("10.100.0.4/31") != 1 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert routes_and_config(lab, "leaf01")[0].get("10.100.0.4/31") == 1


def routes_and_config(lab: LabState, name: str) -> tuple[dict[str, int], str]:
    session = open_session(twin_access(lab)[name], FRR)
    try:
        return FRR.routes(session), FRR.running(session)
    finally:
        session.disconnect()
