"""Ansible inventory plugin: a gpufabric cluster definition (``inventories/<site>/cluster.yaml``) is the inventory.

It validates and plans the definition with the ``fabric`` package of this repository and yields the groups
``gpu_nodes``, ``storage_nodes``, ``mgmt_nodes``, ``login_nodes``, ``sm_nodes``, ``group_<name>``, ``leaf``,
``spine`` (…) with every plane's addresses, MTUs, the RoCE contract and the InfiniBand partitions as variables.
An invalid definition fails the inventory with the full validation report.

Strings are set trusted for templating only where that cannot change them (no ``{``) and for the templates the
inventory code writes itself (``fabric.inventory.compact``: ``gpufabric_interfaces`` and each structured value read
from its JSON text); every other string, anything from the definition with a brace included, stays untrusted, so
Ansible never templates it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from ansible.errors import AnsibleParserError
from ansible.plugins.inventory import BaseInventoryPlugin

DOCUMENTATION = r"""
name: gpufabric
short_description: Inventory from a gpufabric cluster definition
description:
  - Loads C(cluster.yaml), validates and plans it, and yields hosts, groups and variables.
  - Accepts files named C(cluster.yaml) or C(cluster.yml), or ending in C(.gpufabric.yaml) or C(.gpufabric.yml)
    (e.g. C(site-a.gpufabric.yaml)); no plugin key is needed in them. Other names are left to other inventory plugins.
  - Above 1024 hosts the variables take a compact form (structured values as JSON texts read back by templates), which
    C(ansible-inventory --list) writes about three times faster; plays see the same values. The environment variable
    C(GPUFABRIC_INVENTORY_COMPACT) (C(auto), C(always), C(never)) overrides the choice.
options: {}
"""

REPO = Path(__file__).resolve().parents[2]
NAMES = ("cluster.yaml", "cluster.yml")
SUFFIXES = (".gpufabric.yaml", ".gpufabric.yml")


def is_definition_name(name: str) -> bool:
    """Whether a file name is one this plugin reads (other inventories in the same directory stay others').

    Example:
        >>> [is_definition_name(n) for n in ("cluster.yml", "site-a.gpufabric.yaml", ".gpufabric.yaml", "hosts.yaml")]
        [True, True, False, False]
    """
    return name in NAMES or (name.endswith(SUFFIXES) and name not in SUFFIXES)


class InventoryModule(BaseInventoryPlugin):
    """The cluster definition as an inventory."""

    NAME = "gpufabric"

    def verify_file(self, path: str) -> bool:
        """Only cluster definitions: ``cluster.yaml``/``cluster.yml`` or ``*.gpufabric.yaml``/``*.gpufabric.yml``."""
        return super().verify_file(path) and is_definition_name(Path(path).name)

    def parse(self, inventory: Any, loader: Any, path: str, cache: bool = True) -> None:  # noqa: ANN401 - Ansible's signature
        """Validate, plan and populate."""
        super().parse(inventory, loader, path, cache)
        if (REPO / "fabric" / "__init__.py").is_file() and str(REPO) not in sys.path:
            sys.path.insert(0, str(REPO))  # run from the checkout; installed as gpufabric.fabric, the package is imported
        try:
            from fabric.errors import FabricError, InputError
            from fabric.inventory import COMPACT_ABOVE_HOSTS, COMPACT_MODES, onprem_inventory
            from fabric.inventory.compact import InventoryTemplate
            from fabric.validate import validate_file
        except ImportError as exc:
            msg = f"{path}: the gpufabric Python package is not importable by Ansible's Python ({sys.executable}): {exc}; pip install gpufabric"
            raise AnsibleParserError(msg) from None

        try:
            plan = validate_file(path).plan
        except InputError as exc:
            report = "\n".join(str(f) for f in exc.findings)
            msg = f"{path}: invalid cluster definition, {len(exc.errors)} error(s):\n{report}"
            raise AnsibleParserError(msg) from None
        except FabricError as exc:
            raise AnsibleParserError(f"{path}: {exc}") from None
        if plan.target != "onprem":
            msg = f"{path}: a {plan.target} cluster gets its inventory from the Pulumi stack output (pulumi stack output ansible_inventory)"
            raise AnsibleParserError(msg)
        mode = os.environ.get("GPUFABRIC_INVENTORY_COMPACT", "auto")
        if mode not in COMPACT_MODES:
            msg = f"GPUFABRIC_INVENTORY_COMPACT={mode[:40]!r}: not one of {', '.join(COMPACT_MODES)}; "
            msg += f"unset it for auto (compact above {COMPACT_ABOVE_HOSTS} hosts)"
            raise AnsibleParserError(msg)
        compact = {"always": True, "never": False}.get(mode)
        self._populate(onprem_inventory(plan, compact=compact)["all"], InventoryTemplate)

    def _populate(self, top: dict[str, Any], template: type[str]) -> None:
        inventory = self.inventory
        if inventory is None:  # parse() sets it before populating; no assert (stripped under -O, refused by ansible-test)
            msg = "the gpufabric inventory plugin populated no inventory"
            raise AnsibleParserError(msg)
        for key, value in top["vars"].items():
            inventory.set_variable("all", key, _inert(value, template))
        for group, body in top["children"].items():
            inventory.add_group(group)
            for key, value in body.get("vars", {}).items():  # values every host of the group shares (share_group_vars)
                inventory.set_variable(group, key, _inert(value, template))
            for host, host_vars in body["hosts"].items():
                inventory.add_host(host, group=group)
                for key, value in (host_vars or {}).items():
                    inventory.set_variable(host, key, _inert(value, template))
        inventory.add_group("fabric")
        for tier in ("leaf", "spine", "superspine", "core"):
            if tier in inventory.groups:
                inventory.add_child("fabric", tier)


def _inert(value: Any, template: type[str]) -> Any:  # noqa: ANN401 - any inventory value
    """``value`` with every string that holds no ``{`` marked trusted for templating (ansible-core 2.19 and later).

    Such a string cannot open a Jinja block (``{{``, ``{%``, ``{#``), so templating it gives it back unchanged: hosts
    see the same values. Ansible then writes it plain in ``ansible-inventory --list`` (as every inventory string was
    before 2.19) instead of as an ``{"__ansible_unsafe": ...}`` object, which is what its JSON encoder spends its time
    on at thousands of hosts. A string with a ``{`` stays untrusted, unless it is of type ``template``: a template the
    inventory code wrote itself (``InventoryTemplate``; no string from the definition is ever one).
    """
    if isinstance(value, str):
        if type(value) is template:
            return _trust(str(value))
        return value if "{" in value else _trust(value)
    if isinstance(value, dict):
        return {k: _inert(v, template) for k, v in value.items()}
    if isinstance(value, list):
        return [_inert(v, template) for v in value]
    return value


try:
    from ansible.template import trust_as_template as _trust
except ImportError:  # ansible-core before 2.19 has no trust: every inventory string is a template there already

    def _trust(value: str) -> str:
        return value
