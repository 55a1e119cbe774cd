"""Twin benchmark (root): a 40-switch twin (8 spines × 32 leaves by default), push at several parallelisms, verify to a
stable fabric, and the traffic lost during a spine change without drain.

For each --parallel value a fresh twin is built, then:
- push --commit (canary spine, canary leaf, then batches), each switch in its own transaction with the post-checks
  (BGP, routes, hold time, fresh login);
- verify until the fabric is clean for 3 consecutive samples (BGP up, planned ECMP width, MTUs, no drift);
- a second push (nothing to change: the cost of the read and diff path);
- after the last one, a change on spine01 that resets its sessions (a new ASN) while a ping flood runs between racks:
  the packets lost without drain, then the same kind of change (the ASN back) with ``push --drain``: loss and time.
Usage: ./dev bench   (or: python bench/bench_push.py [--spines 8] [--leaves 32] [--parallel 1,4,8])
"""

from __future__ import annotations

import argparse
import re
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from fabric.apply.checks.verify import verify_fabric
from fabric.apply.push import candidates, push_and_record
from fabric.apply.record import ChangeRecord
from fabric.apply.rollout import RolloutOptions, push_fabric
from fabric.apply.session import DeviceAccess
from fabric.model import ClusterSpec
from fabric.plan import ClusterPlan, plan_cluster
from fabric.twin.access import twin_access
from fabric.twin.lab import lab_down, lab_namespaces, lab_up
from fabric.twin.traffic import Flood, cross_rack_pairs

ROOT = Path(__file__).resolve().parent.parent
QUIET = lambda *_: None  # noqa: E731 - a progress sink


def definition(spines: int, leaves: int) -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "inventories" / "lab" / "cluster.yaml").read_text(encoding="utf-8"))
    data["name"] = "gfbench"
    data["fabric"]["spines"] = spines
    data["fabric"]["uplinks_per_leaf"] = spines
    data["nodes"][0]["count"] = leaves * data["fabric"]["host_ports_per_leaf"]
    return data


def spine_change_loss(
    plan: ClusterPlan, state: Path, definition_file: Path, access: Mapping[str, DeviceAccess], *, asn: int, drain: bool
) -> tuple[float, str]:
    """Push ASN ``asn`` to spine01 alone (every session of it resets) while pinging every 10 ms between node pairs of
    different racks (up to 16 flows, hashed onto different spines); (push seconds, packets sent/lost over all flows)."""
    flood = Flood(plan, pairs=cross_rack_pairs(plan), interval_s=0.01)
    try:
        time.sleep(2)
        wanted = candidates(plan)
        wanted["spine01"] = re.sub(r"router bgp \d+", f"router bgp {asn}", wanted["spine01"])
        change = f"spine-change-{'drained' if drain else 'undrained'}"
        record = ChangeRecord(state, change)
        record.begin(definition_file, commit=True, rollback_to=None)
        t0 = time.perf_counter()
        results = push_fabric(plan, wanted, access, RolloutOptions(commit=True, drain=drain), QUIET, change=change, record=record)
        pushed = time.perf_counter() - t0
        assert all(not r.error for r in results), [r.error for r in results if r.error]
        time.sleep(2)
    finally:
        got = flood.stop()
    return pushed, f"{got.flows} flows, {got.sent} sent, {got.lost} lost ({100 * got.lost / max(1, got.sent):.2f} %)"


def one(data: dict[str, Any], parallel: int, *, loss: bool) -> dict[str, Any]:
    plan = plan_cluster(ClusterSpec.model_validate(data))
    state = ROOT / ".gpufabric" / "bench" / f"p{parallel}"
    shutil.rmtree(state, ignore_errors=True)
    state.mkdir(parents=True)
    t0 = time.perf_counter()
    lab = lab_up(plan, state)  # first: the twin takes only a new or empty directory
    definition_file = state / "cluster.yaml"
    definition_file.write_text(yaml.safe_dump(data), encoding="utf-8")
    row: dict[str, Any] = {"switches": len(lab.switches), "parallel": parallel, "up": time.perf_counter() - t0}
    try:
        access = twin_access(lab)
        options = RolloutOptions(commit=True, parallel=parallel, deadline_s=300)
        t1 = time.perf_counter()
        _, results = push_and_record(plan, definition_file, state, access, options, progress=QUIET)
        row["push"] = time.perf_counter() - t1
        assert all(r.committed for r in results), [r.error for r in results if r.error]
        t2 = time.perf_counter()
        verdicts = verify_fabric(plan, candidates(plan), access, wait_s=300, hold=3)
        row["stable"] = time.perf_counter() - t2
        assert all(v.ok for v in verdicts), [(v.device, v.problems) for v in verdicts if not v.ok]
        t3 = time.perf_counter()
        push_and_record(plan, definition_file, state, access, options, progress=QUIET)
        row["repush"] = time.perf_counter() - t3
        if loss:
            row["spine_push"], row["loss"] = spine_change_loss(plan, state, definition_file, access, asn=65199, drain=False)
            row["drained_push"], row["drained_loss"] = spine_change_loss(plan, state, definition_file, access, asn=65100, drain=True)
    finally:
        t4 = time.perf_counter()
        lab_down(plan.name, state, lab_namespaces(plan))
        row["down"] = time.perf_counter() - t4
        shutil.rmtree(state, ignore_errors=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--spines", type=int, default=8)
    parser.add_argument("--leaves", type=int, default=32)
    parser.add_argument("--parallel", default="1,4,8", help="batch sizes after the canaries")
    args = parser.parse_args()
    data = definition(args.spines, args.leaves)
    levels = [int(p) for p in args.parallel.split(",")]
    print(f"{'switches':>8} {'parallel':>8} {'lab up':>7} {'push':>7} {'stable':>7} {'re-push':>7} {'down':>6}  (seconds)")
    for index, parallel in enumerate(levels):
        r = one(data, parallel, loss=index == len(levels) - 1)
        print(
            f"{r['switches']:>8} {parallel:>8} {r['up']:>7.1f} {r['push']:>7.1f} {r['stable']:>7.1f} {r['repush']:>7.1f} {r['down']:>6.1f}",
            flush=True,
        )
        if "loss" in r:
            print(f"spine01 change without drain: pushed in {r['spine_push']:.1f} s; ping every 10 ms: {r['loss']}", flush=True)
            print(f"spine01 change with --drain:  pushed in {r['drained_push']:.1f} s; ping every 10 ms: {r['drained_loss']}", flush=True)


if __name__ == "__main__":
    main()
