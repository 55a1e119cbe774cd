"""Every string and number of every input model is bounded: the definition's models (``fabric/model``) and the
catalog's data-file schemas (``fabric/catalog``).

The walk reads each model's fields as pydantic holds them, down through ``Optional``, ``Annotated``, tuples, lists and
dict keys and values, and checks every ``str`` leaf for a pattern and a bounded length (``max_length``, or a pattern
that cannot match more than a fixed number of characters) and every ``int``/``float`` leaf for an upper bound (``le``
or ``lt``). ``Literal`` and ``bool`` leaves are closed sets already; a leaf that is bounded another way is in
``ALLOWED`` with the reason. A new field without a bound fails here, naming the model and the field.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import types
import typing
from collections.abc import Iterator
from typing import Any

import annotated_types
import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo

import fabric.catalog
import fabric.model

LONGEST = 4096
"""A pattern that can match longer strings than this counts as unbounded (the longest bounded pattern matches 253)."""
ALLOWED: dict[str, str] = {
    # "Model.field": "why it needs no pattern or bound of its own",
}
"""Leaves bounded in another way than a pattern or ``le``, by ``Model.field`` (``[]``/``{}``/``{key}`` for items)."""


def input_models() -> list[type[BaseModel]]:
    """Every pydantic model defined in ``fabric.model`` and ``fabric.catalog`` (all their modules imported)."""
    found: dict[str, type[BaseModel]] = {}
    for package in (fabric.model, fabric.catalog):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            module = importlib.import_module(info.name)
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if issubclass(cls, BaseModel) and cls.__module__ == module.__name__:
                    found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return [found[name] for name in sorted(found)]


def _constraints(metadata: list[Any]) -> list[Any]:
    """The constraint objects of ``Annotated`` metadata, FieldInfo's own metadata unpacked."""
    flat: list[Any] = []
    for item in metadata:
        if isinstance(item, FieldInfo):
            flat.extend(_constraints(list(item.metadata)))
        else:
            flat.append(item)
    return flat


def leaves(annotation: Any, where: str, metadata: list[Any]) -> Iterator[tuple[str, type, list[Any]]]:
    """Every ``str``/``int``/``float`` leaf of an annotation, with the constraints that apply to it."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        yield from leaves(args[0], where, metadata + _constraints(list(args[1:])))
    elif origin in (typing.Union, types.UnionType):
        for arg in args:
            if arg is not type(None):
                yield from leaves(arg, where, metadata)
    elif origin is typing.Literal or annotation is bool:
        return
    elif origin in (tuple, list, set, frozenset):
        for arg in args:
            if arg is not Ellipsis:
                yield from leaves(arg, f"{where}[]", [])
    elif origin is dict:
        yield from leaves(args[0], f"{where}{{key}}", [])
        yield from leaves(args[1], f"{where}{{}}", [])
    elif annotation in (str, int, float):
        yield where, annotation, metadata


def unbounded_collections(annotation: Any, where: str, metadata: list[Any]) -> Iterator[str]:
    """Every tuple, list, set or dict in an annotation with no ``max_length``; a dict keyed by a ``Literal`` (a closed
    set of keys) is bounded by its keys."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        yield from unbounded_collections(args[0], where, metadata + _constraints(list(args[1:])))
    elif origin in (typing.Union, types.UnionType):
        for arg in args:
            yield from unbounded_collections(arg, where, metadata)
    elif origin in (tuple, list, set, frozenset, dict):
        closed_keys = origin is dict and typing.get_origin(args[0]) is typing.Literal
        if not closed_keys and not any(isinstance(c, annotated_types.MaxLen) for c in metadata):
            yield where
        for arg in args:
            if arg is not Ellipsis:
                yield from unbounded_collections(arg, f"{where}[]", [])


def _longest_match(pattern: str) -> int:
    """The most characters ``pattern`` can match (``re``'s own parser; unbounded repeats count as very many)."""
    return int(re._parser.parse(pattern).getwidth()[1])  # type: ignore[attr-defined] - re has no public width oracle


def problem(kind: type, constraints: list[Any]) -> str | None:
    """What the leaf lacks, or None."""
    if kind is str:
        patterns = [c.pattern for c in constraints if isinstance(getattr(c, "pattern", None), str)]
        if not patterns:
            return "a str with no pattern: give it a strict string type (fabric/model/strings.py, fabric/catalog/text.py)"
        lengths = [c.max_length for c in constraints if isinstance(c, annotated_types.MaxLen)]
        if not lengths and min(_longest_match(p) for p in patterns) > LONGEST:
            return f"a str whose pattern {patterns[0]!r} matches any length: give it a max_length or bound the pattern's repeats"
        return None
    if not any(isinstance(c, annotated_types.Le | annotated_types.Lt) for c in constraints):
        return f"an {kind.__name__} with no upper bound: give it le= with the physical limit, cited"
    return None


def unbounded() -> list[str]:
    found: list[str] = []
    for model in input_models():
        for name, field in model.model_fields.items():
            base = f"{model.__name__}.{name}"
            for where, kind, constraints in leaves(field.annotation, base, _constraints(list(field.metadata))):
                missing = problem(kind, constraints)
                if missing is not None and where not in ALLOWED:
                    found.append(f"{model.__module__}.{where}: {missing}")
    return sorted(set(found))


def test_the_walk_reaches_every_input_model() -> None:
    names = {model.__name__ for model in input_models()}
    # the roots of the definition and of every catalog data file, and models only reached through a Deferred type
    assert {"ClusterSpec", "NodeProfile", "SwitchModel", "AwsInstanceTypeSpec", "GcpMachineTypeSpec", "AzureVmSizeSpec"} <= names
    assert {"AwsSpec", "GcpSpec", "AzureSpec", "FsxLustreSpec", "SonicPort", "SonicBuffers", "PortGroupSpec"} <= names
    assert len(names) > 50


def test_every_string_has_a_pattern_and_a_length_and_every_number_an_upper_bound() -> None:
    assert unbounded() == []


def test_every_list_and_mapping_has_a_length_bound() -> None:
    """Counts reach outputs too: how many ports, SKUs, partitions or tags a file may list is bounded like a number."""
    found = sorted(
        f"{model.__module__}.{where}"
        for model in input_models()
        for name, field in model.model_fields.items()
        for where in unbounded_collections(field.annotation, f"{model.__name__}.{name}", _constraints(list(field.metadata)))
        if where not in ALLOWED
    )
    assert found == []


def test_every_allowance_names_a_leaf_that_exists_and_gives_a_reason() -> None:
    every = {
        where
        for model in input_models()
        for name, field in model.model_fields.items()
        for where, _, _ in leaves(field.annotation, f"{model.__name__}.{name}", [])
    }
    for where, reason in ALLOWED.items():
        assert where in every, f"ALLOWED names {where}, which no model has"
        assert len(reason) > 20, f"{where}: say why it needs no bound of its own"


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (str, "no pattern"),
        (typing.Annotated[str, FieldInfo(pattern=r"^[a-z]+$")], "matches any length"),
        (typing.Annotated[str, FieldInfo(pattern=r"^[a-z]+$", max_length=8)], None),
        (typing.Annotated[str, FieldInfo(pattern=r"^[a-z]{1,8}$")], None),
        (int, "no upper bound"),
        (typing.Annotated[int, FieldInfo(ge=1)], "no upper bound"),
        (typing.Optional[typing.Annotated[int, FieldInfo(ge=1, le=8)]], None),  # noqa: UP045 - a runtime Union to walk
        (tuple[typing.Annotated[float, FieldInfo(gt=0)], ...], "no upper bound"),
        (dict[str, typing.Annotated[int, FieldInfo(lt=9)]], "no pattern"),
        (typing.Literal["a", "b"], None),
        (bool, None),
    ],
)
def test_the_walk_finds_what_a_leaf_lacks(annotation: Any, expected: str | None) -> None:
    found = [problem(kind, constraints) for _, kind, constraints in leaves(annotation, "M.f", [])]
    if expected is None:
        assert all(p is None for p in found)
    else:
        assert any(p is not None and expected in p for p in found), found


@pytest.mark.parametrize(
    ("annotation", "unbounded"),
    [
        (tuple[int, ...], ["M.f"]),
        (typing.Annotated[tuple[int, ...], FieldInfo(max_length=4)], []),
        (dict[str, tuple[str, ...]], ["M.f", "M.f[]"]),
        (dict[typing.Literal["a", "b"], int], []),
        (typing.Optional[typing.Annotated[dict[str, int], FieldInfo(max_length=4)]], []),  # noqa: UP045 - a runtime Union to walk
    ],
)
def test_the_walk_finds_an_unbounded_collection(annotation: Any, unbounded: list[str]) -> None:
    assert list(unbounded_collections(annotation, "M.f", [])) == unbounded
