"""config_db.json text assembled table by table, so a table that many switches share is guarded and encoded once.

``dumps_sorted`` (``fabric.render._json``) writes ``json.dumps(db, indent=2, sort_keys=True) + "\\n"``. In that text each
top-level table stands on its own lines: ``{``, then the tables in key order, each as ``  "NAME": <value indented from
depth 1>``, joined by ``,`` and a line break, then ``}``. A table's lines depend on nothing but its name and value (the
indent of a value is its depth from the root, and a table is always at depth 1), so the encoding of ``{NAME: value}``
less its first two and last two characters (``{`` and a line break; a line break and ``}``) is the table's part of
the whole (``Tables.parts``). Joining those parts in table-name order gives the same bytes as encoding the whole, which
``tests/render/test_sonic_inputs.py`` checks on every SONiC case. Where ``dumps_sorted`` would fall back to the standard encoder
(orjson refuses a value, or the text is not ASCII) ``encode`` says so (None) and the caller encodes the whole with
``dumps_sorted``.

The QoS and buffer tables of a switch are a function of its RoCE contract, its lossless ports, its SKU's buffers and
its release alone (``fabric.render.nos.sonic.qos.port_tables``): every switch of a tier has the same, so the 2,048-node
bench fabric builds, guards and encodes them once instead of 192 times (its spines and leaves cable the same port
names; issue 36).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import orjson

from fabric.render._json import dumps_sorted

_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS  # as dumps_sorted's, less the final newline


class Tables(NamedTuple):
    """config_db tables, already guarded (``fabric.render.nos.sonic.guard``), and each one's part of the text (None:
    ``dumps_sorted`` would fall back to the standard encoder for them)."""

    tables: dict[str, Any]
    parts: tuple[tuple[str, str], ...] | None


def encode(tables: dict[str, Any]) -> Tables:
    """``tables`` with each table's part of the config_db text (``{`` and ``}`` left out, no separator).

    Example:
        >>> encode({"PORT": {"Ethernet0": {"mtu": "9216"}}, "VRF": {}}).parts
        (('PORT', '  "PORT": {\\n    "Ethernet0": {\\n      "mtu": "9216"\\n    }\\n  }'), ('VRF', '  "VRF": {}'))
        >>> encode({"PORT": {"Ethernet0": {"description": "caf\\u00e9"}}}).parts is None
        True
    """
    parts: list[tuple[str, str]] = []
    for name, table in tables.items():
        try:
            encoded = orjson.dumps({name: table}, option=_OPTIONS)
        except orjson.JSONEncodeError:
            return Tables(tables, None)
        if not encoded.isascii():
            return Tables(tables, None)
        parts.append((name, encoded[2:-2].decode()))
    return Tables(tables, tuple(parts))


def config_db_text(*groups: Tables) -> str:
    """The config_db text of the union of ``groups`` (no table in two of them), as ``dumps_sorted`` writes it.

    Example:
        >>> a, b = {"PORT": {"Ethernet0": {}}}, {"ACL_TABLE": {"SSH_ONLY": {"stage": "ingress"}}, "VRF": {}}
        >>> config_db_text(encode(a), encode(b)) == dumps_sorted({**a, **b})
        True
    """
    parts: list[tuple[str, str]] = []
    for group in groups:
        if group.parts is None:
            return dumps_sorted({k: v for g in groups for k, v in g.tables.items()})
        parts.extend(group.parts)
    if not parts:
        return "{}\n"
    parts.sort()  # by table name: code point order, as sort_keys
    if len({name for name, _ in parts}) != len(parts):
        msg = f"a table in two groups: {sorted(name for name, _ in parts)}"
        raise ValueError(msg)
    pieces = ["{\n"]
    for _, part in parts:
        pieces += (part, ",\n")
    pieces[-1] = "\n}\n"  # the last table's separator
    return "".join(pieces)
