"""Deterministic JSON of a plan, written as a stream (byte-identical for the same definition).

Layout: objects that hold other objects are indented one space per level; a record (a plan object whose fields are all
plain values: an interface, a link, a switch, a tier) sits on one line, so a diff shows one line per changed cable.
The writer walks the plan and writes record by record: it never builds the whole document as one dict or string, which
keeps the memory of ``render`` flat for thousands of nodes (fabric.plan's objects are the only big thing in memory).
``json.loads`` of the text equals pydantic's ``mode="json"`` dump of the plan (tested).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence
from dataclasses import fields, is_dataclass
from functools import cache
from itertools import chain
from keyword import iskeyword
from operator import attrgetter
from typing import Any, TextIO, cast

import orjson
from pydantic import BaseModel

from fabric.plan.types import ClusterPlan

_SCALARS = frozenset({str, int, float, bool, type(None)})
_FLAT = frozenset({str, int, bool, type(None)})
"""The value types (exactly these, no subclass) of a record that ``_flat_records`` encodes with orjson."""


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


_encode = _encoder()


def plan_to_data(plan: ClusterPlan) -> dict[str, Any]:
    """The plan as JSON-compatible data (one dict; prefer ``write_plan_json`` for large plans)."""
    data: dict[str, Any] = json.loads(plan_to_json(plan))
    return data


def plan_to_json(plan: ClusterPlan) -> str:
    """The plan as JSON text ending in a newline.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> plan_to_json(plan_cluster(load_cluster("inventories/lab/cluster.yaml"))).startswith('{\\n "name": "lab",')
        True
    """
    buffer = io.StringIO()
    write_plan_json(plan, buffer)
    return buffer.getvalue()


def write_plan_json(plan: ClusterPlan, out: TextIO) -> None:
    """Write the plan as JSON to ``out``, record by record, ending in a newline."""
    _write(plan, out, "")
    out.write("\n")


def _write(value: object, out: TextIO, indent: str) -> None:
    names = _field_names(type(value))
    if names is not None:
        values = [getattr(value, name) for name in names]
        if all(type(v) in _SCALARS or _is_plain(v) for v in values):
            out.write(_encode(dict(zip(names, values, strict=True))))
            return
        inner = indent + " "
        out.write("{")
        for i, (name, item) in enumerate(zip(names, values, strict=True)):
            out.write(f'{"," if i else ""}\n{inner}"{name}": ')
            if type(item) in _SCALARS:  # most fields of a node: no call through _write
                out.write(_scalar(item))
            else:
                _write(item, out, inner)
        out.write(f"\n{indent}}}")
    elif isinstance(value, BaseModel):
        out.write(json.dumps(value.model_dump(mode="json"), indent=1).replace("\n", "\n" + indent))
    elif isinstance(value, tuple | list) and not _is_plain(items := cast("Sequence[object]", value)):
        inner = indent + " "
        if _write_records(items, out, inner):
            out.write(f"\n{indent}]")
            return
        out.write("[")
        for i, item in enumerate(items):
            out.write(f"{',' if i else ''}\n{inner}")
            _write(item, out, inner)
        out.write(f"\n{indent}]")
    else:
        out.write(_scalar(cast("object", value)))


def _write_records(items: Sequence[object], out: TextIO, inner: str) -> bool:
    """A list of records of one type, encoded in one call and cut into lines; False (nothing written) if it is not one.

    Every record boundary of the compact text is one ``}, {``; the cut is taken only when there are exactly as many
    pieces as records, so no string that happens to contain ``}, {`` can split a record.
    """
    names = _field_names(type(items[0]))
    if names is None or len(names) < 2 or any(type(item) is not type(items[0]) for item in items):
        return False
    parts = _flat_records(items, names)
    if parts is None:
        get: Callable[[object], tuple[object, ...]] = attrgetter(*names)
        try:
            text = _encode([dict(zip(names, get(item), strict=True)) for item in items])
        except TypeError:  # a field holds a plan object: not a record
            return False
        parts = text[1:-1].split("}, {")
    if len(parts) != len(items):
        return False
    out.write(f"[\n{inner}")
    out.write(f"}},\n{inner}{{".join(parts))
    return True


def _flat_records(items: Sequence[object], names: tuple[str, ...]) -> list[str] | None:
    """The records' text as ``_encode`` writes it, cut at each ``}, {`` as the caller cuts it, some 3x faster; None
    where it cannot be sure of the same bytes (the caller then encodes them itself).

    orjson writes the compact form, ``{"a":1,"b":"x"}``; the standard encoder puts a space after each ``:`` and ``,``.
    Taken only when every value is exactly a str, int, bool or None (no float: orjson writes ``1e16`` where ``json``
    writes ``1e+16``; no list, dict or plan object inside, so the only commas and colons outside strings are the
    record's own) and the text is ASCII without a backslash or DEL (no string holds an escape, a quote, a control or
    non-ASCII character, which the two write differently): then every ``"`` delimits a string. A key ends in ``":``
    and every key but the first starts with ``,"``; a string value could too only by starting with ``:`` (``"::1"``)
    or ending with ``,``, so the spaces go in only when the two counts are exactly the keys' (else None). A string
    that holds ``},{`` changes the number of pieces, which the caller refuses.
    """
    record = _record_dict(type(items[0]))
    if record is None:
        return None
    dicts = [record(item) for item in items]
    if not _FLAT.issuperset(map(type, chain.from_iterable(d.values() for d in dicts))):
        return None
    try:
        raw = orjson.dumps(dicts)
    except orjson.JSONEncodeError:  # an integer beyond 64 bits
        return None
    if not raw.isascii() or b"\\" in raw or b"\x7f" in raw:
        return None
    if raw.count(b'":') != len(items) * len(names) or raw.count(b',"') != len(items) * (len(names) - 1):
        return None
    return raw[1:-1].replace(b'":', b'": ').replace(b',"', b', "').decode().split("},{")


@cache
def _record_dict(cls: type) -> Callable[[object], dict[str, object]] | None:
    """``lambda o: {"a": o.a, "b": o.b}`` for a record type, some 2x faster than ``dict(zip(names, values))``; None
    if a field name is not a plain identifier (never for a dataclass's own fields)."""
    names = _field_names(cls)
    if names is None or not all(name.isidentifier() and not iskeyword(name) and name.isascii() for name in names):
        return None
    made: Callable[[object], dict[str, object]] = eval(  # noqa: S307 - built from checked identifiers only
        "lambda o: {" + ", ".join(f"{name!r}: o.{name}" for name in names) + "}"
    )
    return made


def _scalar(value: object) -> str:
    """JSON of a scalar without a trip through the encoder (the same text ``json.dumps`` gives); anything else encoded."""
    kind = type(value)
    if kind is str:
        return json.encoder.encode_basestring_ascii(cast("str", value))
    if kind is int:
        return str(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    return _encode(value)


@cache
def _field_names(cls: type) -> tuple[str, ...] | None:
    """The field names of a dataclass type (identifiers: written without escaping), None for anything else; a field whose
    metadata says ``plan_json: False`` (``fabric.plan.types.NOT_IN_PLAN_JSON``) is left out."""
    return tuple(f.name for f in fields(cls) if f.metadata.get("plan_json", True)) if is_dataclass(cls) else None


def _is_plain(value: object) -> bool:
    """A JSON scalar, or a list or string-keyed dict of them, as opposed to a plan object."""
    if type(value) in _SCALARS:
        return True
    if isinstance(value, tuple | list):
        return all(_is_plain(v) for v in cast("Sequence[object]", value))
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain(v) for k, v in cast("dict[object, object]", value).items())
    return False
