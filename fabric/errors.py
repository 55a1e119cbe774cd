"""The single exception tree of gpufabric.

    FabricError
    ├── InputError(FabricError, ValueError)    bad cluster definition; carries every Finding
    ├── PlanError(FabricError)                 a valid definition that cannot be planned (pool exhausted, collision)
    ├── RenderError(FabricError)               a plan that a renderer cannot express (or a value that would inject a line)
    ├── StackConfigError(FabricError)          a Pulumi stack whose config cannot build the cluster
    ├── CatalogError(FabricError)              a built-in catalog data file is broken; carries every Finding
    └── PushError(FabricError)                 anything that goes wrong while talking to devices
        ├── ConnectError(PushError)
        ├── ConfigRejectedError(PushError)     carries the rejected command and the device output
        └── CommitError(PushError)

Command-line exit codes: 2 for InputError, PlanError and RenderError (the definition must change), 1 for the rest.
Every message passes through ``printable`` before it is shown, so input cannot forge report lines or drive a terminal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]
_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem in a cluster definition.

    Attributes:
        path: YAML path as a tuple of keys and list indexes, e.g. ``("nodes", 0, "count")``.
        message: what is wrong, why, and how to fix it.
        severity: ``"error"`` stops the run; ``"warning"`` is printed and the run goes on.
        file: the definition file, when known.
        line: 1-based line of the offending key in ``file``, when known.
    """

    path: tuple[str | int, ...]
    message: str
    severity: Severity = "error"
    file: str | None = None
    line: int | None = None

    @property
    def dotted_path(self) -> str:
        """The path as users write it: ``nodes[0].count``."""
        return format_path(self.path)

    def __str__(self) -> str:
        where = self.file or "<definition>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        path = self.dotted_path or "(top level)"
        return printable(f"{where}: {self.severity}: {path}: {self.message}")


def format_path(path: tuple[str | int, ...]) -> str:
    """Render a path tuple as ``a.b[2].c``; a key that is not a plain word is quoted: ``labels['team name']``.

    Example:
        >>> format_path(("nodes", 0, "labels", "a b"))
        "nodes[0].labels['a b']"
    """
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _PLAIN_KEY.match(part):
            out += f"[{printable(repr(part))}]"
        else:
            out += f".{part}" if out else part
    return out


def printable(text: str) -> str:
    """``text`` with every control character spelled as an escape, so a report cannot forge lines or drive a terminal.

    Example:
        >>> printable("x.com\\nusername evil")
        'x.com\\\\nusername evil'
    """
    return _UNPRINTABLE.sub(lambda m: repr(m.group())[1:-1], text)


class FabricError(Exception):
    """Base of every error gpufabric raises on purpose."""


class InputError(FabricError, ValueError):
    """The cluster definition is invalid; ``findings`` lists every problem found."""

    def __init__(self, findings: list[Finding] | tuple[Finding, ...], file: str | None = None) -> None:
        self.findings = tuple(findings)
        self.file = file
        errors = [f for f in self.findings if f.severity == "error"]
        head = f"{file or 'cluster definition'}: {len(errors)} error(s)"
        super().__init__("\n".join([head, *(str(f) for f in self.findings)]))

    @property
    def errors(self) -> tuple[Finding, ...]:
        """Only the findings of severity ``error``."""
        return tuple(f for f in self.findings if f.severity == "error")


class CatalogError(FabricError):
    """A data file of the built-in catalog is broken: the installation's fault, not the definition's.

    Not a ``ValueError``, so a model validator that reads the catalog cannot turn it into a finding on the definition.
    """

    def __init__(self, findings: list[Finding] | tuple[Finding, ...]) -> None:
        self.findings = tuple(findings)
        lines = ["gpufabric's built-in catalog is broken; fix these files or reinstall:", *(str(f) for f in self.findings)]
        super().__init__("\n".join(lines))


class PlanError(FabricError):
    """A valid definition that cannot be planned: a pool is exhausted or allocations collide."""


class RenderError(FabricError):
    """The plan holds something a renderer cannot express."""


class StackConfigError(FabricError, ValueError):
    """The Pulumi stack configuration cannot build this cluster (wrong target, missing key)."""


class PushError(FabricError):
    """A device transaction failed."""


class ConnectError(PushError):
    """The device could not be reached or authenticated."""


class ConfigRejectedError(PushError):
    """The device rejected a configuration line; nothing was committed."""

    def __init__(self, host: str, command: str, output: str) -> None:
        self.host = host
        self.command = command
        self.output = output
        super().__init__(f"{host}: device rejected {command!r}: {output.strip()}")


class CommitError(PushError):
    """Commit, confirm or rollback failed."""
