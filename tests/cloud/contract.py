"""Check registered resource inputs against the provider SDKs' typed args classes (the providers' schema, as shipped).

The Python SDKs are generated from each provider's Pulumi schema: every resource has an ``<Name>Args`` input type whose
properties carry the wire names, the types and the required arguments; Azure Native ships the schema's enums as
``Enum`` classes, and the AWS and GCP SDKs carry their closed value lists in the argument docs ("Possible values are:
`A`, `B`", "Valid values are `A`, and `B`", "accepts the value `A`, `B`, or `C`"). ``contract_problems`` walks what a
component registered under the mocks through those classes, so an argument the provider would reject at ``pulumi up``
fails here instead.
"""

from __future__ import annotations

import collections.abc
import enum
import importlib
import inspect
import re
import types
import typing
from functools import cache
from typing import Any

import pulumi
from pulumi import _types  # the SDK's own wire-name and type tables; no public equivalent

PACKAGES = {"aws": "pulumi_aws", "gcp": "pulumi_gcp", "azure-native": "pulumi_azure_native"}
_CLOSED_LIST = re.compile(
    r"(?:Possible values are:?|Valid values are:?|accepts the value)\s+((?:`[^`]+`(?:,\s*(?:and|or)\s+|\s+(?:and|or)\s+|,\s*)?)+)"
)


def args_class(token: str) -> type:
    """The SDK args class of a resource type token, e.g. ``aws:ec2/launchTemplate:LaunchTemplate`` → ``LaunchTemplateArgs``."""
    package, module, name = token.split(":")
    found = importlib.import_module(f"{PACKAGES[package]}.{module.split('/')[0]}")
    # Azure Native names a resource's args ``<Name>InitArgs`` where a nested input type already took ``<Name>Args``.
    return getattr(found, f"{name}InitArgs", None) or getattr(found, f"{name}Args")


def _leaves(hint: Any) -> list[Any]:
    """The concrete alternatives of an input hint, without Awaitable/Output/None wrappers."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return [leaf for arg in typing.get_args(hint) for leaf in _leaves(arg)]
    if hint is type(None) or origin is collections.abc.Awaitable or origin is pulumi.Output or hint is pulumi.Output:
        return []
    return [hint]


@cache
def _closed_values(cls: type, pulumi_name: str) -> tuple[str, ...]:
    """The values an AWS/GCP argument doc lists as the only valid ones (empty when the doc lists none)."""
    py_name = {p: py for py, p in _types.input_type_py_to_pulumi_names(cls).items()}[pulumi_name]
    doc = cls.__init__.__doc__ or ""
    match = re.search(rf":param [^\n]*? {py_name}: (.*?)(?=\n\s*:param|\Z)", doc, re.DOTALL)
    listed = _CLOSED_LIST.search(" ".join(match.group(1).split())) if match else None
    return tuple(re.findall(r"`([^`]+)`", listed.group(1))) if listed else ()


def _required(cls: type) -> list[str]:
    names = _types.input_type_py_to_pulumi_names(cls)
    params = inspect.signature(cls.__init__).parameters.values()
    return [names[p.name] for p in params if p.default is inspect.Parameter.empty and p.name in names]


def contract_problems(cls: type, value: dict[str, Any], path: str) -> list[str]:
    """Every way ``value`` (registered inputs, wire names) breaks the input type ``cls``."""
    hints = _types.input_type_types(cls)
    found = [f"{path}.{name}: required by {cls.__name__} but not given" for name in _required(cls) if name not in value]
    for name, item in sorted(value.items()):
        if name not in hints:
            found.append(f"{path}.{name}: not an argument of {cls.__name__}")
            continue
        found += _check(hints[name], item, f"{path}.{name}")
        if isinstance(item, str) and (closed := _closed_values(cls, name)) and item not in closed:
            found.append(f"{path}.{name}: {item!r} is not one of {', '.join(closed)} ({cls.__name__} docs)")
    return found


def _check(hint: Any, item: Any, path: str) -> list[str]:
    leaves = _leaves(hint)
    if isinstance(item, dict):
        return _check_mapping(leaves, item, path)
    if isinstance(item, list):
        sequences = [leaf for leaf in leaves if typing.get_origin(leaf) in (collections.abc.Sequence, list)]
        if not sequences:
            return [f"{path}: a list where the SDK expects {leaves}"]
        (element,) = typing.get_args(sequences[0])
        return [problem for i, entry in enumerate(item) for problem in _check(element, entry, f"{path}[{i}]")]
    return _check_scalar(leaves, item, path)


def _check_mapping(leaves: list[Any], item: dict[str, Any], path: str) -> list[str]:
    inputs = [leaf for leaf in leaves if isinstance(leaf, type) and _types.is_input_type(leaf)]
    if inputs:
        return contract_problems(inputs[0], item, path)
    mappings = [leaf for leaf in leaves if typing.get_origin(leaf) in (collections.abc.Mapping, dict)]
    if not mappings:
        return [f"{path}: an object where the SDK expects {leaves}"]
    _, values = typing.get_args(mappings[0])
    return [problem for key, entry in item.items() for problem in _check(values, entry, f"{path}.{key}")]


def _check_scalar(leaves: list[Any], item: Any, path: str) -> list[str]:
    enums = [leaf for leaf in leaves if isinstance(leaf, type) and issubclass(leaf, enum.Enum)]
    if isinstance(item, bool):
        return [] if bool in leaves else [f"{path}: a bool where the SDK expects {leaves}"]
    if isinstance(item, int | float):
        whole = float(item).is_integer()
        return [] if float in leaves or (int in leaves and whole) else [f"{path}: {item!r} where the SDK expects {leaves}"]
    if isinstance(item, str):
        if enums:
            allowed = {member.value for e in enums for member in e}
            return [] if item in allowed else [f"{path}: {item!r} is not one of {', '.join(sorted(allowed))} ({enums[0].__name__})"]
        return [] if str in leaves else [f"{path}: a string where the SDK expects {leaves}"]
    return [f"{path}: unexpected {type(item).__name__}"]
