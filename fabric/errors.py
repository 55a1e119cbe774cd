"""The single exception tree of gpufabric: every exception class the project defines is here, and this drawing is the tree.

    FabricError(Exception)                           base of every error gpufabric raises on purpose
    ├── InputError(FabricError, ValueError)          bad cluster definition; carries every Finding
    ├── LimitError(FabricError, ComposerError)       the YAML passes a loader bound; parse_yaml turns it into an InputError
    ├── StackConfigError(FabricError, ValueError)    a Pulumi stack whose config cannot build the cluster
    ├── PlanError(FabricError)                       a valid definition that cannot be planned (pool exhausted, collision)
    ├── RenderError(FabricError)                     a plan that a renderer cannot express (or a value that would inject a line)
    ├── PushError(FabricError)                       anything that goes wrong while talking to devices
    │   ├── DeviceRejectedError(PushError)           the device refused a command of the change
    │   ├── DeadlineError(PushError)                 a device's transaction ran out of time
    │   ├── NxosReplyError(PushError)                an NX-OS reply of a shape the L2 post-check does not know
    │   ├── DrainError(PushError)                    a switch cannot be drained
    │   ├── LockedError(PushError)                   another push to the same fabric is running
    │   └── RecordError(PushError)                   the change record cannot be written: nothing may be touched
    ├── LabError(FabricError)                        the twin cannot be built or torn down on this machine
    ├── CatalogError(FabricError)                    a built-in catalog data file is broken; carries every Finding
    └── ProjectMissingError(FabricError)             no Ansible project (ansible.cfg and the playbook) for ``nodes``

Command-line exit codes: 2 for InputError, PlanError and RenderError (the definition must change), 1 for the rest;
``nodes`` reports a ProjectMissingError itself ("nodes refused:", exit 2). ``tests/test_errors.py`` holds this drawing
to the classes below and refuses an exception class defined, or a project exception raised, anywhere else.
Every message passes through ``printable`` before it is shown, so input cannot forge report lines or drive a terminal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from yaml.composer import ComposerError

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


# Input: the cluster definition (or the stack's configuration) must change.


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


class LimitError(FabricError, ComposerError):
    """The document passes one of the loader's bounds (depth, alias expansion, number length, recursion)."""


class StackConfigError(FabricError, ValueError):
    """The Pulumi stack configuration cannot build this cluster (wrong target, missing key)."""


# Plan and render: a valid definition the pipeline cannot carry through.


class PlanError(FabricError):
    """A valid definition that cannot be planned: a pool is exhausted or allocations collide."""


class RenderError(FabricError):
    """The plan holds something a renderer cannot express."""


# Push: talking to devices.


class PushError(FabricError):
    """A device transaction failed."""


class DeviceRejectedError(PushError):
    """The device refused a command of the change."""


class DeadlineError(PushError):
    """The device's transaction ran out of time (a hung device)."""


class NxosReplyError(PushError):
    """An NX-OS reply is not the JSON shape the L2 post-check reads (see ``fabric.apply.checks.l2_nxos``)."""


class DrainError(PushError):
    """A switch cannot be drained (no drain policy for its NOS, a peer without an outbound route-map, ...)."""


class LockedError(PushError):
    """Another push to the same fabric is running."""


class RecordError(PushError):
    """The change record cannot be written: nothing may be touched."""


# The local twin.


class LabError(FabricError):
    """The twin cannot be built or torn down on this machine."""


# Installation: the package is broken, not the definition.


class CatalogError(FabricError):
    """A data file of the built-in catalog is broken: the installation's fault, not the definition's."""

    # Not a ValueError, so a model validator that reads the catalog cannot turn it into a finding on the definition.

    def __init__(self, findings: list[Finding] | tuple[Finding, ...]) -> None:
        self.findings = tuple(findings)
        lines = ["gpufabric's built-in catalog is broken; fix these files or reinstall:", *(str(f) for f in self.findings)]
        super().__init__("\n".join(lines))


class ProjectMissingError(FabricError):
    """Neither a checkout nor the installed package holds the Ansible project (ansible.cfg and the playbook)."""
