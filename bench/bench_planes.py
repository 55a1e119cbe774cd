"""Multi-plane benchmark: a 100,352-GPU cluster (12,544 DGX B300 nodes) on two (or four) three-tier SN5600 planes.

The nodes: ``dgx-b300-eth``, 8 ConnectX-8 SuperNICs of 2 x 400GbE each (16 compute ports), the DGX SuperPOD B300
twin-planar split: port 1 of every SuperNIC to plane 1, port 2 to plane 2 (``plane_split: port``; with ``--planes 4``
each NIC goes whole to plane ``n % 4 + 1``, ``plane_split: nic``, since a two-port NIC cannot split four ways).
Each plane is the three-tier fabric of ``bench/bench_tiers.py``: rail-optimized scalable units of 64 nodes (one 64 x
400G rail leaf per rail, 32 x 800G uplinks), pods of as many units as a 64-port spine's 32 downlinks take, and
super-spines of 64 x 800G; the planner sizes every tier (no count is forced). Two planes: per plane 1,568 leaves,
1,568 spines in 49 pods, 1,024 super-spines (49 of 64 ports used), 100,352 host cables; 8,320 switches in all.
The pools are the only sizes given: they must hold the 100k case (the planner names the pool a case outgrows).

Every run is a fresh process (interpreter start, imports, every file written), timed with its own rusage (the
child and the worker processes it waited for):
- ``plan``:    ``python -m fabric plan FILE`` (validate, plan every plane, the summary tables);
- ``configs``: the switch configs alone (validate, plan, facts, render, write), as ``bench/bench_render.py`` times them;
- ``render``:  ``python -m fabric render FILE -o DIR`` (configs, cabling, diagrams per plane, plan.json).
Prints wall and CPU seconds (user + system), peak RSS, files and MB written, and the load average before and after.
Usage: .venv/bin/python bench/bench_planes.py [--planes 2] [--nodes 12544] [--repeat 1] [--runs plan configs render]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_tiers import run  # noqa: E402 - one fresh-process timer for every tier benchmark

NODES_100K = 12544  # x 8 GPUs = 100,352

DEFINITION = """name: planes{planes}
target: onprem
planes:
  compute: {{transport: roce, cidr: 10.0.0.0/12, mtu: 9000, max_ports_per_node: 16}}
  storage: {{cidr: 10.16.0.0/16, mtu: 9000}}
  inband: {{cidr: 10.17.0.0/16, gateway: 10.17.0.1}}
  oob: {{cidr: 10.18.0.0/16, gateway: 10.18.0.1}}
fabric:
  topology: rail-optimized
  planes: {planes}
  plane_split: {split}
  plane_spines: separate
  leaf: {{model: sn5600, nos: {nos}}}
  spine: {{model: sn5600, nos: {nos}}}
  super_spine: {{model: sn5600, nos: {nos}, p2p_pool: 10.64.0.0/12}}
  su_size: 64
  uplink_speed_gbps: 800
  underlay: {{loopback_pool: 10.255.0.0/16, p2p_pool: 10.48.0.0/12, leaf_asn_base: 4200000001, leaf_loopback_offset: 4096}}
  management: {{mgmt_pool: 10.18.192.0/18, mgmt_leaf_offset: 6144, ntp_servers: [10.17.0.10], syslog_servers: [10.17.0.20]}}
nodes:
  - {{group: gpu, role: gpu, count: {nodes}, hostname: "gpu{{index:05d}}", hardware: dgx-b300-eth}}
"""
# Pool sizes, two planes, 12,544 nodes (each pool splits into one block per plane, docs/definition/planes.md):
# - underlay.p2p_pool /12: a leaf's /31s are keyed by its id, one per radix port (128 on a 400G-breakout SN5600):
#   1,568 leaves a plane need 401,408 addresses, the /13 that is a plane's half of a /12;
# - super_spine.p2p_pool /12: keyed the same way by the 1,568 spines a plane (64 ports: 200,704 addresses, a /14 would do);
# - loopbacks: 2,592 spines and super-spines a plane below leaf_loopback_offset 4096, 1,568 leaves above, in a /17;
# - mgmt_pool /18: 8,320 switches (spines from 1, leaves from 6144); the oob plane's nodes sit below it.


def definition(nodes: int = NODES_100K, planes: int = 2, nos: str = "cumulus") -> str:
    """The benchmark's cluster definition.

    Args:
        nodes: DGX B300 nodes (8 GPUs each); 12,544 is the 100,352-GPU case.
        planes: Parallel compute planes: 2 (one SuperNIC port each) or 4 (two SuperNICs each).
        nos: The NOS of every tier (SN5600 runs cumulus and sonic).

    Returns:
        The definition's YAML text.

    Example:
        >>> "plane_split: port" in definition(256) and "plane_split: nic" in definition(256, planes=4)
        True
    """
    split = "port" if planes <= 2 else "nic"
    return DEFINITION.format(planes=planes, split=split, nos=nos, nodes=nodes)


def load() -> str:
    """The 1, 5 and 15 minute load averages."""
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description="The 100k-GPU multi-plane three-tier cluster: plan, configs, render.")
    parser.add_argument("--planes", type=int, default=2, choices=(2, 4))
    parser.add_argument("--nodes", type=int, default=NODES_100K)
    parser.add_argument("--nos", default="cumulus", choices=("cumulus", "sonic"))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--runs", nargs="*", default=["plan", "configs", "render"], choices=("plan", "configs", "render"))
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "fabric")], check=True)
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "planes" / "cluster.yaml"
        path.parent.mkdir()
        path.write_text(definition(args.nodes, args.planes, args.nos), encoding="utf-8")
        out = Path(tmp) / "out"
        commands = {
            "plan": ([py, "-m", "fabric", "plan", str(path)], None),
            "configs": ([py, str(ROOT / "bench" / "bench_render.py"), "--configs", str(path), str(out / "configs")], out / "configs"),
            "render": ([py, "-m", "fabric", "render", str(path), "-o", str(out / "render")], out / "render"),
        }
        print(f"{args.nodes:,} nodes ({args.nodes * 8:,} GPUs), {args.planes} planes, {args.nos} on sn5600; median of {args.repeat}")
        print(f"load average before: {load()}")
        print("| run | wall s | CPU s | peak MiB | files | output MB |")
        print("|---|---|---|---|---|---|")
        for name in args.runs:
            command, target = commands[name]
            runs = [run(command, target) for _ in range(args.repeat)]
            wall, cpu = statistics.median(r["s"] for r in runs), statistics.median(r["cpu"] for r in runs)
            mib = max(r["mib"] for r in runs)
            print(f"| {name} | {wall:.2f} | {cpu:.2f} | {mib:.0f} | {runs[0]['files']:,.0f} | {runs[0]['mb']:.1f} |", flush=True)
        print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
