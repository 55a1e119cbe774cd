"""Load catalog data files: YAML with a line for every key, validated by a strict pydantic model, every problem named.

A broken file is an ``InputError`` whose findings name the file, the line and the YAML path of each problem, as a
broken cluster definition is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Generic, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from fabric.catalog.text import PATTERN_HELP
from fabric.errors import CatalogError, Finding, InputError

M = TypeVar("M", bound=BaseModel)
V = TypeVar("V")
Key = tuple[str | int, ...]


def load_models(files: Iterable[Path], schema: type[M], *, where: str) -> dict[str, M]:
    """Every file validated as ``schema``, by its ``name`` field; raise once with every problem of every file.

    The file name (without ``.yaml``) must equal the ``name`` inside, so a model is found where its name says.

    Raises:
        InputError: a file is not YAML, does not satisfy ``schema``, or is named differently from its ``name``.
    """
    models: dict[str, M] = {}
    findings: list[Finding] = []
    for file in files:
        label = f"{where}/{file.name}"
        found = _load_one(file, schema, label, findings)
        if found is None:
            continue
        name = str(getattr(found, "name", ""))
        if file.name != f"{name}.yaml":
            findings.append(Finding(("name",), f"'{name}' lives in {file.name}; name the file {name}.yaml", file=label, line=1))
        models[name] = found
    if findings:
        raise InputError(findings, where)
    return dict(sorted(models.items()))


# libyaml's parser when PyYAML was built with it (the wheels are): the same data, about ten times faster than the
# pure-Python one, which matters because every run reads the whole catalog (PyYAML docs, "Installation": CLoader).
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load_one(file: Path, schema: type[M], label: str, findings: list[Finding]) -> M | None:
    try:
        text = file.read_text(encoding="utf-8")
        data: object = yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader (CSafeLoader or SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        findings.append(Finding((), f"not valid YAML: {exc.problem}", file=label, line=mark.line + 1 if mark else None))
        return None
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        lines: dict[Key, int] = {}  # the line of every key, only for a file with problems to report
        node = yaml.compose(text, Loader=_LOADER)
        if node is not None:
            _walk(node, (), lines)
        for err in exc.errors():
            path: Key = tuple(err["loc"])
            shown = _short(err.get("input"))
            value = f" (got {shown})" if err["type"] != "missing" and not isinstance(err.get("input"), (dict, list)) else ""
            helped = PATTERN_HELP.get(str((err.get("ctx") or {}).get("pattern", "")))
            message = f"{shown} {helped}" if helped else f"{err['msg']}{value}"
            findings.append(Finding(path, message, file=label, line=_line(lines, path)))
        return None


def _short(value: object) -> str:
    """``value`` as Python writes it (control characters escaped), cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _walk(node: yaml.Node, path: Key, lines: dict[Key, int]) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = yaml.safe_load(key_node.value) if key_node.tag.endswith(":int") else key_node.value
            lines[(*path, key)] = key_node.start_mark.line + 1
            lines[(*path, str(key))] = key_node.start_mark.line + 1
            _walk(value_node, (*path, key), lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*path, index), lines)


def _line(lines: dict[Key, int], path: Key) -> int | None:
    for cut in range(len(path), -1, -1):
        line = lines.get(path[:cut])
        if line is None and cut and isinstance(path[cut - 1], str):
            line = lines.get((*path[: cut - 1], str(path[cut - 1])))
        if line is not None:
            return line
    return None


def data_files(directory: Path) -> list[Path]:
    """The ``*.yaml`` files of a directory, sorted."""
    return sorted(directory.glob("*.yaml"))


def read_builtin(load: Callable[[], dict[str, V]]) -> dict[str, V]:
    """The package's own catalog files: a broken one is a CatalogError, not something the definition can fix."""
    try:
        return load()
    except InputError as exc:
        raise CatalogError(exc.findings) from exc


class BuiltinCatalog(Mapping[str, V], Generic[V]):
    """A read-only mapping over the package's own catalog, read on first use (``load`` caches it)."""

    def __init__(self, label: str, load: Callable[[], dict[str, V]]) -> None:
        self._label = label
        self._load = load

    def __getitem__(self, name: str) -> V:
        return self._load()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __repr__(self) -> str:
        return f"{self._label}({', '.join(self)})"
