"""Twin benchmark (root): lab up, full push, convergence and teardown, and push time vs fabric size and parallelism.

For each size (nodes → leaves; 2 spines) a fresh twin is built from the lab definition, then:
- push --commit with the given --parallel (canary spine, canary leaf, then batches), each switch in its own
  transaction with the BGP post-check;
- verify --wait until every switch runs the plan with BGP up, full ECMP and the right MTUs (convergence);
- a second push (nothing to change: the cost of the read-only path).
Usage: ./dev bench   (or: python bench/bench_push.py [--sizes 4,8,16] [--parallel 1,4])
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

import yaml

from fabric.apply.cli import candidates, push_and_record
from fabric.apply.lab import lab_down, lab_up
from fabric.apply.rollout import RolloutOptions, lab_access
from fabric.apply.verify import verify_fabric
from fabric.model import ClusterSpec
from fabric.plan import plan_cluster

ROOT = Path(__file__).resolve().parent.parent


def one(nodes: int, parallel: int) -> dict[str, float | int]:
    data = yaml.safe_load((ROOT / "inventories" / "lab" / "cluster.yaml").read_text(encoding="utf-8"))
    data["name"] = "gfbench"
    data["nodes"][0]["count"] = nodes
    plan = plan_cluster(ClusterSpec.model_validate(data))
    state = ROOT / ".gpufabric" / "bench" / f"n{nodes}-p{parallel}"
    shutil.rmtree(state, ignore_errors=True)
    definition = state / "cluster.yaml"
    state.mkdir(parents=True)
    definition.write_text(yaml.safe_dump(data), encoding="utf-8")
    t0 = time.perf_counter()
    lab = lab_up(plan, state)
    try:
        t1 = time.perf_counter()
        access = lab_access(lab)
        _, results = push_and_record(plan, definition, state, access, RolloutOptions(commit=True, parallel=parallel), progress=lambda *_: None)
        t2 = time.perf_counter()
        assert all(r.committed for r in results), [r.error for r in results if r.error]
        verdicts = verify_fabric(plan, candidates(plan), access, wait_s=120)
        t3 = time.perf_counter()
        assert all(v.ok for v in verdicts), [(v.device, v.problems) for v in verdicts if not v.ok]
        push_and_record(plan, definition, state, access, RolloutOptions(commit=True, parallel=parallel), progress=lambda *_: None)
        t4 = time.perf_counter()
    finally:
        lab_down(plan.name, state)
    t5 = time.perf_counter()
    shutil.rmtree(state, ignore_errors=True)
    return {"switches": len(lab.switches), "up": t1 - t0, "push": t2 - t1, "converge": t3 - t2, "repush": t4 - t3, "down": t5 - t4}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="4,8,16", help="node counts (2 nodes per leaf)")
    parser.add_argument("--parallel", default="1,4", help="batch sizes after the canaries")
    args = parser.parse_args()
    print(f"{'nodes':>5} {'switches':>8} {'parallel':>8} {'lab up':>7} {'push':>7} {'converge':>8} {'re-push':>7} {'down':>6}  (seconds)")
    for nodes in (int(n) for n in args.sizes.split(",")):
        for parallel in (int(p) for p in args.parallel.split(",")):
            r = one(nodes, parallel)
            times = f"{r['up']:>7.2f} {r['push']:>7.2f} {r['converge']:>8.2f} {r['repush']:>7.2f} {r['down']:>6.2f}"
            print(f"{nodes:>5} {r['switches']:>8} {parallel:>8} {times}", flush=True)


if __name__ == "__main__":
    main()
