"""Render benchmark, end to end as a user runs it: every run is a fresh process (interpreter start, imports, every file).

Per case, interleaved run by run (so both tools see the same machine load):
- ``render``:  ``python -m fabric render FILE -o DIR`` — switch configs, cabling, diagram, plan.json;
- ``configs``: the switch configs alone (validate, plan, facts, render, write, in render's worker processes:
  ``fabric.cli.render_workers``), this script in a child process;
- ``report``:  ``python -m fabric report FILE -o DIR`` — the HTML page (renders and lints in memory);
- ``plan``:    ``python -m fabric plan FILE`` — validate and plan only; ``render ÷ plan`` (wall and CPU, the ratio of the
  medians and the median of each repeat's pair) is what a full render costs above its plan (issue 36: ≤ 1.5× on
  sonic-2048);
- ``pyavd``:   pyavd 6.4.0 on the same fabric (bench/pyavd_fabric.py) in its own venv, when one exists
  (``./dev bench`` makes ``.venv-pyavd``; or pass ``--pyavd PYTHON``).
Cases: EOS leaf/spine fabrics of S spines x L leaves (32 x 400G routed host ports per leaf, eBGP, the RoCE QoS on every
port: the fabric of shared/reference/perf-anchor.md) and the 2048-node rail-optimized SONiC cluster (project only).
Each run writes into a fresh directory: an earlier run's output is set aside until the end, not deleted
(``bench/_runs.py``: on this machine's journal-less ext4, deleting it made the next run's file creation pay for it).
Figures: median wall time of --repeat runs, the peak RSS of the worst run (``wait4`` rusage of that child alone), the
output in MB and lines, the load average before and after. The pyavd ratio is printed twice: the ratio of the two
medians, and the median of the repeats' own ratios (render and pyavd run back to back in each repeat, so each pair saw
the same load: the steadier figure on a machine others load).

Cost per output MB, case by case: the fixed cost is the median ``render`` of the smallest case run (eos-2x8, 0.2 MB:
interpreter, imports, catalog, validation, template compile, and hardly any output); each other case's render above
it, divided by its output above the smallest one's, is its seconds per MB (and MB per second). Flat across cases means
linear in the output. The ``imports`` row is the floor under the fixed cost: a fresh interpreter that imports what
``render`` imports and does nothing.
Under load: ``--load N`` starts N CPU burners (this script's own children, each ending by itself after
``--load-limit`` seconds, killed by PID when the runs end) ``--load-warmup`` seconds before the first run and keeps them
through every run, so a figure "at load average about 2" has a command (``--load 2``); the 1-minute load average is
sampled before every run and printed (least, median, most).
Usage: ./dev bench   (or: .venv/bin/python bench/bench_render.py [--repeat 3] [--cases ...] [--load 2])
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._runs import set_aside  # noqa: E402 - no run pays for the inodes the last one deleted

PYAVD_PYTHON = ROOT / ".venv-pyavd" / "bin" / "python"
SIZES = ((2, 8), (4, 32), (8, 64), (16, 128), (32, 128))

COMMON = """target: onprem
planes:
  compute: {transport: roce, cidr: 10.0.0.0/12, mtu: 9000, max_ports_per_node: 4}
  storage: {cidr: 10.16.0.0/16, mtu: 9000}
  inband: {cidr: 10.17.0.0/16, gateway: 10.17.0.1}
  oob: {cidr: 10.18.0.0/16, gateway: 10.18.0.1}
"""
SONIC_2048 = """name: sonic2048
target: onprem
planes:
  compute: {transport: roce, cidr: 10.0.0.0/12, mtu: 9000}
  storage: {cidr: 10.16.0.0/16, mtu: 9000}
  inband: {cidr: 10.17.0.0/16, gateway: 10.17.0.1}
  oob: {cidr: 10.18.0.0/16, gateway: 10.18.0.1}
fabric:
  topology: rail-optimized
  leaf: {model: sn5600, nos: sonic}
  spine: {model: sn5600, nos: sonic}
  su_size: 64
  underlay: {loopback_pool: 10.255.0.0/16, p2p_pool: 10.254.0.0/16, leaf_asn_base: 4200000001}
nodes:
  - {group: gpu, role: gpu, count: 2048, hostname: "gpu{index:05d}", hardware: hgx-h100-4x400}
  - {group: stor, role: storage, count: 16, hostname: "stor{index:02d}", hardware: storage-server, id_offset: 10000}
"""


def eos_fabric(spines: int, leaves: int) -> str:
    """S spines x L leaves on EOS: 8 four-port nodes per leaf fill its 32 host ports; one uplink per spine."""
    ratio = 32 / spines
    oversubscription = f"{ratio:g}:1" if ratio >= 1 else f"1:{1 / ratio:g}"
    return (
        f"name: eos{spines}x{leaves}\n{COMMON}fabric:\n  topology: fat-tree\n  leaf: {{model: 7060x5-64s, nos: eos}}\n"
        f"  spine: {{model: 7060x6-64pe, nos: eos}}\n  su_size: 8\n  host_ports_per_leaf: 32\n  uplinks_per_leaf: {spines}\n"
        f'  spines: {spines}\n  oversubscription: "{oversubscription}"\n'
        "  underlay: {loopback_pool: 10.255.0.0/16, p2p_pool: 10.254.0.0/16, leaf_asn_base: 4200000001}\n"
        "  management: {ntp_servers: [10.17.0.10], syslog_servers: [10.17.0.20]}\n"
        f'nodes:\n  - {{group: gpu, role: gpu, count: {leaves * 8}, hostname: "gpu{{index:05d}}", hardware: hgx-h100-4x400}}\n'
    )


def configs_only(definition: Path, target: Path) -> None:
    """The switch configs alone, as ``render`` writes them: in its worker processes (runs in a child: imports count)."""
    sys.path.insert(0, str(ROOT))
    from fabric.cli.output import OutputTree
    from fabric.cli.render_workers import SwitchWorkers
    from fabric.cli.staging import Staging
    from fabric.validate import validate_file

    plan = validate_file(definition).plan
    with Staging(target) as staging, SwitchWorkers(plan, staging) as workers:
        workers.rendered()
        with OutputTree(target) as tree:
            workers.write(target)
            staging.commit(tree, staging.entries)
            workers.written()


def timed(command: list[str], target: Path) -> dict[str, float]:
    """Run one fresh process; wall seconds, its own peak RSS (MiB) and what it wrote (MB, lines)."""
    set_aside(target)
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        stderr = child.stderr.read().decode() if child.stderr else ""
        msg = f"{' '.join(command)} failed ({child.returncode}): {stderr[-2000:]}"
        raise SystemExit(msg)
    files = [p for p in target.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    cpu = usage.ru_utime + usage.ru_stime
    return {"s": wall, "cpu": cpu, "mib": usage.ru_maxrss / 1024, "mb": size / 1e6, "lines": lines}


IMPORTS = "import fabric.__main__, fabric.render, fabric.plan.serialize, fabric.render._jinja; fabric.cli.exit_now(0)"
"""The imports floor: a fresh interpreter imports what ``render`` imports and ends as the command line does
(``fabric.cli.exit_now``: no interpreter teardown), so it compares with a render."""


def commands(case: str, definition: Path, out: Path, pyavd: Path | None) -> dict[str, tuple[list[str], Path]]:
    py = sys.executable
    runs = {
        "render": ([py, "-m", "fabric", "render", str(definition), "-o", str(out / "render")], out / "render"),
        "configs": ([py, __file__, "--configs", str(definition), str(out / "configs")], out / "configs"),
        "report": ([py, "-m", "fabric", "report", str(definition), "-o", str(out / "report")], out / "report"),
        "plan": ([py, "-m", "fabric", "plan", str(definition)], out / "plan"),  # writes nothing: no file is counted
    }
    if pyavd is not None and case.startswith("eos-"):
        spines, leaves = case.removeprefix("eos-").split("x")
        runs["pyavd"] = ([str(pyavd), str(ROOT / "bench" / "pyavd_fabric.py"), spines, leaves, str(out / "pyavd")], out / "pyavd")
    return runs


MAX_BURNERS = 64
"""``--load`` at most: a typo must not fork a thousand spinning processes."""
BURNER = "import time\nend = time.monotonic() + {limit}\nwhile time.monotonic() < end:\n    pass\n"
"""One CPU burner: spins until its own deadline, so it ends even if this script is killed before it can stop it."""


def start_burners(count: int, limit_s: float) -> list[subprocess.Popen[bytes]]:
    """``count`` CPU burners, this process's children, each ending by itself after ``limit_s`` seconds."""
    if not 0 <= count <= MAX_BURNERS:
        msg = f"--load {count}: give 0 to {MAX_BURNERS} burner processes"
        raise SystemExit(msg)
    code = BURNER.format(limit=float(limit_s))
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(count)]


def stop_burners(burners: list[subprocess.Popen[bytes]]) -> None:
    """Kill each burner by its PID (``Popen.kill``) and reap it."""
    for burner in burners:
        if burner.poll() is None:
            burner.kill()
    for burner in burners:
        burner.wait()


def load_summary(samples: list[float]) -> str:
    """The 1-minute load averages sampled before each run: least, median, most.

    Example:
        >>> load_summary([1.5, 2.25, 2.0])
        '1-minute load average before each run: least 1.50, median 2.00, most 2.25 (3 samples)'
    """
    if not samples:
        return "no run"
    return (
        f"1-minute load average before each run: least {min(samples):.2f}, median {statistics.median(samples):.2f}, "
        f"most {max(samples):.2f} ({len(samples)} samples)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="Render benchmark, end to end, against pyavd 6.4.0.")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", nargs="*", help="e.g. eos-16x128 sonic-2048 (default: all)")
    parser.add_argument("--pyavd", type=Path, default=PYAVD_PYTHON if PYAVD_PYTHON.exists() else None, help="python of a venv with pyavd 6.4.0")
    parser.add_argument("--no-pyavd", action="store_true", help="the project alone")
    parser.add_argument("--pyavd-cases", nargs="*", help="run pyavd on these cases only (default: every EOS case)")
    parser.add_argument("--json", action="store_true", help="the raw runs as JSON")
    parser.add_argument("--load", type=int, default=0, metavar="N", help="N CPU burner processes through every run (e.g. 2)")
    parser.add_argument("--load-warmup", type=float, default=20.0, metavar="S", help="seconds the burners run before the first run")
    parser.add_argument("--load-limit", type=float, default=3600.0, metavar="S", help="each burner ends by itself after S seconds")
    parser.add_argument("--configs", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.configs:
        configs_only(*args.configs)
        return
    if args.no_pyavd:
        args.pyavd = None
    # Bytecode as an installed wheel has it (pip compiles at install): without it, a PYTHONDONTWRITEBYTECODE shell
    # makes every run compile the package's 60-odd modules from source again (~0.25 s a run on this machine).
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "fabric")], check=True)
    definitions = {f"eos-{s}x{n}": eos_fabric(s, n) for s, n in SIZES} | {"sonic-2048": SONIC_2048}
    cases = args.cases or list(definitions)
    load_before = os.getloadavg()
    results: dict[str, dict[str, list[dict[str, float]]]] = {c: {} for c in cases}
    imports: list[dict[str, float]] = []
    loads: list[float] = []
    burners = start_burners(args.load, args.load_limit)
    try:
        if burners:
            time.sleep(args.load_warmup)
        with tempfile.TemporaryDirectory(prefix="bench-render-") as tmp:
            work = Path(tmp)
            for case in cases:
                (work / f"{case}.yaml").write_text(definitions[case], encoding="utf-8")
            for _ in range(args.repeat):
                imports.append(timed([sys.executable, "-c", IMPORTS], work / "imports"))
                for case in cases:
                    peer = args.pyavd if args.pyavd_cases is None or case in args.pyavd_cases else None
                    for tool, (command, target) in commands(case, work / f"{case}.yaml", work / case, peer).items():
                        loads.append(os.getloadavg()[0])
                        results[case].setdefault(tool, []).append(timed(command, target))
    finally:
        stop_burners(burners)
    if args.json:
        print(json.dumps({"cases": results, "imports": imports}, indent=1))
    print_table(results)
    print_cpu(results)
    print_plan_ratio(results)
    print_per_mb(results, {k: statistics.median(r[k] for r in imports) for k in ("s", "cpu")})
    after = os.getloadavg()
    print(f"\nLoad average (1, 5, 15 min) before: {', '.join(f'{v:.2f}' for v in load_before)}; after: {', '.join(f'{v:.2f}' for v in after)}")
    burning = f", with {args.load} CPU burner(s) running ({args.load_warmup:g} s before the first run)" if args.load else ""
    print(f"{load_summary(loads)}{burning}")


def print_table(results: dict[str, dict[str, list[dict[str, float]]]]) -> None:
    """A Markdown table (it goes into docs/benchmarks.md as printed): medians, worst peak RSS, ratios, output size."""
    tools = ("render", "configs", "report", "pyavd")
    median = {case: {t: statistics.median(r["s"] for r in runs[t]) for t in tools if t in runs} for case, runs in results.items()}
    print(
        "| case | "
        + " | ".join(f"{t} s / MiB" for t in tools)
        + " | pyavd ÷ render | pyavd ÷ render, median of pairs | pyavd ÷ configs | configs MB / lines | pyavd lines |"
    )
    print("|---" * (len(tools) + 6) + "|")
    for case, runs in results.items():
        cells = [f"{median[case][t]:.2f} / {max(r['mib'] for r in runs[t]):.0f}" if t in runs else "-" for t in tools]
        ratios = [f"{median[case]['pyavd'] / median[case][t]:.1f}×" if "pyavd" in median[case] else "-" for t in ("render", "configs")]
        ratios.insert(1, f"{pair_ratio(runs['pyavd'], runs['render'], 's'):.1f}×" if "pyavd" in runs else "-")
        configs = runs["configs"][0]
        avd = f"{int(runs['pyavd'][0]['lines']):,}" if "pyavd" in runs else "-"
        print(f"| {case} | " + " | ".join([*cells, *ratios, f"{configs['mb']:.2f} / {int(configs['lines']):,}", avd]) + " |")


def pair_ratio(slow: list[dict[str, float]], fast: list[dict[str, float]], key: str) -> float:
    """The median over repeats of ``slow[i][key] / fast[i][key]``: the two ran back to back in repeat i, under the same
    load, so each ratio compares like with like even when the load drifts between repeats.

    Example:
        >>> pair_ratio([{"s": 40.0}, {"s": 80.0}, {"s": 42.0}], [{"s": 1.0}, {"s": 2.0}, {"s": 0.7}], "s")
        40.0
    """
    return statistics.median(a[key] / b[key] for a, b in zip(slow, fast, strict=True))


def print_cpu(results: dict[str, dict[str, list[dict[str, float]]]]) -> None:
    """CPU seconds (user + system of the child, median) and their ratios: on a loaded machine a wall time also counts
    the waits for a core, which weigh most on the shortest runs, so the CPU ratio is the one that survives the load."""
    tools = ("render", "configs", "pyavd")
    print("\n| case | render CPU s | configs CPU s | pyavd CPU s | pyavd ÷ render (CPU) | median of pairs (CPU) | pyavd ÷ configs (CPU) |")
    print("|---|---|---|---|---|---|---|")
    for case, runs in results.items():
        cpu = {t: statistics.median(r["cpu"] for r in runs[t]) for t in tools if t in runs}
        cells = [f"{cpu[t]:.2f}" if t in cpu else "-" for t in tools]
        ratios = [f"{cpu['pyavd'] / cpu[t]:.1f}×" if "pyavd" in cpu else "-" for t in ("render", "configs")]
        ratios.insert(1, f"{pair_ratio(runs['pyavd'], runs['render'], 'cpu'):.1f}×" if "pyavd" in runs else "-")
        print(f"| {case} | " + " | ".join([*cells, *ratios]) + " |")


def print_plan_ratio(results: dict[str, dict[str, list[dict[str, float]]]]) -> None:
    """``render ÷ plan`` per case: what the full render costs above validating and planning the same file, both fresh
    processes run back to back in each repeat (wall and CPU; the ratio of the medians and the median of the pairs)."""
    print("\n| case | plan s (CPU s) | render s (CPU s) | render ÷ plan | median of pairs | render ÷ plan (CPU) | median of pairs (CPU) |")
    print("|---|---|---|---|---|---|---|")
    for case, runs in results.items():
        plan, render = runs["plan"], runs["render"]
        med = {(t, k): statistics.median(r[k] for r in runs[t]) for t in ("plan", "render") for k in ("s", "cpu")}
        print(
            f"| {case} | {med['plan', 's']:.2f} ({med['plan', 'cpu']:.2f}) | {med['render', 's']:.2f} ({med['render', 'cpu']:.2f}) | "
            f"{med['render', 's'] / med['plan', 's']:.2f}× | {pair_ratio(render, plan, 's'):.2f}× | "
            f"{med['render', 'cpu'] / med['plan', 'cpu']:.2f}× | {pair_ratio(render, plan, 'cpu'):.2f}× |"
        )


def per_mb(seconds: float, mb: float, fixed: tuple[float, float]) -> tuple[float, float] | None:
    """Seconds per MB and MB per second of a run above the fixed run ``(seconds, MB)``; None when it wrote no more.

    Example:
        >>> [round(v, 3) for v in per_mb(2.5, 10.2, (0.5, 0.2)) or ()]
        [0.2, 5.0]
    """
    extra_mb = mb - fixed[1]
    if extra_mb <= 0:
        return None
    cost = (seconds - fixed[0]) / extra_mb
    return cost, (1 / cost if cost > 0 else float("inf"))


def print_per_mb(results: dict[str, dict[str, list[dict[str, float]]]], imports: dict[str, float]) -> None:
    """The render's cost per output MB above the fixed cost, per case, in wall and CPU seconds: a Markdown table (flat =
    linear in the output)."""
    renders = {
        case: {k: statistics.median(r[k] for r in runs["render"]) for k in ("s", "cpu")} | {"mb": runs["render"][0]["mb"]}
        for case, runs in results.items()
    }
    smallest = min(renders, key=lambda case: renders[case]["mb"])
    fixed = renders[smallest]
    print(f"\nFixed cost: the median render of {smallest} ({fixed['mb']:.2f} MB written), {fixed['s']:.2f} s wall, {fixed['cpu']:.2f} s CPU.")
    print(f"Of which a fresh interpreter importing what render imports: {imports['s']:.2f} s wall, {imports['cpu']:.2f} s CPU.\n")
    print("| case | render output MB | render s (CPU s) | above fixed | s per MB above fixed | CPU s per MB above fixed | MB/s (CPU) above fixed |")
    print("|---|---|---|---|---|---|---|")
    for case, run in renders.items():
        wall = per_mb(run["s"], run["mb"], (fixed["s"], fixed["mb"]))
        cpu = per_mb(run["cpu"], run["mb"], (fixed["cpu"], fixed["mb"]))
        tail = f"{wall[0]:.3f} | {cpu[0]:.3f} | {cpu[1]:.1f}" if wall and cpu else "(the fixed cost) | | -"
        above = f"{run['s'] - fixed['s']:.2f} ({run['cpu'] - fixed['cpu']:.2f})"
        print(f"| {case} | {run['mb']:.2f} | {run['s']:.2f} ({run['cpu']:.2f}) | {above} | {tail} |")


if __name__ == "__main__":
    main()
