"""The config_db guard's table-at-a-time check is never looser than its entry-by-entry loop (issue 36 made it one
regex over a table's joined keys and over each name field's joined values)."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from fabric.errors import RenderError
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.plan.compute.facts import build_switch_facts
from fabric.render.guards import TOKEN_RE, is_word, token
from fabric.render.nos.sonic.compute import build_config_db
from fabric.render.nos.sonic.guard import WORDS_JOINED, _is_plainly_safe, guard_config_db
from tests.conftest import DATA


@pytest.fixture(scope="module")
def db() -> dict[str, Any]:
    facts = next(iter(build_switch_facts(plan_cluster(load_cluster(DATA / "render/sonic/cluster.yaml")))))
    return build_config_db(facts)


def test_a_rendered_config_db_takes_the_fast_path(db: dict[str, Any]) -> None:
    assert _is_plainly_safe(db), "the table-at-a-time check refused a clean config_db: every render would take the slow loop"


def _with_key(db: dict[str, Any], key: str) -> dict[str, Any]:
    changed = copy.deepcopy(db)
    changed["INTERFACE"][key] = {}
    return changed


def _with_field(db: dict[str, Any], field: str, value: object) -> dict[str, Any]:
    changed = copy.deepcopy(db)
    table = "MGMT_INTERFACE" if field == "gwaddr" else "PORT"
    entry = next(iter(changed[table].values()))
    entry[field] = value
    return changed


HOSTILE_PARTS = ["Ethernet0|x y", "Ethernet0||10.0.0.0/31", "Ethernet0|-x", "Ethernet0|a\n", "Ethernét0", "|Ethernet0", "Ethernet0|"]
HOSTILE_NAMES = ["a|b", "a b", "-a", "a\n", "", "é", "a|"]


@pytest.mark.parametrize("key", HOSTILE_PARTS)
def test_a_key_part_that_is_not_one_word_is_refused(db: dict[str, Any], key: str) -> None:
    changed = _with_key(db, key)
    assert not _is_plainly_safe(changed)
    with pytest.raises(RenderError, match=re.escape("config_db.json INTERFACE|")):
        guard_config_db(changed)


@pytest.mark.parametrize("field", ["alias", "gwaddr"])
@pytest.mark.parametrize("value", HOSTILE_NAMES)
def test_a_name_field_that_is_not_one_word_is_refused(db: dict[str, Any], field: str, value: str) -> None:
    """``a|b`` joined with the other names reads as two words: the count of joints must refuse it."""
    changed = _with_field(db, field, value)
    assert not _is_plainly_safe(changed)
    with pytest.raises(RenderError, match=r"^config_db.json (PORT|MGMT_INTERFACE)\|\S+: refusing to render"):
        guard_config_db(changed)


def test_a_field_that_is_not_a_string_is_refused(db: dict[str, Any]) -> None:
    changed = _with_field(db, "alias", 7)
    assert not _is_plainly_safe(changed)
    with pytest.raises(RenderError, match="is not a string"):
        guard_config_db(changed)


@pytest.mark.parametrize("text", ["a", "Ethernet0", "a|b", "a||b", "-a", "a|-b", "a-|b", "", "|", "a\n", "a|b\n", "x/y:z@w+1.2_3", "a b|c"])
def test_the_joined_regex_agrees_with_is_word_part_by_part(text: str) -> None:
    assert bool(WORDS_JOINED.fullmatch(text)) == all(is_word("sonic", part) for part in text.split("|"))


@pytest.mark.parametrize("nos", sorted(TOKEN_RE))
def test_token_refuses_a_trailing_line_break(nos: str) -> None:
    """``TOKEN_RE`` ends in ``$``, which ``re.match`` also finds before a final line break: the whole text must match."""
    with pytest.raises(RenderError, match=f"where one {nos} word goes"):
        token("Ethernet0\n", nos)


def test_a_name_equal_to_a_remembered_key_is_still_refused(db: dict[str, Any]) -> None:
    """Keys that matched are remembered (``_SAFE_WORDS``) and may hold '|'; a name field may not, remembered or not."""
    key = next(k for k in db["QUEUE"] if "|" in k)
    assert _is_plainly_safe(db)  # the key is remembered now
    changed = _with_field(db, "alias", key)
    assert not _is_plainly_safe(changed)
    with pytest.raises(RenderError, match=rf"^config_db.json PORT\|\S+: refusing to render {re.escape(repr(key))}"):
        guard_config_db(changed)


def test_an_entry_shared_by_many_keys_is_still_checked(db: dict[str, Any]) -> None:
    """The QoS tables give every port one shared entry dict, which the fast check reads once: once, not never."""
    shared = copy.deepcopy(db)
    entries = list(shared["BUFFER_QUEUE"].values())
    assert len({id(e) for e in entries}) < len(entries), "the buffer tables no longer share their entries"
    entries[-1]["profile"] = 7
    assert not _is_plainly_safe(shared)
    with pytest.raises(RenderError, match="is not a string"):
        guard_config_db(shared)
