"""The ``PORT`` table's text written from per-port pieces encoded once per SKU port (issue 36).

A switch's ``PORT`` table is its SKU's ports (``fabric.render.nos.sonic.compute._layout``): a down port's entry is the
same on every switch of the SKU, an up port's differs only in its ``description`` and ``mtu``. ``row_texts`` encodes
each port's entries once, as ``dumps_sorted`` would (orjson, keys sorted, at the depth of an entry of a table), with a
marker in place of the description and the MTU, and cuts the up entry's text at the markers. ``port_part`` then joins
the pieces, in port-name order (code point order, as ``sort_keys``), with each up port's description and MTU put in,
where that gives exactly the encoder's text: an MTU that is an ``int`` (its decimal digits need no escape) and
descriptions of ASCII without a quote, backslash or control character (the JSON encoders write such a string as it is,
between quotes). Otherwise it returns None and the caller encodes the table as a dict. The descriptions are checked
here, so the text holds only the layout's guarded pieces and checked descriptions and digits (the argument of
``compute._own_tables``).
"""

from __future__ import annotations

import orjson

from fabric.model.strings import is_safe_text
from fabric.plan.compute.facts import PortFacts

_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
_DESCRIPTION, _MTU = "@@description@@", "@@mtu@@"  # markers no layout value holds (row_texts checks)
_HEAD = '  "PORT": {\n'
_TAIL = "\n  }"
_SEPARATOR = ",\n"
_INT = frozenset({int})

RowText = tuple[str, str, tuple[str, str, str]]
"""A port's name, its down entry's text, and its up entry's text cut before the description and before the MTU (the
quotes of each value are the caller's)."""


def _entry(name: str, fields: dict[str, str]) -> str:
    """The text of ``PORT``'s entry ``name`` as it stands in the table (indented for depth 2, no separator)."""
    text = orjson.dumps({"PORT": {name: fields}}, option=_OPTIONS).decode()
    return text[2 + len(_HEAD) : -(len(_TAIL) + 2)]  # less '{\n', the table's head, its tail and '\n}'


def row_texts(layout: tuple[tuple[str, dict[str, str], dict[str, str]], ...]) -> tuple[RowText, ...] | None:
    """Each port's texts, in port-name order; None where a value would not encode as the pieces assume.

    Example:
        >>> rows = row_texts((("Ethernet8", {"alias": "etp2", "admin_status": "up"}, {"alias": "etp2", "admin_status": "down"}),))
        >>> rows[0][2]
        ('    "Ethernet8": {\\n      "admin_status": "up",\\n      "alias": "etp2",\\n      "description": ', ',\\n      "mtu": ', '\\n    }')
    """
    rows: list[RowText] = []
    for name, up, down in sorted(layout, key=lambda row: row[0]):
        values = [name, *up.values(), *down.values()]
        if any(type(v) is not str or _DESCRIPTION in v or _MTU in v for v in values):
            return None
        text = _entry(name, {**up, "description": _DESCRIPTION, "mtu": _MTU})
        head, _, rest = text.partition(f'"{_DESCRIPTION}"')
        middle, _, tail = rest.partition(f'"{_MTU}"')
        if not text.isascii() or not tail or _DESCRIPTION in tail:
            return None
        rows.append((name, _entry(name, down), (head, middle, tail)))
    return tuple(rows)


def port_part(ports: tuple[PortFacts, ...], rows: tuple[RowText, ...]) -> str | None:
    """``PORT``'s part of the config_db text (``fabric.render.nos.sonic.text``) with ``ports`` up, or None where the
    pieces cannot give the encoder's text (a description to escape, an MTU not an ``int``, a port not in the layout)."""
    descriptions = [p.description for p in ports]
    joined = "".join(descriptions)
    if not (joined.isascii() and is_safe_text(joined)) or '"' in joined or "\\" in joined:
        return None
    mtus = [p.mtu for p in ports]
    if not _INT.issuperset(map(type, mtus)):
        return None
    cabled = dict(zip([p.name for p in ports], zip(descriptions, mtus, strict=True), strict=True))
    entries: list[str] = []
    for name, down, (head, middle, tail) in rows:
        up = cabled.pop(name, None)
        entries.append(down if up is None else f'{head}"{up[0]}"{middle}"{up[1]}"{tail}')
    if cabled:  # a port the SKU lacks: the dict path refuses it by name
        return None
    return _HEAD + _SEPARATOR.join(entries) + _TAIL
