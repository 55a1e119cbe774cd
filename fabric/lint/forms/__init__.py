"""Command forms per NOS and release, as data (``<nos>.yaml`` here), each citing where it is written down.

The reference test (``tests/lint/test_forms.py``) fails on any rendered line no form matches, and the linter reports
such a line in a hand-edited config, so a misspelled or unknown command is a finding before a switch refuses it.
A form is words and placeholders; inside a block (NX-OS) it names its blocks first, joined with `` > ``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import cast

import yaml

from fabric.catalog.releases import release_key

FORMS_DIR = Path(__file__).parent
FORM_FILES = {"cumulus": "cumulus.yaml", "nxos": "nxos.yaml", "mlnx-os": "mlnxos.yaml"}
COMMENT = {"cumulus": "#", "nxos": "!", "mlnx-os": "#"}
INDENT = {"cumulus": 0, "nxos": 2, "mlnx-os": 0}  # spaces per block level; 0: a flat CLI
PLACEHOLDERS = {
    "<name>": r"[A-Za-z0-9_.:/-]+",
    "<int>": r"\d+",
    "<ip>": r"\d{1,3}(?:\.\d{1,3}){3}",
    "<prefix>": r"\d{1,3}(?:\.\d{1,3}){3}/\d{1,2}",
    "<guid>": r"0x[0-9a-fA-F]{16}",
    "<hex>": r"0x[0-9a-fA-F]+",
    "<text>": r".+",
    "<vlans>": r"\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*",
}
_TOKEN = re.compile(r"<[a-z]+>|[()|]|[^<()|]+")


@dataclass(frozen=True, slots=True)
class Form:
    """One command form: its text, the regex it compiles to, its reference and the releases that have it."""

    form: str
    pattern: re.Pattern[str]
    ref: str
    since: str | None = None
    until: str | None = None

    def applies_to(self, release: str) -> bool:
        """The form exists in ``release`` (``since`` <= release <= ``until``)."""
        key = release_key(release)
        return (self.since is None or release_key(self.since) <= key) and (self.until is None or key <= release_key(self.until))


def compile_form(form: str) -> re.Pattern[str]:
    """A form as an anchored regex: placeholders become their patterns, ``(a|b)`` stays a group, the rest is literal.

    Example:
        >>> bool(compile_form("nv set qos mapping default-global trust (l2|l3)").fullmatch("nv set qos mapping default-global trust l3"))
        True
    """
    parts: list[str] = []
    for piece in _TOKEN.findall(form):
        if piece in PLACEHOLDERS:
            parts.append(PLACEHOLDERS[piece])
        elif piece.startswith("<"):
            msg = f"form '{form}': unknown placeholder {piece}; use one of {', '.join(PLACEHOLDERS)}"
            raise ValueError(msg)
        elif piece == "(":
            parts.append("(?:")
        elif piece in ")|":
            parts.append(piece)
        else:
            parts.append(re.escape(piece))
    return re.compile("".join(parts))


@cache
def load_forms(nos: str) -> tuple[Form, ...]:
    """Every form of ``nos`` from its data file (checked: each has a form and a reference)."""
    path = FORMS_DIR / FORM_FILES[nos]
    entries = cast("list[dict[str, str]]", yaml.safe_load(path.read_text(encoding="utf-8")))
    forms: list[Form] = []
    for i, entry in enumerate(entries):
        if not entry.get("form") or not entry.get("ref") or set(entry) - {"form", "ref", "since", "until"}:
            msg = f"{path.name}[{i}]: a form needs 'form' and 'ref' (and optionally 'since', 'until'), got {sorted(entry)}"
            raise ValueError(msg)
        forms.append(Form(entry["form"], compile_form(entry["form"]), entry["ref"], entry.get("since"), entry.get("until")))
    return tuple(forms)


def has_forms(nos: str) -> bool:
    """A forms table exists for ``nos``."""
    return nos in FORM_FILES


def commands(nos: str, text: str) -> list[tuple[int, str]]:
    """Each command of a config as (line number, path) where the path joins the enclosing blocks with `` > ``."""
    found: list[tuple[int, str]] = []
    parents: list[str] = []
    width = INDENT[nos]
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(COMMENT[nos]):
            continue
        depth = (len(raw) - len(raw.lstrip(" "))) // width if width else 0
        parents = [*parents[:depth], line]
        found.append((number, " > ".join(parents)))
    return found


def unknown_commands(nos: str, release: str, text: str) -> list[tuple[int, str]]:
    """The commands of ``text`` that no form of ``nos`` in ``release`` matches, as (line number, command path).

    Example:
        >>> unknown_commands("cumulus", "5.14", "nv set system hostname leaf01\\nnv set qos mapping default-global trust dscp\\n")
        [(2, 'nv set qos mapping default-global trust dscp')]
    """
    forms = [f for f in load_forms(nos) if f.applies_to(release)]
    return [(n, command) for n, command in commands(nos, text) if not any(f.pattern.fullmatch(command) for f in forms)]


UNPROVEN = "UNPROVEN"  # a form's ref that starts so has no vendor text behind it (docs/switch-references.md)


def unproven_commands(nos: str, text: str) -> list[tuple[int, str]]:
    r"""The commands of ``text`` that only forms marked UNPROVEN match, as (line number, command path): lines a switch
    may well accept, but that no vendor text shows. ``lint`` names them as notes, never as findings.

    Example:
        >>> unproven_commands("nxos", "priority-flow-control watch-dog-interval on\npriority-flow-control watch-dog interval 100")
        [(2, 'priority-flow-control watch-dog interval 100')]
    """
    if not has_forms(nos):
        return []
    forms = load_forms(nos)
    proven = [f for f in forms if not f.ref.startswith(UNPROVEN)]
    unproven = [f for f in forms if f.ref.startswith(UNPROVEN)]
    return [
        (n, command)
        for n, command in commands(nos, text)
        if any(f.pattern.fullmatch(command) for f in unproven) and not any(f.pattern.fullmatch(command) for f in proven)
    ]
