"""The inventory plugin trusts only strings that cannot hold a template, so Ansible writes them plain."""

from __future__ import annotations

import pytest
from ansible.template import is_trusted_as_template

from plugins.inventory.gpufabric import _inert


def test_strings_without_a_brace_are_trusted_and_unchanged() -> None:
    value = {"a": ["10.0.0.1/31", 3, None, True], "b": {"c": "=mlx5_0:1,mlx5_3:1"}}
    out = _inert(value)
    assert out == value
    assert is_trusted_as_template(out["a"][0])
    assert is_trusted_as_template(out["b"]["c"])


@pytest.mark.parametrize("text", ["{{ lookup('pipe', 'id') }}", "{% if x %}", "{# c #}", "a{b"])
def test_a_string_with_a_brace_stays_untrusted(text: str) -> None:
    assert not is_trusted_as_template(_inert([text])[0])
