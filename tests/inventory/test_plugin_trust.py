"""The inventory plugin trusts only strings that cannot hold a template, and the one template the inventory writes."""

from __future__ import annotations

from typing import Any

import pytest
from ansible.template import Templar, is_trusted_as_template

from fabric.inventory.compact import INTERFACES_TEMPLATE, InventoryTemplate, json_texts, split_interfaces
from plugins.inventory.gpufabric import _inert


def test_strings_without_a_brace_are_trusted_and_unchanged() -> None:
    value = {"a": ["10.0.0.1/31", 3, None, True], "b": {"c": "=mlx5_0:1,mlx5_3:1"}}
    out = _inert(value, InventoryTemplate)
    assert out == value
    assert is_trusted_as_template(out["a"][0])
    assert is_trusted_as_template(out["b"]["c"])


@pytest.mark.parametrize("text", ["{{ lookup('pipe', 'id') }}", "{% if x %}", "{# c #}", "a{b"])
def test_a_string_with_a_brace_stays_untrusted(text: str) -> None:
    assert not is_trusted_as_template(_inert([text], InventoryTemplate)[0])


def test_only_the_inventorys_own_template_is_trusted() -> None:
    assert is_trusted_as_template(_inert(INTERFACES_TEMPLATE, InventoryTemplate))
    assert not is_trusted_as_template(_inert(str(INTERFACES_TEMPLATE), InventoryTemplate))  # the same text from elsewhere


def _host(name: str) -> dict[str, Any]:
    port = {"name": name, "plane": "compute", "index": 0, "address": "10.0.0.1/31", "mtu": 9000, "peer_address": "10.0.0.0"}
    flat = {"all": {"vars": {}, "children": {"gpu_nodes": {"hosts": {"h1": {"gpufabric_interfaces": [port]}}}}}}
    return json_texts(split_interfaces(flat))["all"]["children"]["gpu_nodes"]["hosts"]["h1"]


@pytest.mark.parametrize("name", ["enp24s0np0", "{{ 6 * 7 }}", "{% raw %}x"])
def test_a_definition_string_inside_the_interfaces_is_never_templated(name: str) -> None:
    """Ansible joins layout and addresses; a name that looks like a template comes back as written."""
    host = _inert(_host(name), InventoryTemplate)  # as the plugin sets it
    seen = Templar(variables=host).template(host["gpufabric_interfaces"])
    assert seen == [{"name": name, "plane": "compute", "index": 0, "address": "10.0.0.1/31", "mtu": 9000, "peer_address": "10.0.0.0"}]
    assert not any(is_trusted_as_template(v) for i in seen for v in i.values() if isinstance(v, str))


@pytest.mark.parametrize("name", ["x-y", "{{ x }}", "X"])
def test_only_a_plain_variable_name_goes_into_a_template(name: str) -> None:
    with pytest.raises(ValueError, match="cannot be set as JSON text"):
        json_texts({"all": {"vars": {name: [1]}, "children": {}}})


def test_a_name_whose_json_text_name_is_taken_is_refused() -> None:
    with pytest.raises(ValueError, match="x_json is taken"):
        json_texts({"all": {"vars": {"x": [1], "x_json": "[2]"}, "children": {}}})
