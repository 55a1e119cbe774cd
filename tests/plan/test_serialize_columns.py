"""plan.json's column encoder (fabric.plan._json_columns) against a json.dumps reference: each shortcut's guard, the
layouts a record that holds a non-scalar falls back to, and random records with hostile values."""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Sequence

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.plan import serialize
from fabric.plan.serialize import write_plan_json
from fabric.plan.types import HostInterface, Link, NodePlan, TierStats

SCALAR_TYPES = (str, int, float, bool, type(None))


def _plain(value: object) -> bool:
    if type(value) in SCALAR_TYPES:
        return True
    if isinstance(value, tuple | list):
        return all(_plain(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())  # pyright: ignore[reportUnknownVariableType]
    return False


def reference(value: object, indent: str = "") -> str:
    """The layout the module docstring describes, every piece of text from ``json.dumps`` (the writer before columns)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = [f.name for f in dataclasses.fields(value) if f.metadata.get("plan_json", True)]
        values = [getattr(value, name) for name in names]
        if all(_plain(v) for v in values):
            return json.dumps(dict(zip(names, values, strict=True)))
        inner = indent + " "
        texts = (json.dumps(v) if type(v) in SCALAR_TYPES else reference(v, inner) for v in values)
        return "{" + ",".join(f'\n{inner}"{n}": {t}' for n, t in zip(names, texts, strict=True)) + f"\n{indent}}}"
    if isinstance(value, tuple | list) and not _plain(value):
        items: Sequence[object] = value  # pyright: ignore[reportUnknownVariableType]
        inner = indent + " "
        first = items[0]
        if dataclasses.is_dataclass(first) and all(type(item) is type(first) for item in items):
            names = [f.name for f in dataclasses.fields(first) if f.metadata.get("plan_json", True)]
            if len(names) >= 2:
                try:
                    pieces = json.dumps([{n: getattr(item, n) for n in names} for item in items])[1:-1].split("}, {")
                except TypeError:
                    pieces = []
                if len(pieces) == len(items):
                    return f"[\n{inner}" + f"}},\n{inner}{{".join(pieces) + f"\n{indent}]"
        return "[" + ",".join(f"\n{inner}" + reference(item, inner) for item in items) + f"\n{indent}]"
    return json.dumps(value)


def written(value: object) -> str:
    stream = io.StringIO()
    write_plan_json(value, stream)  # type: ignore[arg-type] - any plan object streams the same way
    return stream.getvalue()


def _links(column: str, *values: object) -> tuple[Link, ...]:
    """Links that differ only in ``column`` (no column the same throughout, so no shortcut for a constant applies)."""
    base = Link("host", "leaf1", "e0", "gpu1", "eth0", 400, 3, subnet=None)
    return tuple(dataclasses.replace(base, **{column: v, "cable_m": i}) for i, v in enumerate(values))


@pytest.mark.parametrize(
    ("column", "values"),
    [
        # a string column goes in between quotes only as printable ASCII without a quote or backslash
        ("a_port", ("Süd", "e2")),
        ("a_port", ('a"b', "e2")),
        ("a_port", ("back\\slash", "e2")),
        ("a_port", ("tab\there", "e2")),
        ("a_port", ("del\x7f", "e2")),
        # an int column goes through str() only when every value is exactly an int
        ("speed_gbps", (True, 400)),
        ("speed_gbps", (400, 1 << 70)),
        ("speed_gbps", (400.0, 400)),
        ("speed_gbps", (1e16, 400)),
        ("speed_gbps", (float("nan"), 400)),
        # a mixed column (strings and None) through orjson only when its text is the standard encoder's and cuts at commas
        ("subnet", ("a,b", None)),
        ("subnet", ("Süd", None)),
        ("subnet", ('a"b', None)),
        ("subnet", ("back\\slash", None)),
        ("subnet", ("del\x7f", None)),
        ("subnet", (1 << 70, None)),
        ("subnet", (1e16, None)),
        ("subnet", (True, None)),
        ("subnet", ("x}, {y", None)),
        ("subnet", ('":', None)),
        ("subnet", (',"', None)),
    ],
)
def test_each_shortcut_gives_the_standard_encoders_text(column: str, values: tuple[object, ...]) -> None:
    links = _links(column, *values)
    assert written(links) == reference(links) + "\n"


def test_orjson_escapes_ascii_as_json_does_but_del() -> None:
    """What the orjson column shortcut relies on: among ASCII characters only DEL (which it refuses) differs."""
    assert [c for c in range(128) if orjson.dumps(chr(c)).decode() != json.dumps(chr(c))] == [0x7F]


@pytest.mark.parametrize("value", ["Süd", 'a"b', 1 << 70, 1e16, True, None])
def test_a_value_the_same_throughout_is_written_once_as_the_standard_encoder_writes_it(value: object) -> None:
    links = tuple(dataclasses.replace(link, subnet=value) for link in _links("cable_m", 1, 2, 3))
    assert written(links) == reference(links) + "\n"


def test_a_record_that_holds_a_plan_object_throughout_lays_its_list_out_item_by_item() -> None:
    tier = TierStats("leaf", 2, 64, 60, 400, 400, "1:1")  # equal in every record: no constant's shortcut for it
    links = _links("subnet", tier, tier)
    assert written(links) == reference(links) + "\n"
    assert '\n  "subnet": {"tier": "leaf"' in written(links)  # each link on its lines, the tier on one


@pytest.mark.parametrize("value", [[400], {"a": 1}, TierStats("leaf", 2, 64, 60, 400, 400, "1:1")])
def test_a_non_scalar_in_a_long_lists_last_window_lays_out_the_whole_list(monkeypatch: pytest.MonkeyPatch, value: object) -> None:
    monkeypatch.setattr(serialize, "WINDOW", 4)
    links = _links("cable_m", *range(9))
    links = (*links[:-1], dataclasses.replace(links[-1], subnet=value))
    assert written(links) == reference(links) + "\n"


class _Name(str):
    """A str subclass: the standard encoder writes it as a string, the layout treats it as no scalar."""

    __slots__ = ()


def test_a_string_that_splits_the_text_in_a_written_window_decides_the_layout_of_a_later_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serialize, "WINDOW", 4)
    links = _links("cable_m", *range(9))
    links = (dataclasses.replace(links[0], a_port="x}, {y"), *links[1:-1], dataclasses.replace(links[-1], a_port=_Name("e9")))
    assert written(links) == reference(links) + "\n"
    assert '\n  "a_port": "e9",' in written(links)  # the last link on its own lines: the whole list's text does not cut


def test_a_string_that_splits_the_encoders_text_in_a_list_with_a_non_scalar_is_laid_out_record_by_record() -> None:
    links = _links("subnet", [1], "x}, {y")  # the list makes the fast path refuse, the string makes the cut miscount
    assert written(links) == reference(links) + "\n"


def _node(name: str, interfaces: tuple[HostInterface, ...]) -> NodePlan:
    return NodePlan(name, "gpu", "gpu", 1, "hw", 8, interfaces, scalable_unit=1)


def _interface(name: object, plane: str = "compute") -> HostInterface:
    return HostInterface(name, plane, 0, 400, 9000, "ethernet", address=None)  # type: ignore[arg-type] - hostile values


def test_nodes_and_their_interfaces_match_the_reference_in_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serialize, "WINDOW", 5)
    nodes = tuple(_node(f"n{i}", (_interface(f"e{i}"), _interface("bmc", "oob"))) for i in range(7))
    assert written(nodes) == reference(nodes) + "\n"


@pytest.mark.parametrize(
    "odd",
    [
        (),  # no interfaces: a node on one line
        (_interface([1]), _interface("e1")),  # an interface that holds a list
        (_interface("x}, {y"), _interface(TierStats("leaf", 2, 64, 60, 400, 400, "1:1"))),  # one that holds a plan object
    ],
)
def test_a_node_unlike_the_others_keeps_its_own_layout(odd: tuple[HostInterface, ...]) -> None:
    nodes = (_node("a", (_interface("e0"),)), _node("b", odd), _node("c", (_interface("e0"), _interface("e1"))))
    assert written(nodes) == reference(nodes) + "\n"


_HOSTILE = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["::1", "e1,", ",", "}, {", "},{", '":', ',"', "\\", '"', "\x7f", "Süd", "None", "null"]),
    st.integers(min_value=-(1 << 70), max_value=1 << 70),
    st.sampled_from([0, 1, 400, -1]),
    st.floats(allow_nan=True),
    st.booleans(),
    st.none(),
    st.lists(st.integers(0, 3), max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_HOSTILE, _HOSTILE, st.sampled_from(["compute", None, 7])), min_size=1, max_size=6))
def test_random_records_match_the_standard_encoder(rows: list[tuple[object, object, object]]) -> None:
    links = tuple(Link("host", "leaf1", a, "gpu1", "eth0", 400, 3, subnet=b, plane=c) for a, b, c in rows)  # type: ignore[arg-type]
    assert written(links) == reference(links) + "\n"
    nodes = tuple(_node(f"n{i}", tuple(_interface(v) for v in (a, b))) for i, (a, b, _) in enumerate(rows))
    assert written(nodes) == reference(nodes) + "\n"
