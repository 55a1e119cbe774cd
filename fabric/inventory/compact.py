"""The on-prem inventory in the form Ansible handles fast at thousands of hosts: few values, the same values once seen.

Ansible's cost grows with the number of values an inventory holds: ansible-core 2.19 copies and tags every nested
value an inventory plugin sets (``InventoryManager.set_variable``), and ``ansible-inventory --list`` writes each
host's combined variables (cluster, group and its own) value by value through a Python JSON encoder. Two steps make
the values few; after Ansible templates them each host sees exactly what it saw before (``onprem_host_vars``):

1. ``split_interfaces``: ``gpufabric_interfaces`` (9 keys on each of a node's ports) was nearly all of the values, yet
   only ``address`` and ``peer_address`` differ between the hosts of a node group. A host gets its
   ``gpufabric_interface_addresses`` (those two per port, in port order), ``gpufabric_interface_shape`` (the ports
   without them: the same on every host of the group, so ``share_group_vars`` sets it once on ``group_<name>``), and
   ``gpufabric_interfaces`` becomes ``INTERFACES_TEMPLATE``, which joins the two when a play reads it.
2. ``json_texts``: every list or dict value becomes one string, its JSON text under ``<name>_json``, and the variable
   itself the template ``{{ <name>_json | from_json }}``: one value instead of one per element (the cluster's planes
   and the RoCE contract alone were 33 values on each of 5,376 hosts).

Ansible templates inventory variables when a play reads them, ``hostvars[host]`` included. The JSON texts are data:
the plugin leaves them untrusted (they hold braces), and ``from_json`` (its default "tagless" profile) gives plain,
untrusted strings back, so nothing from the definition is ever templated. Only templates this module wrote are
marked as templates (``InventoryTemplate``), and their only variable parts are variable names checked against
``NAME``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any


class InventoryTemplate(str):
    """A Jinja template the inventory code wrote itself (never text from the definition): the plugin trusts it."""

    __slots__ = ()


NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
"""A variable name a template may name (``json_texts``)."""
ADDRESS_KEYS = ("address", "peer_address")
"""The keys of an interface that differ between the hosts of a node group."""
INTERFACES_TEMPLATE = InventoryTemplate("{{ gpufabric_interface_shape | zip(gpufabric_interface_addresses) | map('combine') | list }}")
"""``gpufabric_interfaces`` from its two halves with ansible-core's own filters (``zip``, then ``combine``: each port's
layout updated with its addresses), so it resolves the same from the checkout and from the collection."""
SPLIT_VARS = ("gpufabric_interface_shape", "gpufabric_interface_addresses")
"""The variables ``split_interfaces`` adds next to ``gpufabric_interfaces``."""


def split_interfaces(inventory: Mapping[str, Any]) -> dict[str, Any]:
    """The inventory with each host's ``gpufabric_interfaces`` list split into layout, addresses and the template.

    Args:
        inventory: An inventory with every variable on its hosts (``_flat_inventory``'s shape).

    Returns:
        The same inventory; hosts without ``gpufabric_interfaces`` (switches) unchanged.

    Example:
        >>> port = {"name": "eth0", "plane": "inband", "address": "10.0.0.5/24", "peer_address": None}
        >>> inv = {"all": {"vars": {}, "children": {"g": {"hosts": {"h1": {"gpufabric_interfaces": [port]}}}}}}
        >>> host = split_interfaces(inv)["all"]["children"]["g"]["hosts"]["h1"]
        >>> host["gpufabric_interface_shape"], host["gpufabric_interface_addresses"]
        ([{'name': 'eth0', 'plane': 'inband'}], [{'address': '10.0.0.5/24', 'peer_address': None}])
        >>> host["gpufabric_interfaces"] == INTERFACES_TEMPLATE, isinstance(host["gpufabric_interfaces"], InventoryTemplate)
        (True, True)
    """
    return _each_host(inventory, _split_host)


def json_texts(inventory: Mapping[str, Any]) -> dict[str, Any]:
    """The inventory with every non-empty list or dict value (cluster, group and host vars) as JSON text plus a template.

    Args:
        inventory: An inventory (``all`` vars, groups with optional ``vars``, hosts with optional vars).

    Returns:
        The same inventory; ``x: [1, 2]`` is now ``x_json: "[1,2]"`` and ``x: "{{ x_json | from_json }}"``.

    Raises:
        ValueError: a variable name that is not ``NAME`` (it would go into a template), or ``<name>_json`` taken.

    Example:
        >>> inv = {"all": {"vars": {"planes": {"a": 1}, "name": "c"}, "children": {"g": {"hosts": {"h1": {"p": [1]}, "h2": None}}}}}
        >>> out = json_texts(inv)["all"]
        >>> out["vars"]
        {'planes': '{{ planes_json | from_json }}', 'planes_json': '{"a":1}', 'name': 'c'}
        >>> out["children"]["g"]["hosts"]
        {'h1': {'p': '{{ p_json | from_json }}', 'p_json': '[1]'}, 'h2': None}
    """
    top = _each_host(inventory, _json_vars)["all"]
    children = {name: {**body, "vars": _json_vars(body["vars"])} if "vars" in body else body for name, body in top["children"].items()}
    return {"all": {"vars": _json_vars(top["vars"]), "children": children}}


def _each_host(inventory: Mapping[str, Any], change: Callable[[Mapping[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    children = {
        name: {**body, "hosts": {host: change(found) if found else found for host, found in body["hosts"].items()}}
        for name, body in inventory["all"]["children"].items()
    }
    return {"all": {"vars": inventory["all"]["vars"], "children": children}}


def _split_host(host_vars: Mapping[str, Any]) -> dict[str, Any]:
    if "gpufabric_interfaces" not in host_vars:
        return dict(host_vars)
    interfaces = host_vars["gpufabric_interfaces"]
    return {
        **host_vars,
        "gpufabric_interfaces": INTERFACES_TEMPLATE,
        "gpufabric_interface_shape": [{k: v for k, v in i.items() if k not in ADDRESS_KEYS} for i in interfaces],
        "gpufabric_interface_addresses": [{k: i.get(k) for k in ADDRESS_KEYS} for i in interfaces],
    }


def _json_vars(variables: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in variables.items():
        if not (isinstance(value, list | dict) and value):
            out[name] = value
            continue
        if not NAME.match(name) or f"{name}_json" in variables:
            msg = f"inventory variable {name!r}: cannot be set as JSON text (not a plain name, or {name}_json is taken)"
            raise ValueError(msg)
        out[name] = InventoryTemplate(f"{{{{ {name}_json | from_json }}}}")
        out[f"{name}_json"] = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return out
