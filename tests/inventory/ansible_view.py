"""What Ansible gives each host of an inventory once it templates the variables, as a play would see them.

Run as a script in a fresh interpreter (Ansible reads its configuration when first imported), with ``ANSIBLE_CONFIG``
pointing at the repository's ansible.cfg: ``python tests/inventory/ansible_view.py inventories/lab/cluster.yaml``.
Prints ``{host: {variable: templated value}}`` as JSON: the variables ``ansible-inventory --list`` gives the host
(cluster, group and host vars combined by Ansible's ``VariableManager``), each read through ``hostvars[host]``, which
templates it with that host's variables (what a play's ``hostvars[host].x`` and the roles' filters see).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def ansible_view(source: str | Path, plugins: str | None = None, compact: str = "auto") -> dict[str, dict[str, Any]]:
    """``templated_host_vars(source)`` from a fresh interpreter with the repository's ansible.cfg (run from ``ROOT``).

    Args:
        source: The inventory source.
        plugins: Inventory plugins to enable instead of ansible.cfg's (``ANSIBLE_INVENTORY_ENABLED``), e.g. ``script``.
        compact: The plugin's ``GPUFABRIC_INVENTORY_COMPACT`` (``auto``, ``always``, ``never``).
    """
    env = {**os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "GPUFABRIC_INVENTORY_COMPACT": compact}
    env |= {"ANSIBLE_INVENTORY_ENABLED": plugins} if plugins else {}
    command = [sys.executable, str(Path(__file__).resolve()), str(source)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def templated_host_vars(source: str) -> dict[str, dict[str, Any]]:
    """Per host of the inventory ``source``: its inventory variables, templated.

    Args:
        source: An inventory source Ansible accepts (``cluster.yaml`` through the gpufabric plugin).

    Returns:
        Host → variable → value, without Ansible's internal variables (as ``ansible-inventory --list`` leaves them out).
    """
    from ansible import constants
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.vars.hostvars import HostVars
    from ansible.vars.manager import VariableManager

    loader = DataLoader()
    inventory = InventoryManager(loader=loader, sources=[source])
    manager = VariableManager(loader=loader, inventory=inventory)
    hostvars = HostVars(inventory=inventory, variable_manager=manager, loader=loader)
    seen: dict[str, dict[str, Any]] = {}
    for host in inventory.get_hosts():
        found = hostvars[host.name]
        seen[host.name] = {k: found[k] for k in found if k not in constants.INTERNAL_STATIC_VARS}
    return seen


if __name__ == "__main__":
    json.dump(templated_host_vars(sys.argv[1]), sys.stdout, sort_keys=True)
