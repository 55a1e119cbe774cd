"""Load a cluster definition: YAML text -> ClusterSpec, or every problem at once as an InputError.

Each problem names the file, line and YAML path, says what is wrong and how to fix it. Secret values are never
echoed back.
"""

from __future__ import annotations

import json
import math
import re
import typing
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import cast

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from fabric.catalog.text import PATTERN_HELP as TEXT_PATTERN_HELP
from fabric.errors import Finding, InputError, LimitError
from fabric.model import strings
from fabric.model.base import NAME_RE, did_you_mean
from fabric.model.cluster import MAX_GROUPS, MAX_NODES, ClusterSpec
from fabric.model.deferred import Deferred
from fabric.model.secrets import REFERENCE_ADVICE, scan_secrets
from fabric.model.source import check_text, load_yaml, read_definition
from fabric.model.topology import OVERSUBSCRIPTION_RE, RELEASE_RE

Path_ = tuple[str | int, ...]
MAX_FINDINGS = 100  # a broken file gets the first 100 problems, not an unbounded report
# Extra keys that deserve an explanation rather than a spelling suggestion.
_EXTRA_KEY_HINTS: dict[tuple[str, ...], str] = {
    ("planes", "compute", "gateway"): "the compute plane never carries a default route; only planes.inband has a gateway",
    ("planes", "storage", "gateway"): ("the storage plane never carries a default route; use planes.storage.routes for specific prefixes"),
}


_PATTERN_HELP: dict[str, str] = {
    NAME_RE: "is not a lower-case DNS label; use a-z, 0-9 and '-', starting and ending with a letter or digit",
    OVERSUBSCRIPTION_RE: "is not a ratio; write downlink:uplink, e.g. '1:1' or '3:1'",
    strings.INTERFACE_NAME_RE: (
        "is not a safe interface name: 1-15 letters, digits, '_', '.' or '-', starting with a letter or digit (no spaces, quotes or '/')"
    ),
    strings.DOMAIN_NAME_RE: "is not a domain name: dot-separated labels of letters, digits and '-', e.g. cluster.example.com",
    **TEXT_PATTERN_HELP,
    RELEASE_RE: "is not a release number; write it as the NOS numbers its releases, e.g. '5.14' or '202411'",
    strings.HOSTNAME_FORMAT_RE: (
        "is not a host-name format: a lower-case DNS label with one {index} field, optionally zero-padded up to width 6; write e.g. 'gpu{index:03d}'"
    ),
    strings.GUID_RE: "is not a port GUID: write 0x and 16 hex digits as ibstat prints it, e.g. 0x0c42a10300ab12cd",
    strings.FILE_PATH_RE: "is not a plain file path: use letters, digits, '_', '.', '/', '+' and '-' only",
    strings.USER_NAME_RE: "is not a login name: letters, digits, '.', '_' and '-', starting with a letter or '_', at most 32",
    strings.IDENTIFIER_RE: "is not an identifier: letters, digits, '_', '.', ':', '/' and '-', starting with a letter or digit",
    r"^ami-[0-9a-f]{8,17}$": "is not an AMI id; write e.g. ami-0123456789abcdef0",
    r"^cr-[0-9a-f]{8,17}$": "is not a capacity reservation id; write e.g. cr-0123456789abcdef0",
}


# Strict mode refuses what lax mode would coerce; say what to write instead.
_STRICT_TYPE_HELP: dict[str, str] = {
    "int_type": "is not a whole number; write digits only, e.g. 4 (not quoted, no decimal point, not true/false)",
    "string_type": "is not text; write a string (quote it if YAML reads it as a number, a date or true/false)",
    "bool_type": "is not true or false; write true or false without quotes",
    "float_type": "is not a number; write digits, e.g. 1.5",
    "string_unicode": "is not Unicode text (it holds a lone surrogate such as \\ud800); remove the escape",
}


# A bound the schema sets (a physical limit, cited at the field): say which, and what to write instead.
_BOUND_KEYS = {"less_than_equal": "le", "greater_than_equal": "ge", "string_too_long": "max_length"}
_BOUND_HELP = {
    "less_than_equal": "{shown} is above the largest value allowed here, {bound}; use {bound} or less",
    "greater_than_equal": "{shown} is below the smallest value allowed here, {bound}; use {bound} or more",
    "string_too_long": "{shown} is longer than the {bound} characters allowed here; shorten it",
}


@dataclass(frozen=True, slots=True)
class SourceMap:
    """Line numbers of every key and list item in a YAML document."""

    file: str | None
    lines: dict[Path_, int] = field(default_factory=dict[Path_, int])

    def line_of(self, path: Path_) -> int | None:
        """Line of ``path``, or of its nearest ancestor present in the file."""
        for cut in range(len(path), -1, -1):
            line = self.lines.get(tuple(path[:cut]))
            if line is not None:
                return line
        return None

    def locate(self, finding: Finding) -> Finding:
        """``finding`` with this file and the line of its path filled in."""
        return Finding(finding.path, finding.message, finding.severity, self.file, self.line_of(finding.path))


def parse_yaml(text: str, file: str | None = None) -> tuple[object, SourceMap, list[Finding]]:
    """Parse YAML text into plain data, a line map, and findings for duplicate keys; every resource is bounded.

    Raises:
        InputError: the text is not YAML, holds control characters, or nests or expands past the loader's limits.
    """
    check_text(text, file)
    try:
        node, data = load_yaml(text)
    except LimitError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise InputError([Finding((), f"refused: {exc.problem}", file=file, line=line)], file) from exc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = f"{exc.context + ', ' if exc.context else ''}{exc.problem}"
        raise InputError([Finding((), f"not valid YAML: {problem}; fix the syntax at this line", file=file, line=line)], file) from exc
    except yaml.YAMLError as exc:
        raise InputError([Finding((), f"not valid YAML: {exc}", file=file)], file) from exc
    smap = SourceMap(file)
    duplicates: list[Finding] = []
    if node is not None:
        _walk(node, (), smap.lines, duplicates)
    return data, smap, duplicates


def _walk(node: yaml.Node, path: Path_, lines: dict[Path_, int], dups: list[Finding]) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            line = key_node.start_mark.line + 1
            if key in seen:
                where = f"on line {line}" if seen[key] == line else f"on lines {seen[key]} and {line}"
                msg = f"key '{key}' appears twice ({where}); YAML would silently keep only the last one, so remove one"
                dups.append(Finding((*path, key), msg, line=line))
            seen[key] = line
            lines[(*path, key)] = line
            _walk(value_node, (*path, key), lines, dups)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*path, index), lines, dups)


def schema_findings(exc: ValidationError, skip: set[Path_]) -> list[Finding]:
    """Translate pydantic errors into findings with a path, the problem and a fix."""
    findings: list[Finding] = []
    errors = exc.errors(include_url=False)
    paths = [tuple(part for part in err["loc"] if part != "[key]") for err in errors]
    for err, path in zip(errors, paths, strict=True):
        if path in skip or any(p[: len(path)] == path for p in skip):
            continue
        # A list whose every item failed is also reported as too short: the item errors say it better.
        if err["type"] == "too_short" and any(len(p) > len(path) and p[: len(path)] == path for p in paths):
            continue
        findings.append(Finding(path, _explain(err, path)))
    return findings


def _explain(err: ErrorDetails, path: Path_) -> str:
    return _explain_key(err, path) or _explain_value(err, path)


def _explain_key(err: ErrorDetails, path: Path_) -> str | None:
    kind = err["type"]
    last = str(path[-1]) if path else ""
    if kind == "extra_forbidden":
        hint = _EXTRA_KEY_HINTS.get(tuple(str(p) for p in path))
        if hint:
            return f"key '{last}' is not allowed here: {hint}"
        allowed = _allowed_keys(path[:-1])
        suggestion = did_you_mean(last, allowed)
        listing = f" allowed keys: {', '.join(allowed)}" if allowed else ""
        return f"unknown key '{last}';{suggestion}{listing}"
    if kind == "missing":
        return f"required key '{last}' is missing; add it"
    if last.endswith("_env") and kind == "string_pattern_mismatch":
        return (
            f"'{last}' takes the NAME of an environment variable (upper case, e.g. FABRIC_SWITCH_PASSWORD), "
            f"and the value given is not one; if it is the secret itself, remove it: {REFERENCE_ADVICE}"
        )
    return None


def _explain_value(err: ErrorDetails, path: Path_) -> str:
    kind = err["type"]
    value = err.get("input")
    shown = _show(value)
    if kind == "literal_error":
        choices = re.findall(r"'([^']*)'", str((err.get("ctx") or {}).get("expected", "")))
        suggestion = did_you_mean(str(value), choices) if choices else ""
        return f"{shown} is not one of {', '.join(choices)};{suggestion or ' pick one of them'}"
    if kind == "string_pattern_mismatch":
        pattern = str((err.get("ctx") or {}).get("pattern", ""))
        described = _PATTERN_HELP.get(pattern, f"must match the pattern {pattern}")
        return f"{shown} {described}"
    if kind in _STRICT_TYPE_HELP:
        return f"{shown} {_STRICT_TYPE_HELP[kind]}"
    bound = (err.get("ctx") or {}).get(_BOUND_KEYS.get(kind, ""))
    if bound is not None:
        return _BOUND_HELP[kind].format(shown=shown, bound=bound)
    msg = str(err["msg"])
    msg = msg.removeprefix("Value error, ")
    if kind == "value_error" or not path:
        return msg
    return f"{msg} (got {shown})"


def _show(value: object) -> str:
    if isinstance(value, dict | list):
        return "a " + type(value).__name__  # pyright: ignore[reportUnknownArgumentType]
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _allowed_keys(path: Path_) -> list[str]:
    model: type[BaseModel] | None = ClusterSpec
    for part in path:
        if isinstance(part, int) or model is None:
            continue
        info = model.model_fields.get(str(part))
        model = _inner_model(info.annotation) if info is not None else None
    return sorted(model.model_fields) if model is not None else []


def _inner_model(annotation: object) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if isinstance(annotation, Deferred):  # a cloud block (``Annotated[object, Deferred(...)]``): its model, imported now
        return annotation.model()
    args: tuple[object, ...] = typing.get_args(annotation)
    for arg in args:
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def parse_cluster(text: str, file: str | None = None) -> tuple[ClusterSpec, SourceMap]:
    """Validate YAML text against the schema; every schema problem is collected before raising.

    Raises:
        InputError: with one finding per problem, each located by file and line.
    """
    data, smap, findings = parse_yaml(text, file)
    if not isinstance(data, dict):
        found = "an empty file" if data is None else f"a {type(data).__name__}"
        findings.append(Finding((), f"a cluster definition is a mapping with keys such as name, target, planes, nodes; found {found}"))
        raise InputError([smap.locate(f) for f in findings], file)
    secrets = scan_secrets(cast("dict[str, object]", data))
    findings.extend(secrets)
    refused: list[Finding] = []
    plain = plain_data(cast("object", data), (), refused)
    findings.extend(refused)
    oversized = oversized_findings(cast("dict[str, object]", plain))
    if oversized:
        raise InputError([smap.locate(f) for f in oversized], file)
    spec: ClusterSpec | None = None
    try:
        # Strict mode through JSON: strings stay strings (no bytes), no bool->int or float->int, while JSON's own
        # forms (a string for an address, a list for a tuple) still parse.
        spec = ClusterSpec.model_validate_json(json.dumps(plain), strict=True, context=_profile_context(plain))
    except ValidationError as exc:
        findings.extend(schema_findings(exc, {f.path for f in (*secrets, *refused)}))
    if findings or spec is None:
        shown = findings
        if len(findings) > MAX_FINDINGS:
            shown = sorted(findings, key=lambda f: len(f.path))[:MAX_FINDINGS]  # structural problems first
            shown.append(Finding((), f"... and {len(findings) - MAX_FINDINGS} more errors; fix the ones above first"))
        raise InputError([smap.locate(f) for f in shown], file)
    return spec, smap


def oversized_findings(data: dict[str, object]) -> list[Finding]:
    """Findings for a definition with more node groups or nodes than the schema bounds; checked before the schema so
    that an oversized file costs no more than a glance.

    Example:
        >>> oversized_findings({"nodes": [{"count": 40000}]})[0].message[:30]
        'the definition has 40000 nodes'
    """
    groups = data.get("nodes")
    if not isinstance(groups, list):
        return []
    items = cast("list[object]", groups)
    if len(items) > MAX_GROUPS:
        return [Finding(("nodes",), f"{len(items)} node groups given; at most {MAX_GROUPS} are supported, merge groups of the same hardware")]
    counts = [cast("dict[str, object]", g).get("count") for g in items if isinstance(g, dict)]
    total = sum(c for c in counts if isinstance(c, int) and not isinstance(c, bool) and c > 0)
    if total > MAX_NODES:
        return [Finding(("nodes",), f"the definition has {total} nodes in all; at most {MAX_NODES} are supported, split the cluster")]
    return []


def plain_data(data: object, path: Path_, findings: list[Finding]) -> object:
    """``data`` as JSON-ready values (string keys); a finding for each value YAML can hold but a definition cannot.

    A ``!!binary`` value, a date, a set or a mapping key that is itself a list or mapping is refused with its path.
    """
    if isinstance(data, dict):
        out: dict[str, object] = {}
        for key, value in cast("dict[object, object]", data).items():
            if not isinstance(key, str | int | float | bool) and key is not None:
                findings.append(Finding(path, "a key that is a list, mapping, date or binary value is not allowed; keys are plain words or numbers"))
                continue
            name = "null" if key is None else str(key).lower() if isinstance(key, bool) else str(key)
            out[name] = plain_data(value, (*path, name), findings)
        return out
    if isinstance(data, list | tuple):
        return [plain_data(item, (*path, i), findings) for i, item in enumerate(cast("list[object]", data))]
    if isinstance(data, bytes):
        findings.append(Finding(path, "a !!binary value is not allowed; write the value as plain text"))
    elif isinstance(data, date):
        findings.append(Finding(path, f"YAML read {data.isoformat()!r} as a date; quote it if it is meant as text"))
    elif isinstance(data, set | frozenset):
        findings.append(Finding(path, "a !!set is not allowed; write a list"))
    elif isinstance(data, float) and not math.isfinite(data):
        findings.append(Finding(path, f"{data} is not a usable number; write a finite value"))
    else:
        return data
    return None


def load_cluster(path: str | Path) -> ClusterSpec:
    """Read and validate a cluster definition file against the schema.

    Example:
        >>> spec = load_cluster("inventories/lab/cluster.yaml")
        >>> spec.target
        'onprem'

    Raises:
        InputError: the file is missing, is not YAML, or breaks the schema (every problem listed).
    """
    return parse_cluster(read_definition(path), str(path))[0]


def _profile_context(plain: object) -> dict[str, frozenset[str]]:
    """The definition's own profile names, so a group naming an unknown profile is a schema problem reported with the rest."""
    section: object = cast("dict[str, object]", plain).get("hardware") if isinstance(plain, dict) else None
    names = cast("dict[str, object]", section) if isinstance(section, dict) else {}
    return {"hardware": frozenset(str(k) for k in names)}
