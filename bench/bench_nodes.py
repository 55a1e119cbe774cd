"""Node-side benchmark: the definition as inventory at scale, and role runs in booted containers (root).

1. Inventory: `ansible-inventory --list` and `ansible-playbook playbooks/site.yml --list-hosts` (what
   `python -m fabric nodes` runs before the playbook) for rail-optimized clusters of 64, 512 and 2048 nodes; both go
   through the gpufabric inventory plugin (validate + plan + host variables). Median of 3.
2. Containers (root): N booted bookworm nodes (gpu001..) each with its ten planes as veths and its eight RoCE ports as
   stub NICs; network_planes + nic_qos converge, then the no-change rerun, through fabric.nodes.runner. Boot and
   teardown timed apart.
Usage: ./dev bench   (or: PYTHONPATH=. python bench/bench_nodes.py [--sizes 64,512,2048] [--containers 1,2,4])
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_plan import cluster_yaml  # noqa: E402 - the same clusters as the planner benchmark
from fabric.nodes.runner import RunOptions, run_playbook  # noqa: E402

BIN = Path(sys.executable).parent
ENV = {**os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}


def timed(command: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=ENV, capture_output=True, text=True, check=True, timeout=600)
    return time.perf_counter() - start, len(done.stdout)


def inventory(sizes: list[int], repeat: int) -> None:
    print(f"{'nodes':>6} {'hosts':>6} {'inventory --list s':>19} {'JSON MB':>8} {'site.yml --list-hosts s':>24}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            definition = Path(tmp) / f"bench{size}" / "cluster.yaml"
            definition.parent.mkdir()
            definition.write_text(cluster_yaml(size), encoding="utf-8")
            listing = [timed([str(BIN / "ansible-inventory"), "-i", str(definition), "--list"]) for _ in range(repeat)]
            hosts = [timed([str(BIN / "ansible-playbook"), "-i", str(definition), "playbooks/site.yml", "--list-hosts"])[0] for _ in range(repeat)]
            print(
                f"{size:>6} {size + 16:>6} {statistics.median(t for t, _ in listing):>19.2f} "
                f"{listing[0][1] / 1e6:>8.1f} {statistics.median(hosts):>24.2f}"
            )


def containers(counts: list[int]) -> None:
    from tests.roles.containers import bookworm_image, booted
    from tests.roles.scenario import container_layer, host_vars, role_playbook, site
    from tests.roles.stubs import fake_nic, nic_stub_vars

    bookworm_image()
    definition = site("onprem-roce")
    print(f"{'nodes':>5} {'boot s':>7} {'converge s':>11} {'rerun s':>8} {'changed (1st/2nd)':>18} {'teardown s':>11}")
    for count in counts:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            stack = contextlib.ExitStack()
            start = time.perf_counter()
            nodes = []
            for n in range(1, count + 1):
                host = f"gpu{n:03d}"
                hv = host_vars(definition, host)
                planes = [i["name"] for i in hv["gpufabric_interfaces"] if i["address"] and i["plane"] != "oob"]
                files = {f"/srv/nic/{rel}": content for rel, content in fake_nic(hv["gpufabric_roce_ports"]).items()}
                nodes.append(stack.enter_context(booted(host, work, planes=planes, files=files)))
            boot = time.perf_counter() - start
            layer = container_layer(work, nodes)
            options = RunOptions(limit=",".join(c.name for c in nodes), extra_inventories=(layer,), extravars=nic_stub_vars("/srv/nic"))
            play = str(role_playbook(work, "network_planes", "nic_qos"))
            runs = []
            for _ in range(2):
                start = time.perf_counter()
                result = run_playbook(definition, options, lambda *_: None, playbook=play)
                assert result.ok, result.output_tail
                runs.append((time.perf_counter() - start, sum(h.counts["changed"] for h in result.hosts)))
            start = time.perf_counter()
            stack.close()
            down = time.perf_counter() - start
            print(f"{count:>5} {boot:>7.2f} {runs[0][0]:>11.2f} {runs[1][0]:>8.2f} {f'{runs[0][1]}/{runs[1][1]}':>18} {down:>11.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="64,512,2048")
    parser.add_argument("--containers", default="1,2,4")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    inventory([int(s) for s in args.sizes.split(",")], args.repeat)
    if os.geteuid() == 0:
        containers([int(c) for c in args.containers.split(",")])
    else:
        print("containers skipped: they need root", file=sys.stderr)


if __name__ == "__main__":
    main()
