"""Planner benchmark: load + validate + plan rail-optimized RoCE clusters of 64, 512 and 2048 HGX H100 nodes (16k GPUs).

The nodes have 4 x 400G rails (hgx-h100-4x400): 2048 of them fill a two-tier SN5600 fabric exactly (128 leaves, 64 spines);
eight-rail DGX nodes at that scale need a third tier, which the planner refuses with a clear error.

Each size runs in a fresh process so peak RSS is that size's own. Prints wall time per stage and peak memory.
Usage: ./dev bench   (or: python bench/bench_plan.py [--sizes 64,512,2048] [--repeat 3])
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._clusters import rail_optimized  # noqa: E402 - the planes every benchmark shares

FABRIC = """  leaf: {model: sn5600, nos: sonic}
  spine: {model: sn5600, nos: sonic}
  su_size: 64
  underlay: {loopback_pool: 10.255.0.0/16, p2p_pool: 10.254.0.0/16, leaf_asn_base: 4200000001}
"""


def cluster_yaml(count: int) -> str:
    """The benchmark cluster of ``count`` four-rail GPU nodes and 16 storage servers."""
    return rail_optimized(
        "bench",
        FABRIC,
        f'  - {{group: gpu, role: gpu, count: {count}, hostname: "gpu{{index:05d}}", hardware: hgx-h100-4x400}}\n'
        '  - {group: stor, role: storage, count: 16, hostname: "stor{index:02d}", hardware: storage-server, id_offset: 10000}\n',
    )


def one(nodes: int) -> dict[str, float]:
    """Time one size in this process (called in a child)."""
    t0 = time.perf_counter()
    from fabric.model.loader import parse_cluster
    from fabric.plan import check_cluster, plan_cluster
    from fabric.plan.serialize import plan_to_json

    t_import = time.perf_counter()
    text = cluster_yaml(nodes)
    spec, _ = parse_cluster(text, "bench.yaml")
    t_load = time.perf_counter()
    findings = check_cluster(spec)
    assert not [f for f in findings if f.severity == "error"], findings
    t_check = time.perf_counter()
    plan = plan_cluster(spec)
    t_plan = time.perf_counter()
    size = len(plan_to_json(plan))
    t_json = time.perf_counter()
    assert plan.fabric is not None
    return {
        "nodes": nodes,
        "gpus": sum(n.gpus for n in plan.nodes),
        "switches": len(plan.fabric.switches),
        "links": len(plan.fabric.links),
        "import_s": t_import - t0,
        "load_s": t_load - t_import,
        "check_s": t_check - t_load,
        "plan_s": t_plan - t_check,
        "json_s": t_json - t_plan,
        "total_s": t_plan - t_import,
        "json_bytes": size,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="64,512,2048")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        sys.stdout.write(json.dumps(one(args.one)) + "\n")
        return
    print(
        f"{'nodes':>6} {'GPUs':>6} {'switches':>8} {'links':>6} {'load s':>7} {'check s':>7} {'plan s':>7} "
        f"{'load+plan s':>11} {'json s':>7} {'peak MiB':>8}"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        runs = [
            json.loads(
                subprocess.run(
                    [sys.executable, __file__, "--one", str(size)],
                    cwd=ROOT,
                    capture_output=True,
                    text=True,
                    check=True,
                    env={"PYTHONPATH": str(ROOT)},
                ).stdout
            )
            for _ in range(args.repeat)
        ]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(
            f"{int(med['nodes']):>6} {int(med['gpus']):>6} {int(med['switches']):>8} {int(med['links']):>6} {med['load_s']:>7.3f} "
            f"{med['check_s']:>7.3f} {med['plan_s']:>7.3f} {med['total_s']:>11.3f} {med['json_s']:>7.3f} {med['peak_rss_mib']:>8.1f}"
        )


if __name__ == "__main__":
    main()
