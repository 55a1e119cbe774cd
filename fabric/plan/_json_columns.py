"""Many plan objects of one type as JSON text, a field at a time: the bytes ``json.dumps`` writes, some 3x faster.

``fabric.plan.serialize`` writes a list of thousands of records (a node's interfaces, the fabric's cables) one line per
record. Encoding them one ``json.dumps`` call each, or one orjson call per list followed by a rewrite of orjson's
compact separators, spends most of its time per call and per byte. Here the values of one field across every object
form a column; a column's text is settled once (a plain-ASCII string column needs only its quotes, an int column only
``str``), and one generated f-string per object type stitches the fields' texts between the fixed key texts
(``"name": ``, ``, "plane": ``): no per-value call into an encoder, no pass over the finished text.

Every column gets exactly the standard encoder's text (``json.dumps``: ``ensure_ascii``, ``", "`` and ``": "``), and
each shortcut has a guard that hands the column to that encoder, value by value, when the shortcut could differ:

- a string column goes in as it is only when its strings are printable ASCII without ``"`` or ``\\`` (the standard
  encoder escapes the rest: quotes, backslashes, controls, DEL, anything beyond ASCII);
- an int column is written with ``str`` only when every value is exactly an ``int`` (``str`` of a bool is ``True``);
- a column mixing strings, ints, bools and None is encoded by orjson in one call and cut at its commas only when the
  text is ASCII without DEL (orjson escapes every other ASCII character as ``json`` does, tested; it leaves DEL and
  anything beyond ASCII as they are), has exactly one comma between values (no string holds one) and orjson took
  every int (it refuses ints beyond 64 bits);
- any other scalar (a float: orjson writes ``1e16`` where ``json`` writes ``1e+16``, ``null`` for NaN) is encoded
  value by value.

A value that is not a scalar (a list, a dict, a plan object) makes the whole call return None: the caller lays those
out itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import lru_cache
from operator import attrgetter
from typing import cast

import orjson

_NONE = type(None)
SCALARS = frozenset({str, int, float, bool, _NONE})
"""The value types (exactly these, no subclass) written as JSON scalars."""
_ORJSON = frozenset({str, int, bool, _NONE})
"""The value types orjson writes as the standard encoder does (given the guards above)."""


def _encoder() -> Callable[[object], str]:
    """Compact ASCII JSON of one value, the same text as ``json.dumps``.

    ``json.dumps`` builds a new C encoder on every call, which costs more than encoding a small record; this builds
    CPython's C encoder once (``json.encoder.c_make_encoder``, the same arguments ``JSONEncoder.iterencode`` passes)
    and falls back to ``json.dumps`` where it is missing.
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return json.dumps
    encode = make(None, None, json.encoder.encode_basestring_ascii, None, ": ", ", ", False, False, True)  # noqa: FBT003 - positional C API

    def run(value: object) -> str:
        if isinstance(value, str):
            return json.encoder.encode_basestring_ascii(value)
        return "".join(encode(value, 0))

    return run


encode = _encoder()


def scalar(value: object) -> str:
    """JSON of a scalar without a trip through the encoder (the same text ``json.dumps`` gives); anything else encoded.

    Example:
        >>> [scalar(v) for v in ("a\\"b", 7, None, True, 1e16)]
        ['"a\\\\"b"', '7', 'null', 'true', '1e+16']
    """
    kind = type(value)
    if kind is str:
        return json.encoder.encode_basestring_ascii(cast("str", value))
    if kind is int:
        return str(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    return encode(value)


def record_texts(items: Sequence[object], names: Sequence[str]) -> list[str] | None:
    """Each object's ``json.dumps`` text as a dict of ``names`` (one line); None if a field holds a non-scalar.

    Example:
        >>> from fabric.plan.types import TierStats
        >>> record_texts([TierStats("leaf", 2, 64, 60, 400, 400, "1:1")], ["tier", "switches", "oversubscription"])
        ['{"tier": "leaf", "switches": 2, "oversubscription": "1:1"}']
    """
    keys = [("{" if i == 0 else ", ") + scalar(name) + ": " for i, name in enumerate(names)]
    return stitch([list(map(attrgetter(name), items)) for name in names], keys, "}", len(items))


def stitch(columns: Sequence[list[object]], keys: Sequence[str], end: str, count: int) -> list[str] | None:
    """Per object (``count`` of them), ``keys[i]`` followed by the JSON of its value in ``columns[i]``, for each column
    in turn, then ``end``; None if a value is not a scalar (the caller then lays the objects out itself)."""
    literals: list[str] = []  # the fixed text before each column that is passed in, then the text after the last
    passed: list[list[object]] = []
    literal = ""
    for values, key in zip(columns, keys, strict=True):
        column = _column(values)
        if column is None:
            return None
        literal += key
        if isinstance(column, str):  # the same text for every object
            literal += column
            continue
        texts, quoted = column
        literals.append(literal + '"' if quoted else literal)
        passed.append(texts)
        literal = '"' if quoted else ""
    literals.append(literal + end)
    if not passed:
        return [literals[0]] * count
    return list(map(_stitcher(tuple(literals)), *passed))


def _column(values: list[object]) -> tuple[list[object], bool] | str | None:
    """One field's values as the f-string takes them: (values, whether they go between quotes), the text every value
    shares, or None if one is not a scalar."""
    kinds = set(map(type, values))
    if len(kinds) == 1 and kinds <= SCALARS and values[-1] == values[0] and values.count(values[0]) == len(values):
        return scalar(values[0])  # one value throughout (a cable's plane, a speed): its text once
    if kinds == {str}:
        joined = "".join(cast("list[str]", values))
        if joined.isascii() and joined.isprintable() and '"' not in joined and "\\" not in joined:
            return values, True  # JSON's text of each is the string between quotes
    elif kinds == {int}:
        return values, False  # f"{v}" of an int is str(v), json's text
    elif kinds <= _ORJSON and (encoded := _orjson_column(values)) is not None:
        return cast("list[object]", encoded), False
    if not kinds <= SCALARS:
        return None
    return cast("list[object]", list(map(scalar, values))), False


def _orjson_column(values: list[object]) -> list[str] | None:
    """Each value's JSON text from one orjson call; None where orjson's text could differ from the standard encoder's
    or cannot be cut into values at its commas."""
    try:
        raw = orjson.dumps(values)
    except orjson.JSONEncodeError:  # an int beyond 64 bits
        return None
    if not raw.isascii() or b"\x7f" in raw or raw.count(b",") != len(values) - 1:
        return None
    return raw[1:-1].decode().split(",")


@lru_cache(maxsize=256)
def _stitcher(literals: tuple[str, ...]) -> Callable[..., str]:
    """``lambda v0, v1: f"{t0}{v0}{t1}{v1}{t2}"`` with ``t0``... the fixed texts (passed as names: no text of a key
    or indent ever becomes source code)."""
    count = len(literals) - 1
    body = "".join(f"{{t{i}}}{{v{i}}}" for i in range(count)) + f"{{t{count}}}"
    names = {f"t{i}": text for i, text in enumerate(literals)}
    made: Callable[..., str] = eval(f"lambda {', '.join(f'v{i}' for i in range(count))}: f'{body}'", names)  # noqa: S307 - names only
    return made
