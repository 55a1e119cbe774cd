"""Deterministic JSON of a plan, written as a stream (byte-identical for the same definition).

Layout: objects that hold other objects are indented one space per level; a record (a plan object whose fields are all
plain values: an interface, a link, a switch, a tier) sits on one line, so a diff shows one line per changed cable.
Every line is the standard encoder's text (``json.dumps``: ASCII, ``", "`` and ``": "``).
The writer walks the plan and writes a window of records at a time: it never builds the whole document as one dict or
string, which keeps the memory of ``render`` flat for thousands of nodes (fabric.plan's objects are the only big thing
in memory). The records of one type wait for each other across lists (every node's interfaces) and are encoded a field
at a time, thousands per call (``fabric.plan._json_columns``); a list whose records hold anything but scalars is laid
out as the standard encoder's text allows. ``json.loads`` of the text equals pydantic's ``mode="json"`` dump of the
plan (tested).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence
from dataclasses import fields, is_dataclass
from functools import cache
from itertools import chain
from operator import attrgetter, itemgetter
from typing import IO, Any, TextIO, cast

from pydantic import BaseModel

from fabric.plan._json_columns import SCALARS, encode, record_texts, scalar, stitch
from fabric.plan.types import ClusterPlan

WINDOW = 1024
"""Records encoded per call, and held before they are written (some 250 kB of text: 1,024 encode a little faster than
4,096 records, 8,192 slower)."""


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


def write_plan_json(plan: ClusterPlan, out: TextIO | IO[bytes]) -> None:
    """Write the plan as JSON to ``out``, a window of records at a time, ending in a newline: text to a text stream
    (an ``io.TextIOBase``), UTF-8 to any other (a binary file, a spool)."""
    text = cast("TextIO", out)
    writer = _Writer(text.write if isinstance(out, io.TextIOBase) else lambda part: cast("IO[bytes]", out).write(part.encode()))
    writer.value(plan, "")
    writer.parts.append("\n")
    writer.flush()


class _Writer:
    """The document's text in order, written out a window at a time; a list of records waits in a slot of ``parts``
    until a window of its type's records is encoded together."""

    def __init__(self, write: Callable[[str], object]) -> None:
        self.write = write
        self.parts: list[str] = []
        self.waiting: dict[type, list[tuple[int, str, Sequence[object]]]] = {}  # per type: (slot, indent, records)
        self.count = 0  # records waiting

    def flush(self) -> None:
        """Encode the records waiting and write out everything so far."""
        self._encode_waiting()
        self.write("".join(self.parts))
        self.parts.clear()

    def value(self, value: object, indent: str) -> None:
        names = _field_names(type(value))
        parts = self.parts
        if names is not None:
            values = [getattr(value, name) for name in names]
            if all(type(v) in SCALARS or _is_plain(v) for v in values):
                parts.append(encode(dict(zip(names, values, strict=True))))
                return
            inner = indent + " "
            parts.append("{")
            for i, (name, item) in enumerate(zip(names, values, strict=True)):
                parts.append(f'{"," if i else ""}\n{inner}"{name}": ')
                if type(item) in SCALARS:  # most fields of a node: no call through value
                    parts.append(scalar(item))
                else:
                    self.value(item, inner)
            parts.append(f"\n{indent}}}")
        elif isinstance(value, BaseModel):
            parts.append(json.dumps(value.model_dump(mode="json"), indent=1).replace("\n", "\n" + indent))
        elif isinstance(value, tuple | list) and not _is_plain(items := cast("Sequence[object]", value)):
            self._sequence(items, indent)
        else:
            parts.append(scalar(cast("object", value)))

    def _sequence(self, items: Sequence[object], indent: str) -> None:
        """A list that holds plan objects: records one per line, anything else an item at a time."""
        inner = indent + " "
        kind = type(items[0])
        names = _field_names(kind)
        same = names is not None and len(set(map(type, items))) == 1
        if same and names is not None and len(names) >= 2 and _flat(items[0], names):
            self.parts.append(f"[\n{inner}")
            if len(items) < WINDOW:
                self.waiting.setdefault(kind, []).append((len(self.parts), inner, items))
                self.parts.append("")  # the slot, filled when the window is encoded
                self.count += len(items)
                if self.count >= WINDOW:
                    self.flush()
            else:
                self._long(items, names, inner)
            self.parts.append(f"\n{indent}]")
            return
        if not same or names is None or not self._objects(items, names, inner):
            self.parts.append("[")
            for i, item in enumerate(items):
                self.parts.append(f"{',' if i else ''}\n{inner}")
                self.value(item, inner)
        self.parts.append(f"\n{indent}]")

    def _objects(self, items: Sequence[object], names: tuple[str, ...], inner: str) -> bool:
        """Plan objects of one type that each hold another (nodes and their interfaces), as ``value`` writes them, their
        scalar fields a column at a time; False (nothing written) unless each field holds scalars in every object or
        non-plain values in every object."""
        columns = [list(map(attrgetter(name), items)) for name in names]
        nested = [not SCALARS.issuperset(map(type, column)) for column in columns]
        if not any(nested) or not all(_holds_objects(column) for column, is_nested in zip(columns, nested, strict=True) if is_nested):
            return False  # a field that is plain in some objects: each object decides its own layout
        field = inner + " "
        runs: list[list[str]] = []  # per run of scalar fields: each object's text of them, with the keys around
        scalars: list[list[object]] = []
        keys: list[str] = []
        key = f"{{\n{field}"
        for name, column, is_nested in zip(names, columns, nested, strict=True):
            key += f'"{name}": '
            if is_nested:
                text = stitch(scalars, keys, key, len(items))
                if text is None:
                    return False
                runs.append(text)
                scalars, keys, key = [], [], f",\n{field}"
            else:
                scalars.append(column)
                keys.append(key)
                key = f",\n{field}"
        last = stitch(scalars, keys, f"\n{inner}}}", len(items))
        if last is None:
            return False
        runs.append(last)
        values = [column for column, is_nested in zip(columns, nested, strict=True) if is_nested]
        kinds = [_record_lists(column) for column in values]
        opening, slot_indent, closing = f"[\n{field} ", field + " ", f"\n{field}]"
        parts = self.parts  # flush empties it in place
        parts.append("[")
        for i in range(len(items)):
            parts.append(f",\n{inner}" if i else f"\n{inner}")
            for run, column, kind in zip(runs, values, kinds):  # noqa: B905 - one run more than nested columns
                parts.append(run[i])
                item = column[i]
                if kind is not None:  # what _sequence does with a short list of records, without asking again
                    records = cast("Sequence[object]", item)
                    parts.append(opening)
                    self.waiting.setdefault(kind, []).append((len(parts), slot_indent, records))
                    parts.append("")
                    parts.append(closing)
                    self.count += len(records)
                elif type(item) is tuple or type(item) is list:
                    self._sequence(cast("Sequence[object]", item), field)
                else:
                    self.value(item, field)
            parts.append(last[i])
            if self.count >= WINDOW:
                self.flush()
        return True

    def _long(self, items: Sequence[object], names: tuple[str, ...], inner: str) -> None:
        """A list of at least a window of records (the fabric's cables), encoded and written a window at a time.

        A window already written holds scalars only, and such a record's line is the same whether the whole list is laid
        out as records or item by item; so where a later record holds a non-scalar, only the rest of the list is laid
        out again, told whether a string written so far holds ``}, {`` (the whole list's text would not cut then)."""
        separator = f",\n{inner}"
        self.flush()
        cut = True
        for start in range(0, len(items), WINDOW):
            encoded = record_texts(items[start : start + WINDOW], names)
            window = separator.join(encoded) if encoded is not None else _records(items[start:], names, inner, fast=False, cut=cut)
            if start:
                self.write(separator)
            self.write(window)
            if encoded is None:
                return
            cut = cut and "}, {" not in window  # records are joined by "},\n": the text is a string's

    def _encode_waiting(self) -> None:
        """Fill each waiting list's slot: every record of a type in one call, each list on its own where that fails."""
        for kind, lists in self.waiting.items():
            names = _field_names(kind) or ()
            encoded = record_texts(list(chain.from_iterable(items for _, _, items in lists)), names)
            start = 0
            for slot, inner, items in lists:
                if encoded is None:
                    self.parts[slot] = _records(items, names, inner, fast=True)
                else:
                    self.parts[slot] = f",\n{inner}".join(encoded[start : start + len(items)])
                    start += len(items)
        self.waiting.clear()
        self.count = 0


def _records(items: Sequence[object], names: tuple[str, ...], inner: str, *, fast: bool, cut: bool = True) -> str:
    """The lines of a list of records of one type (between ``[`` and ``]``), without the help of other lists.

    A record that holds a list or dict stays on one line as long as the standard encoder's text of the whole list can
    be cut into records: every record boundary of the compact text is one ``}, {``, and the cut is taken only when there
    are exactly as many pieces as records, so no string that happens to contain ``}, {`` can split a record. Otherwise
    (a string that holds ``}, {``, a field that holds a plan object) each record is laid out on its own; ``cut`` False
    says a string in the records before these (``_Writer._long``) holds one.
    """
    if fast and (encoded := record_texts(items, names)) is not None:
        return f",\n{inner}".join(encoded)
    get: Callable[[object], tuple[object, ...]] = attrgetter(*names)
    try:
        pieces = encode([dict(zip(names, get(item), strict=True)) for item in items])[1:-1].split("}, {")
    except TypeError:  # a field holds a plan object: not a record
        pieces = []
    if cut and len(pieces) == len(items):
        return f"}},\n{inner}{{".join(pieces)
    lines: list[str] = []
    writer = _Writer(lines.append)
    for i, item in enumerate(items):
        writer.parts.append(f",\n{inner}" if i else "")
        writer.value(item, inner)
    writer.flush()
    return "".join(lines)


def _flat(item: object, names: tuple[str, ...]) -> bool:
    """False where the first record holds a plan object, on its own or first in a list (a node and its interfaces): the
    standard encoder refuses the list, so each item is laid out on its own (``_records`` would find the same)."""
    values: tuple[object, ...] = attrgetter(*names)(item)
    if SCALARS.issuperset(map(type, values)):
        return True
    for value in values:
        if type(value) not in SCALARS and (
            _field_names(type(value)) is not None
            or (isinstance(value, tuple | list) and value and _field_names(type(cast("Sequence[object]", value)[0])) is not None)
        ):
            return False
    return True


def _holds_objects(column: list[object]) -> bool:
    """Every value a plan object or a list of them (none of them plain: each object that holds one spans lines)."""
    kinds = set(map(type, column))
    if kinds <= {tuple, list}:
        if not all(column):
            return False
        kinds = set(map(type, map(itemgetter(0), cast("list[Sequence[object]]", column))))
    return all(_field_names(kind) is not None for kind in kinds)


def _record_lists(column: list[object]) -> type | None:
    """The record type when every value is a list of fewer than ``WINDOW`` records of that one type, else None.

    Such a list waits for its window as ``_Writer._sequence`` would have it wait; one whose first record holds a plan
    object (``_flat``) then fails the window's encoding and is laid out on its own, as ``_sequence`` lays it out."""
    if not set(map(type, column)) <= {tuple, list} or not all(column):
        return None
    lists = cast("list[Sequence[object]]", column)
    kinds = set(map(type, chain.from_iterable(lists)))
    if len(kinds) != 1 or max(map(len, lists)) >= WINDOW:
        return None
    names = _field_names(kind := kinds.pop())
    return kind if names is not None and len(names) >= 2 else None


@cache
def _field_names(cls: type) -> tuple[str, ...] | None:
    """The field names of a dataclass type (identifiers: written without escaping), None for anything else; a field whose
    metadata says ``plan_json: False`` (``fabric.plan.types.NOT_IN_PLAN_JSON``) is left out."""
    return tuple(f.name for f in fields(cls) if f.metadata.get("plan_json", True)) if is_dataclass(cls) else None


def _is_plain(value: object) -> bool:
    """A JSON scalar, or a list or string-keyed dict of them, as opposed to a plan object."""
    if type(value) in SCALARS:
        return True
    if isinstance(value, tuple | list):
        return all(_is_plain(v) for v in cast("Sequence[object]", value))
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain(v) for k, v in cast("dict[object, object]", value).items())
    return False
