"""Shared pieces of the input schema: the strict base model and small reusable field types."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from fabric.model.strings import HOST_NAME_RE

ENV_VAR_RE = re.compile(r"^[A-Z_][A-Z0-9_]*$")
NAME_RE = HOST_NAME_RE  # cluster, group and host names: safe as DNS labels, file names and netns names

Name = Annotated[str, Field(pattern=NAME_RE, description="Lower-case DNS label: letters, digits and '-'.")]
Vlan = Annotated[int, Field(ge=1, le=4094)]
Asn = Annotated[int, Field(ge=1, le=4294967294)]
Priority = Annotated[int, Field(ge=0, le=7, description="IEEE 802.1p priority / switch priority 0-7.")]
Dscp = Annotated[int, Field(ge=0, le=63)]
EnvVarName = Annotated[
    str,
    Field(
        pattern=r"^[A-Z_][A-Z0-9_]*$",
        max_length=128,
        description="Name of an environment variable that holds the value at run time (never the value itself).",
    ),
]


class SpecModel(BaseModel):
    """Base of every input model: unknown keys are errors and parsed specs are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """A ``" did you mean 'x'?"`` suffix naming the closest choice, or ``""``.

    Example:
        >>> did_you_mean("sn560", ["sn5600", "qm9700"])
        " did you mean 'sn5600'?"
    """
    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f" did you mean '{close[0]}'?" if close else ""


def unknown_choice(kind: str, value: str, choices: Iterable[str]) -> str:
    """Message for a value that is not in a catalog."""
    names = sorted(choices)
    shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
    return f"unknown {kind} '{value}';{did_you_mean(value, names) or ''} known: {shown}"
