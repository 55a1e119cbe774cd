"""Where ``ansible-inventory --list`` spends its CPU on a cluster definition: one run, in this process, phase by phase.

Phases, CPU seconds (user + system of this process): ``imports`` (Ansible's CLI), ``validate+plan`` and ``inventory
data`` (``fabric.validate.validate_file`` and ``fabric.inventory.onprem_inventory``, timed apart before Ansible runs
them again), ``parse`` (``InventoryManager``: the gpufabric plugin, which validates, plans and sets the variables),
``get_vars`` (each host's combined variables, ``VariableManager.get_vars``) and ``dump`` (Ansible's JSON encoder).
The same calls as ``ansible-inventory -i FILE --list`` (``ansible.cli.inventory.InventoryCLI.run``).
Usage: ANSIBLE_CONFIG=$PWD/ansible.cfg .venv/bin/python bench/inventory_phases.py [FILE]
   (FILE: any on-prem cluster.yaml; without it, bench/bench_tiers.py's 4,096-node Cumulus cluster, written to a
   temporary directory)
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(path: str) -> None:
    """Print the CPU seconds of each phase and the JSON size."""
    start = time.process_time()
    from ansible.cli.inventory import InventoryCLI

    from fabric.inventory import onprem_inventory
    from fabric.validate import validate_file

    cli = InventoryCLI(["ansible-inventory", "-i", path, "--list"])
    cli.parse()
    imported = time.process_time()
    plan = validate_file(path).plan
    planned = time.process_time()
    onprem_inventory(plan)
    built = time.process_time()
    cli.loader, cli.inventory, cli.vm = cli._play_prereqs()  # what InventoryCLI.run does first
    parsed = time.process_time()
    listing = cli.json_inventory(cli.inventory.groups["all"])
    listed = time.process_time()
    text = cli.dump(listing)
    dumped = time.process_time()
    phases = {
        "imports": imported - start,
        "validate+plan": planned - imported,
        "inventory data": built - planned,
        "parse (plugin)": parsed - built,
        "get_vars": listed - parsed,
        "dump": dumped - listed,
    }
    total = dumped - start - (built - imported)  # the run without this script's own validate, plan and data
    print(" | ".join(f"{k} {v:.2f}" for k, v in phases.items()), f"| total {total:.2f} CPU s | {len(text) / 1e6:.1f} MB")


def tiers_cluster(directory: Path) -> str:
    """bench/bench_tiers.py's cluster (4,096 nodes, three tiers, Cumulus) as ``directory/c32k/cluster.yaml``."""
    from bench._clusters import rail_optimized
    from bench.bench_tiers import FABRIC, NODES

    path = directory / "c32k" / "cluster.yaml"
    path.parent.mkdir()
    path.write_text(rail_optimized("c32k", FABRIC.format(nos="cumulus"), NODES.format(count=4096)), encoding="utf-8")
    return str(path)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        main(sys.argv[1] if len(sys.argv) > 1 else tiers_cluster(Path(tmp)))
