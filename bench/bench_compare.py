"""Two checkouts, one command, run alternately: the before/after of a change on a machine others load.

On a shared machine a wall time moves with the load from one minute to the next, so a before and an after taken
minutes apart compare the load as much as the change. This runs the same command from two checkouts (say a worktree
of the base commit and this one) one after the other, ``--repeat`` pairs, each a fresh process with this venv's
Python, and prints per checkout the median wall and CPU seconds (user + system, workers included) and the worst peak
RSS, with the load average at the start and the end.

Usage (the definitions are bench_render.py's and bench_tiers.py's cases, written to a temporary directory):
    git worktree add /tmp/base 4ad9e3e
    .venv/bin/python bench/bench_compare.py /tmp/base . --case eos-16x128 --repeat 7
    .venv/bin/python bench/bench_compare.py /tmp/base . --case c32k --run configs
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._clusters import rail_optimized  # noqa: E402 - the planes every benchmark shares
from bench.bench_render import SONIC_2048, eos_fabric  # noqa: E402
from bench.bench_tiers import FABRIC, NODES  # noqa: E402


def definitions() -> dict[str, str]:
    """Every case by name: bench_render.py's EOS fabrics and 2048-node SONiC cluster, bench_tiers.py's 4,096 nodes."""
    cases = {f"eos-{s}x{n}": eos_fabric(s, n) for s, n in ((2, 8), (16, 128), (32, 128))} | {"sonic-2048": SONIC_2048}
    return cases | {"c32k": rail_optimized("c32k", FABRIC.format(nos="cumulus"), NODES.format(count=4096))}


def once(command: list[str], cwd: Path, target: Path) -> dict[str, float]:
    """One fresh process in ``cwd``: wall s, CPU s (its own and its children's), peak RSS MiB."""
    shutil.rmtree(target, ignore_errors=True)
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status):
        stderr = child.stderr.read().decode() if child.stderr else ""
        msg = f"{' '.join(command)} in {cwd} failed: {stderr[-2000:]}"
        raise SystemExit(msg)
    return {"s": wall, "cpu": usage.ru_utime + usage.ru_stime, "mib": usage.ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description="The same command from two checkouts, alternately; medians.")
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--case", default="eos-16x128", choices=sorted(definitions()))
    parser.add_argument("--run", default="render", choices=("render", "configs", "plan"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    checkouts = {"before": args.before.resolve(), "after": args.after.resolve()}
    for checkout in checkouts.values():  # bytecode as pip leaves it at install
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(checkout / "fabric")], check=True)
    results: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as tmp:
        definition = Path(tmp) / args.case / "cluster.yaml"
        definition.parent.mkdir()
        definition.write_text(definitions()[args.case], encoding="utf-8")
        out = Path(tmp) / "out"
        for i in range(args.repeat):
            for name in checkouts if i % 2 == 0 else reversed(checkouts):  # each goes first half the time
                checkout = checkouts[name]
                commands = {
                    "render": [sys.executable, "-m", "fabric", "render", str(definition), "-o", str(out)],
                    "configs": [sys.executable, str(checkout / "bench" / "bench_render.py"), "--configs", str(definition), str(out)],
                    "plan": [sys.executable, "-m", "fabric", "plan", str(definition)],
                }
                results[name].append(once(commands[args.run], checkout, out))
    end = os.getloadavg()
    shown = [" ".join(f"{v:.2f}" for v in avg) for avg in (load, end)]
    print(f"{args.run} {args.case}, {args.repeat} alternating pairs; load average (1, 5, 15 min) {shown[0]} at the start, {shown[1]} at the end")
    print("| checkout | median wall s | median CPU s | peak MiB | walls |")
    print("|---|---|---|---|---|")
    for name, runs in results.items():
        walls = " ".join(f"{r['s']:.2f}" for r in runs)
        wall, cpu = statistics.median(r["s"] for r in runs), statistics.median(r["cpu"] for r in runs)
        print(f"| {name} ({checkouts[name]}) | {wall:.3f} | {cpu:.3f} | {max(r['mib'] for r in runs):.0f} | {walls} |")


if __name__ == "__main__":
    main()
