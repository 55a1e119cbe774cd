"""config_db.json through orjson is the same text as ``json.dumps(indent=2, sort_keys=True)``, or falls back to it."""

from __future__ import annotations

import json

import pytest

from fabric.errors import RenderError
from fabric.plan.compute.facts import build_switch_facts
from fabric.render._json import dumps_sorted
from fabric.render.nos.sonic.compute import build_config_db
from fabric.render.nos.sonic.guard import guard_config_db
from tests.render.conftest import plan_of


def _reference(data: object) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


@pytest.mark.parametrize("case", ["render/sonic", "render/sonic-202405", "onprem-roce"])
def test_every_config_db_equals_the_standard_encoder(case: str) -> None:
    dbs = [build_config_db(facts) for facts in build_switch_facts(plan_of(case))]
    assert dbs
    for db in dbs:
        assert dumps_sorted(db) == _reference(db)


@pytest.mark.parametrize(
    "data",
    [
        {"PORT": {"Ethernet0": {"description": "caf\u00e9 \u2192 leaf"}}},  # non-ASCII: json.dumps escapes it
        {"b": {"10": "x", "9": "y", "a|b": ""}, "a": [], "c": {}},  # key order by code point, empty containers
        {"big": {"n": 2**70}},  # beyond 64 bits: orjson refuses, the standard encoder writes it
    ],
)
def test_what_orjson_would_write_differently_falls_back(data: dict[str, object]) -> None:
    assert dumps_sorted(data) == _reference(data)


def test_a_non_string_field_stops_the_render() -> None:
    facts = next(iter(build_switch_facts(plan_of("render/sonic"))))
    db = build_config_db(facts)
    db["PORT"][next(iter(db["PORT"]))]["mtu"] = 9100.0
    with pytest.raises(RenderError, match=r"config_db.json PORT\|Ethernet\d+: mtu: 9100.0 is not a string"):
        guard_config_db(db)
