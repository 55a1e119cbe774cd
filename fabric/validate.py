"""Validate a definition file end to end: schema, model rules and fabric-wide checks, every finding located by line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fabric.errors import Finding, InputError
from fabric.model.cluster import ClusterSpec
from fabric.model.loader import parse_cluster
from fabric.plan import check_cluster


@dataclass(frozen=True, slots=True)
class Validated:
    """A valid definition and its warnings."""

    spec: ClusterSpec
    warnings: tuple[Finding, ...]
    file: str


def validate_file(path: str | Path) -> Validated:
    """Read, validate and check a definition; collect every problem before raising.

    Example:
        >>> validate_file("inventories/lab/cluster.yaml").spec.name
        'lab'

    Raises:
        InputError: with every error and warning, each naming file, line and YAML path.
    """
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError([Finding((), f"cannot read the definition: {exc.strerror}; check the path", file=file)], file) from exc
    spec, source = parse_cluster(text, file)
    findings = [source.locate(f) for f in check_cluster(spec)]
    if any(f.severity == "error" for f in findings):
        raise InputError(findings, file)
    return Validated(spec, tuple(findings), file)
