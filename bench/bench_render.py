"""Render benchmark, end to end from the YAML: load + validate + plan + facts + render every switch config.

Two cases, each in a fresh process (so peak RSS is its own), median wall time of --repeat runs:
- eos-16x128: a 16-spine x 128-leaf RoCE fat-tree (32 x 400G host ports per leaf, eBGP underlay, QoS on every port),
  rendered to Arista EOS text for all 144 switches. Reference: pyavd 6.4.0 needs ~23 s and ~1.2 GiB for this fabric on
  2 cores (shared/reference/perf-anchor.md).
- sonic-2048: the 2048-node rail-optimized cluster (4 x 400G rails, 192 SN5600 switches) rendered to SONiC config_db + FRR.
Usage: ./dev bench   (or: python bench/bench_render.py [--repeat 3])
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

COMMON = """target: onprem
planes:
  compute: {transport: roce, cidr: 10.0.0.0/12, mtu: 9000}
  storage: {cidr: 10.16.0.0/16, mtu: 9000}
  inband: {cidr: 10.17.0.0/16, gateway: 10.17.0.1}
  oob: {cidr: 10.18.0.0/16, gateway: 10.18.0.1}
"""
CASES = {
    "eos-16x128": "name: eos16x128\n"
    + COMMON.replace("mtu: 9000}", "mtu: 9000, max_ports_per_node: 4}", 1)
    + """fabric:
  topology: fat-tree
  leaf: {model: 7060x5-64s, nos: eos}
  spine: {model: 7060x6-64pe, nos: eos}
  su_size: 8
  host_ports_per_leaf: 32
  uplinks_per_leaf: 16
  spines: 16
  oversubscription: "2:1"
  underlay: {loopback_pool: 10.255.0.0/16, p2p_pool: 10.254.0.0/16, leaf_asn_base: 4200000001}
  management: {ntp_servers: [10.17.0.10], syslog_servers: [10.17.0.20]}
nodes:
  - {group: gpu, role: gpu, count: 1024, hostname: "gpu{index:05d}", hardware: hgx-h100-4x400}
""",
    "sonic-2048": "name: sonic2048\n"
    + COMMON
    + """fabric:
  topology: rail-optimized
  leaf: {model: sn5600, nos: sonic}
  spine: {model: sn5600, nos: sonic}
  su_size: 64
  underlay: {loopback_pool: 10.255.0.0/16, p2p_pool: 10.254.0.0/16, leaf_asn_base: 4200000001}
nodes:
  - {group: gpu, role: gpu, count: 2048, hostname: "gpu{index:05d}", hardware: hgx-h100-4x400}
  - {group: stor, role: storage, count: 16, hostname: "stor{index:02d}", hardware: storage-server, id_offset: 10000}
""",
}


def one(case: str) -> dict[str, object]:
    """Time one case in this process (called in a child)."""
    t0 = time.perf_counter()
    from fabric.model.loader import parse_cluster
    from fabric.plan import plan_cluster
    from fabric.plan.facts import build_switch_facts
    from fabric.render import render_switch

    t_import = time.perf_counter()
    spec, _ = parse_cluster(CASES[case], f"{case}.yaml")
    plan = plan_cluster(spec)  # runs every rule first
    t_plan = time.perf_counter()
    facts = build_switch_facts(plan)
    files = [text for f in facts for text in render_switch(f).values()]
    t_render = time.perf_counter()
    assert plan.fabric is not None
    return {
        "case": case,
        "switches": len(plan.fabric.switches),
        "ports": sum(len(f.ports) for f in facts),
        "bytes": sum(len(t) for t in files),
        "import_s": t_import - t0,
        "load_validate_plan_s": t_plan - t_import,
        "facts_render_s": t_render - t_plan,
        "total_s": t_render - t_import,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one)))
        return
    print(
        f"{'case':<12} {'switches':>8} {'ports':>7} {'MB out':>7} {'yaml→plan s':>12} {'render s':>9} {'total s':>8} {'+import s':>9} {'peak MiB':>9}"
    )
    for case in CASES:
        runs = [
            json.loads(subprocess.run([sys.executable, __file__, "--one", case], cwd=ROOT, capture_output=True, text=True, check=True).stdout)
            for _ in range(args.repeat)
        ]
        best = sorted(runs, key=lambda r: r["total_s"])[len(runs) // 2]
        print(
            f"{case:<12} {best['switches']:>8} {best['ports']:>7} {best['bytes'] / 1e6:>7.1f} {best['load_validate_plan_s']:>12.3f} "
            f"{best['facts_render_s']:>9.3f} {statistics.median(r['total_s'] for r in runs):>8.3f} "
            f"{statistics.median(r['total_s'] + r['import_s'] for r in runs):>9.3f} {max(r['peak_rss_mib'] for r in runs):>9.0f}"
        )


if __name__ == "__main__":
    main()
