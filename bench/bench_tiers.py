"""Three-tier benchmark: a 32,768-GPU cluster (4,096 eight-rail DGX H100 nodes) on SN5600 leaves, spines and super-spines.

The fabric: rail-optimized scalable units of 64 nodes (8 rail leaves of 64 x 400G host ports, 32 x 800G uplinks),
16 pods of 4 units (32 leaves + 32 spines), 32 super-spine planes of 8: 512 leaves, 512 spines, 256 super-spines,
32,768 host cables, 16,384 leaf-spine and 16,384 spine-super-spine cables, 1:1 at every tier.

Every run is a fresh process (interpreter start, imports, every file written), timed with its own rusage:
- ``plan``:    ``python -m fabric plan FILE`` (validate, plan, the summary tables);
- ``configs``: the switch configs alone (validate, plan, facts, render, write), as ``bench/bench_render.py`` times them;
- ``render``:  ``python -m fabric render FILE -o DIR`` (configs, cabling, diagram, plan.json);
- ``inventory``: ``ansible-inventory -i FILE --list`` through the gpufabric inventory plugin.
Prints wall and CPU seconds (user + system: what the run costs when other jobs share the cores), peak RSS and output.
EOS runs on 7060X6-64PE (64 x 800G: 400G hosts as 2 x 400G breakouts); SONiC runs one speed per switch, so its uplinks
are 400G too (64 leaves + 64 spines a pod, 8 pods, 256 super-spines: 32,768 cables per tier).
Usage: .venv/bin/python bench/bench_tiers.py [--nos cumulus] [--repeat 1] [--runs plan configs render inventory]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))

from bench._clusters import rail_optimized  # noqa: E402 - the planes every benchmark shares
from bench._runs import set_aside  # noqa: E402 - no run pays for the inodes the last one deleted

TARGETS = {"configs": (2.5, 300), "inventory": (10.0, None)}  # issues 18 and 36: seconds, MiB

FABRIC = """  leaf: {{model: sn5600, nos: {nos}}}
  spine: {{model: sn5600, nos: {nos}}}
  super_spine: {{model: sn5600, nos: {nos}}}
  su_size: 64
  uplink_speed_gbps: 800
  underlay: {{loopback_pool: 10.255.0.0/16, p2p_pool: 10.240.0.0/14, leaf_asn_base: 4200000001, leaf_loopback_offset: 1024}}
  management: {{mgmt_pool: 10.18.240.0/20, mgmt_leaf_offset: 1024, ntp_servers: [10.17.0.10], syslog_servers: [10.17.0.20]}}
"""
NODES = '  - {{group: gpu, role: gpu, count: {count}, hostname: "gpu{{index:05d}}", hardware: dgx-h100}}\n'


def run(command: list[str], target: Path | None) -> dict[str, float]:
    """One fresh process: wall and CPU seconds, its own peak RSS (MiB), the MB it wrote (to ``target`` or stdout), its files."""
    if target is not None:
        set_aside(target)
    env = {**os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status):
            stderr = child.stderr.read().decode() if child.stderr else ""
            msg = f"{' '.join(command)} failed: {stderr[-2000:]}"
            raise SystemExit(msg)
        files = [] if target is None else [p for p in target.rglob("*") if p.is_file()]
        written = out.tell() if target is None else sum(p.stat().st_size for p in files)
    return {"s": wall, "cpu": usage.ru_utime + usage.ru_stime, "mib": usage.ru_maxrss / 1024, "mb": written / 1e6, "files": len(files)}


def main() -> None:
    parser = argparse.ArgumentParser(description="The 32,768-GPU three-tier cluster: plan, configs, render, inventory.")
    parser.add_argument("--nos", default="cumulus", choices=("cumulus", "eos", "sonic"))
    parser.add_argument("--nodes", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--runs", nargs="*", default=["plan", "configs", "render", "inventory"])
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "fabric")], check=True)
    py = sys.executable
    model = "7060x6-64pe" if args.nos == "eos" else "sn5600"
    with tempfile.TemporaryDirectory() as tmp:
        definition = Path(tmp) / "c32k" / "cluster.yaml"
        definition.parent.mkdir()
        text = rail_optimized("c32k", FABRIC.format(nos=args.nos), NODES.format(count=args.nodes)).replace("sn5600", model)
        if args.nos == "sonic":  # one SKU, one speed per switch: 400G uplinks too (64 spines and 64 leaves a pod, 8 pods)
            text = text.replace("  uplink_speed_gbps: 800\n", "")
        definition.write_text(text, encoding="utf-8")
        out = Path(tmp) / "out"
        commands = {
            "plan": ([py, "-m", "fabric", "plan", str(definition)], None),
            "configs": ([py, str(ROOT / "bench" / "bench_render.py"), "--configs", str(definition), str(out / "configs")], out / "configs"),
            "render": ([py, "-m", "fabric", "render", str(definition), "-o", str(out / "render")], out / "render"),
            "inventory": ([str(BIN / "ansible-inventory"), "-i", str(definition), "--list"], None),
        }
        print(f"{args.nodes} nodes ({args.nodes * 8:,} GPUs), {args.nos} on {model}; median of {args.repeat}")
        print("| run | wall s | CPU s | peak MiB | output MB | target |")
        print("|---|---|---|---|---|---|")
        for name in args.runs:
            command, target = commands[name]
            runs = [run(command, target) for _ in range(args.repeat)]
            wall, cpu = statistics.median(r["s"] for r in runs), statistics.median(r["cpu"] for r in runs)
            seconds, mib = TARGETS.get(name, (None, None))
            goal = " / ".join(x for x in (f"< {seconds:g} s" if seconds else "", f"< {mib} MiB" if mib else "") if x) or "-"
            print(f"| {name} | {wall:.2f} | {cpu:.2f} | {max(r['mib'] for r in runs):.0f} | {runs[0]['mb']:.1f} | {goal} |", flush=True)


if __name__ == "__main__":
    main()
