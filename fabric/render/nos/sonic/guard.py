"""The config_db guard: every key part and every name and text field safe where it stands (defence in depth).

Whatever the model let through, a config_db value cannot name another object or break a line: ``guard_config_db``
refuses it, naming the table, key and field. The compute, storage and OOB renderers run every table they build through
it; the compute render does so once per distinct table (``fabric.render.nos.sonic.text``: a table that many switches
share is built, guarded and encoded once).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from itertools import chain, compress
from operator import is_not
from typing import Any, cast

from fabric.errors import RenderError
from fabric.model.strings import is_safe_text
from fabric.render.guards import TOKEN_RE, one_line, token

# config_db fields whose value is a name or an address from the definition: one SONiC word each.
NAME_FIELDS = frozenset({"hostname", "gwaddr", "SRC_IP", "alias"})
# config_db fields of free text: one printable line (JSON escapes quotes, so only control characters matter).
TEXT_FIELDS = frozenset({"description", "policy_desc"})
_CHECKED_FIELDS = NAME_FIELDS | TEXT_FIELDS
_FIELD_TYPES = frozenset({str, list})
_INTERFACE_PARTS = 2
"""A key of an ``…INTERFACE`` table is ``<name>`` or ``<name>|<prefix>`` (sonic-yang-models ``sonic-interface.yang``,
``sonic-loopback-interface.yang``, ``sonic-vlan.yang`` ``VLAN_INTERFACE``, ``sonic-mgmt_port.yang`` ``MGMT_INTERFACE``,
``sonic-mclag.yang`` ``MCLAG_INTERFACE``: two key leaves at most): an address holding ``|`` splits into words that each
pass, so the number of parts is what refuses it."""
_WORD = TOKEN_RE["sonic"].pattern.removeprefix("^").removesuffix("$")
WORDS_JOINED = re.compile(rf"(?:{_WORD})(?:\|(?:{_WORD}))*")
"""Words of ``TOKEN_RE["sonic"]`` joined by ``|``, which no word holds: the whole of a joined text matches exactly when
each part matches the whole of ``TOKEN_RE["sonic"]`` (one regex over a table's keys instead of a call per part)."""


def guard_config_db(db: dict[str, Any]) -> dict[str, Any]:
    """``db`` once every key part and every name and text field is safe where it stands (defence in depth).

    config_db joins a key's parts with ``|`` (``INTERFACE|Ethernet0|10.0.0.0/31``), so a part holding ``|`` or
    whitespace would name another object; a name field is one word; free text is one line. Every field is a string or
    a list of strings (redis hash fields, as ``sonic-cfggen`` writes them), which ``dumps_sorted`` relies on.

    Raises:
        RenderError: naming the table, key and field of the refused value.
    """
    if _is_plainly_safe(db):
        return db
    safe: set[str] = set()  # key parts and names already checked: a port name recurs in a dozen tables
    for table, entries in db.items():
        for key, fields in entries.items():
            try:
                parts = key.split("|")
                if table.endswith("INTERFACE") and len(parts) > _INTERFACE_PARTS:
                    msg = f"{len(parts)} key parts where {table} has at most {_INTERFACE_PARTS} (name|prefix): a value holds '|'"
                    raise RenderError(msg)
                if not safe.issuperset(parts):
                    safe.update(token(part, "sonic") for part in parts)
                if not _FIELD_TYPES.issuperset(map(type, fields.values())):  # set operations: no Python loop per field
                    field = next(f for f, v in fields.items() if type(v) not in _FIELD_TYPES)
                    msg = f"{field}: {fields[field]!r} is not a string (config_db fields are strings)"
                    raise RenderError(msg)
                for field in sorted(_CHECKED_FIELDS.intersection(fields)):
                    _check_field(field, fields[field], safe)
            except RenderError as exc:
                msg = f"config_db.json {table}|{key}: {exc}"
                raise RenderError(msg) from exc
    return db


def _is_plainly_safe(db: dict[str, Any]) -> bool:
    """Whether ``db`` passes every check of ``guard_config_db``, found table by table rather than entry by entry (a switch has
    some 2,000 entries); False sends ``guard_config_db`` through its entry-by-entry loop, which names what it refuses.

    Stricter than that loop, never looser: a key part or name field must match the whole of ``TOKEN_RE["sonic"]``
    (``WORDS_JOINED`` over the joined parts or names), a text field ``is_safe_text``, every field must be a ``str`` or a
    ``list``. Two shortcuts keep it cheap, neither looser: a key or name that matched once is remembered
    (``_SAFE_WORDS``: a port's keys recur on every switch of its SKU, so only the new ones meet the regex), and an entry
    object that a run of keys shares (the QoS builders give every port the same dict) is read once per run.
    """
    types: set[type] = set()
    values_of = cast("Callable[[dict[str, object]], Iterable[object]]", dict.values)  # pyright: ignore[reportUnknownMemberType] - the unbound method
    for name, table in db.items():
        entries = cast("dict[str, dict[str, object]]", table)
        if not _all_words(entries.keys()):  # every part of every key: '|' joins them
            return False
        if name.endswith("INTERFACE") and any(key.count("|") >= _INTERFACE_PARTS for key in entries):
            return False  # the loop names the key with a part too many
        listed = entries.values()
        # An entry object once per run of keys sharing it (C loops): never skips one, as a skipped entry is the one before.
        distinct = list(compress(listed, map(is_not, listed, chain((None,), listed))))
        types.update(map(type, chain.from_iterable(map(values_of, distinct))))
        for field in _CHECKED_FIELDS.intersection(chain.from_iterable(distinct)):
            values = [fields[field] for fields in distinct if field in fields]
            texts = [v for v in values if type(v) is str]
            if len(texts) != len(values):
                return False
            if field in TEXT_FIELDS:
                if not is_safe_text("".join(texts)):  # a character is unsafe alone: the joined text tells for all
                    return False
            elif "|" in "".join(texts) or not _all_words(texts):
                return False  # a value holding '|' would pass as two words
    return _FIELD_TYPES.issuperset(types)


_SAFE_WORDS: set[str] = set()
"""Keys and names ``_all_words`` has seen match: only matching strings enter; emptied past ``_SAFE_WORDS_MAX``."""
_SAFE_WORDS_MAX = 1 << 16


def _all_words(texts: Iterable[str]) -> bool:
    """Whether every text is one or more ``TOKEN_RE["sonic"]`` words joined by ``|`` (a config_db key; a name has no ``|``,
    which the caller checks): a set difference leaves the texts not seen before, and one regex checks those at once.

    Example:
        >>> _all_words(["Ethernet0|3", "Loopback0"]), _all_words(["Ethernet0|x y"]), _all_words(["Ethernet0|"])
        (True, False, False)
    """
    if _SAFE_WORDS.issuperset(texts):
        return True
    new = set(texts).difference(_SAFE_WORDS)
    if not WORDS_JOINED.fullmatch("|".join(new)):
        return False
    if len(_SAFE_WORDS) + len(new) > _SAFE_WORDS_MAX:
        _SAFE_WORDS.clear()
    _SAFE_WORDS.update(new)
    return True


def _check_field(field: str, value: object, safe: set[str]) -> None:
    """A name field is one word (remembered in ``safe``), a text field one line; both are strings."""
    if not isinstance(value, str):
        msg = f"{field}: {value!r} is not a string (config_db fields are strings)"
        raise RenderError(msg)
    if field in TEXT_FIELDS:
        one_line(value)
    elif value not in safe:
        safe.add(token(value, "sonic"))
