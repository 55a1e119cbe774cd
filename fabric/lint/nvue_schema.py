"""Cumulus ``nv set`` lines walked onto NVIDIA's NVUE OpenAPI schema of the release the file claims.

The schema is the one NVIDIA publishes per Cumulus Linux release ("Cumulus Linux NVUE Configuration Schema", the NVUE
OpenAPI spec, e.g. version 1.10.0.93 for CL 5.14 and 1.11.0.89 for CL 5.15), as Pydantic v2 models in the PyPI package
``nvueschema`` 0.1.0 (https://github.com/nemith/nvueschema; one module ``nvueschema.models.v5_X`` per release 5.0-5.18,
each with a root ``NvueConfig``). It is an optional dependency (requirements-dev.txt): without it ``available()`` is
False and the linter skips this check.

The walk is strict: every path word of ``nv set <path…> [value]`` must be a field (its alias) of the current object or
a key of a collection (``Dict[str, …]``); the words left at a leaf are its value, validated with the field's own type
(ranges, ``Literal`` enums, patterns). Unknown words are refused, never ignored as the models' default ``extra`` would.
Limits: collection keys are free strings in the models (a breakout mode's spelling is not checked), and a ``Dict[str,
Any]`` collection accepts whatever follows its key.
"""

from __future__ import annotations

import importlib
import importlib.util
import shlex
import types
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeGuard, Union, cast, get_args, get_origin

MODULE = "nvueschema.models.v{major}_{minor}"


@dataclass(frozen=True, slots=True)
class Refusal:
    """A line the schema refuses: its number (1-based), its text and why."""

    line: int
    text: str
    reason: str


def available() -> bool:
    """``nvueschema`` is installed (the check runs only then)."""
    return importlib.util.find_spec("nvueschema") is not None


def releases() -> tuple[str, ...]:
    """The Cumulus releases the installed schema package has a model of ("5.0" … "5.18"); () without it."""
    if not available():
        return ()
    versions = importlib.import_module("nvueschema.models._versions")
    return tuple(cast("tuple[str, ...]", versions.VERSIONS))


@cache
def root_model(release: str) -> type[Any]:
    """``NvueConfig`` of ``release`` ("5.14").

    Raises:
        LookupError: the package is missing or has no model of that release.
    """
    if release not in releases():
        msg = f"no NVUE schema for Cumulus Linux {release} (nvueschema installed: {available()}; it has {', '.join(releases()) or 'none'})"
        raise LookupError(msg)
    major, minor = release.split(".")
    return cast("type[Any]", importlib.import_module(MODULE.format(major=major, minor=minor)).NvueConfig)


def _fields(model: type[Any]) -> dict[str, tuple[str, Any]]:
    """A model's fields by the word the CLI writes (its alias): (attribute name, annotation)."""
    fields = cast("dict[str, Any]", model.model_fields)
    return {(info.alias or name): (name, info.annotation) for name, info in fields.items()}


def _strip_optional(annotation: object) -> object:
    """``Optional[X]`` (nested any depth) as ``X``; other unions and types unchanged."""
    while get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) != 1:
            return annotation
        annotation = args[0]
    return annotation


def _is_model(annotation: object) -> TypeGuard[type[Any]]:
    return isinstance(annotation, type) and hasattr(annotation, "model_fields")


def check_line(release: str, line: str) -> str | None:
    """Why the schema of ``release`` refuses one ``nv set`` line, or None when it takes it.

    Example:
        >>> check_line("5.15", "nv set interface swp1 ip address 10.0.0.1/31") if available() else "no 'ip' under /interface/swp1"
        "no 'ip' under /interface/swp1"
    """
    try:
        words = shlex.split(line)
    except ValueError as exc:  # a hand-edited line with an open quote
        return f"the line does not split into words ({exc})"
    if words[:2] != ["nv", "set"]:
        return "not an 'nv set' command"
    return _walk(root_model(release), words[2:])


def _walk(root: type[Any], words: list[str]) -> str | None:
    """The walk of ``check_line`` from the root object over the path words; None when every word lands."""
    node: object = root
    path = ""
    rest = words
    while rest:
        if get_origin(node) is dict:
            path, rest, node = f"{path}/{rest[0]}", rest[1:], _strip_optional(get_args(node)[1])
            if node is Any:
                return None  # a set of keys (addresses, servers): the key is the value, nothing below is typed
            continue
        if not _is_model(node):
            return f"'{' '.join(rest)}' follows {path}, which takes no words here"
        model = node
        found = _fields(model).get(rest[0])
        if found is None:
            return f"no '{rest[0]}' under {path or '/'}"
        name, annotation = found
        inner = _strip_optional(annotation)
        if not (_is_model(inner) or get_origin(inner) is dict):
            value = " ".join(rest[1:])
            if not value:
                return f"{path}/{rest[0]} is a value and the line gives none"
            return _leaf_error(model, name, rest[0], value, f"{path}/{rest[0]}")
        path, rest, node = f"{path}/{rest[0]}", rest[1:], inner
    return None  # an object or collection named with no value: NVUE creates it (e.g. `qos pfc-watchdog`)


def _leaf_error(model: type[Any], name: str, alias: str, value: str, path: str) -> str | None:
    """The field's own validation of ``value`` (its type, range, enum, pattern), as one sentence; None when valid."""
    from pydantic import ValidationError  # pydantic comes with nvueschema; imported only when it runs

    try:
        model.model_validate({alias: value})
    except ValidationError as err:
        errors = [e for e in err.errors() if e["loc"] and e["loc"][0] in (alias, name)]
        if errors:
            return f"{path} value {value!r} refused: {errors[0]['msg']}"
    return None


def refusals(release: str, text: str) -> list[Refusal]:
    """Every ``nv set`` line of a rendered ``nvue.sh`` that the schema of ``release`` refuses.

    Raises:
        LookupError: no schema of ``release`` is installed.
    """
    root_model(release)
    out: list[Refusal] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("nv set "):
            reason = check_line(release, line)
            if reason is not None:
                out.append(Refusal(number, line, reason))
    return out


def set_lines(text: str) -> int:
    """How many ``nv set`` lines ``text`` has (the count a check covers)."""
    return sum(1 for raw in text.splitlines() if raw.strip().startswith("nv set "))


def declared_release(text: str) -> str | None:
    """The release a rendered ``nvue.sh`` declares in its header ("… for Cumulus Linux 5.14 …"), or None."""
    for raw in text.splitlines()[:3]:
        _, found, after = raw.partition("for Cumulus Linux ")
        if found:
            return after.split()[0].rstrip(";,")
    return None
