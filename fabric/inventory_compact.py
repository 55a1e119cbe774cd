"""A node's interfaces as the inventory plugin sets them: the node group's layout once, the host's addresses, a template.

At thousands of hosts Ansible's cost grows with the number of values the inventory holds: ansible-core 2.19 copies and
tags every nested value an inventory plugin sets (``InventoryManager.set_variable``), and ``ansible-inventory --list``
encodes every host's combined variables value by value. ``gpufabric_interfaces`` (9 keys on each of a node's ports) was
nearly all of them, yet only ``address`` and ``peer_address`` differ between the hosts of a node group. So a host gets

- ``gpufabric_interface_shape``: the interfaces without their addresses, as JSON text (one value; the same on every host
  of a node group, so ``share_group_vars`` sets it once on ``group_<name>``);
- ``gpufabric_interface_addresses``: ``address`` and ``peer_address`` of each of those interfaces, in the same order,
  as JSON text (one value);
- ``gpufabric_interfaces``: ``INTERFACES_TEMPLATE``, which joins the two when a play reads the variable (Ansible
  templates inventory variables on use, ``hostvars[host]`` included), so roles see the same list as before.

The JSON texts are data: the plugin leaves them untrusted, and ``from_json`` (its default "tagless" profile) gives
plain, untrusted strings back, so nothing from the definition is ever templated. Only ``INTERFACES_TEMPLATE``, text
this module wrote, is marked as a template (``InventoryTemplate``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


class InventoryTemplate(str):
    """A Jinja template the inventory code wrote itself (never text from the definition): the plugin trusts it."""

    __slots__ = ()


ADDRESS_KEYS = ("address", "peer_address")
"""The keys of an interface that differ between the hosts of a node group."""
INTERFACES_TEMPLATE = InventoryTemplate(
    "{{ gpufabric_interface_shape | from_json | zip(gpufabric_interface_addresses | from_json) | map('combine') | list }}"
)
"""``gpufabric_interfaces`` from its two halves, with ansible-core's own filters only (``zip``, ``combine``: each
interface's layout updated with its addresses), so it works the same from the checkout and from the collection."""
COMPACT_VARS = ("gpufabric_interface_shape", "gpufabric_interface_addresses")
"""The variables ``compact_interfaces`` adds next to ``gpufabric_interfaces``."""


def compact_interfaces(inventory: Mapping[str, Any]) -> dict[str, Any]:
    """The inventory with each host's ``gpufabric_interfaces`` list split into layout, addresses and the template.

    Args:
        inventory: An inventory with every variable on its hosts (``_flat_inventory``'s shape).

    Returns:
        The same inventory; hosts without ``gpufabric_interfaces`` (switches) unchanged.

    Example:
        >>> port = {"name": "eth0", "plane": "inband", "address": "10.0.0.5/24", "peer_address": None}
        >>> inv = {"all": {"vars": {}, "children": {"g": {"hosts": {"h1": {"gpufabric_interfaces": [port]}}}}}}
        >>> host = compact_interfaces(inv)["all"]["children"]["g"]["hosts"]["h1"]
        >>> host["gpufabric_interface_shape"], host["gpufabric_interface_addresses"]
        ('[{"name":"eth0","plane":"inband"}]', '[{"address":"10.0.0.5/24","peer_address":null}]')
        >>> host["gpufabric_interfaces"] == INTERFACES_TEMPLATE, isinstance(host["gpufabric_interfaces"], InventoryTemplate)
        (True, True)
        >>> expand_interfaces(host)["gpufabric_interfaces"] == [port]
        True
    """
    children = {
        name: {**body, "hosts": {host: _compact_host(found) if found else found for host, found in body["hosts"].items()}}
        for name, body in inventory["all"]["children"].items()
    }
    return {"all": {"vars": inventory["all"]["vars"], "children": children}}


def expand_interfaces(host_vars: Mapping[str, Any]) -> dict[str, Any]:
    """What ``INTERFACES_TEMPLATE`` gives a host, in Python: ``gpufabric_interfaces`` joined again (the helpers kept).

    Args:
        host_vars: A host's combined variables (cluster, group and its own).

    Returns:
        The same variables with ``gpufabric_interfaces`` a list of dicts again, where the host has one.
    """
    if "gpufabric_interface_shape" not in host_vars:
        return dict(host_vars)
    shape = json.loads(host_vars["gpufabric_interface_shape"])
    addresses = json.loads(host_vars["gpufabric_interface_addresses"])
    return {**host_vars, "gpufabric_interfaces": [{**layout, **own} for layout, own in zip(shape, addresses, strict=True)]}


def _compact_host(host_vars: Mapping[str, Any]) -> dict[str, Any]:
    if "gpufabric_interfaces" not in host_vars:
        return dict(host_vars)
    interfaces = host_vars["gpufabric_interfaces"]
    shape = [{k: v for k, v in i.items() if k not in ADDRESS_KEYS} for i in interfaces]
    addresses = [{k: i.get(k) for k in ADDRESS_KEYS} for i in interfaces]
    return {
        **host_vars,
        "gpufabric_interfaces": INTERFACES_TEMPLATE,
        "gpufabric_interface_shape": _json(shape),
        "gpufabric_interface_addresses": _json(addresses),
    }


def _json(value: Any) -> str:  # noqa: ANN401 - any JSON value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
