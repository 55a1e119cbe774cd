"""The one Jinja2 environment: templates from the package, strict about undefined names, stable whitespace."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import cast

from jinja2 import Environment, PackageLoader, StrictUndefined, Template


@cache
def _environment() -> Environment:
    env = Environment(  # noqa: S701 - renders device configs, not HTML
        loader=PackageLoader("fabric.render", "templates"),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    filters = cast("dict[str, Callable[..., object]]", env.filters)  # pyright: ignore[reportUnknownMemberType] - jinja2 leaves it untyped
    filters["kbytes"] = _kbytes
    filters["seconds"] = _seconds
    return env


def _kbytes(size: int) -> int:
    """Bytes to the kbytes that EOS and NX-OS thresholds take (1 kbyte = 1000 bytes)."""
    return size // 1000


def _seconds(milliseconds: int) -> str:
    """Milliseconds to seconds without trailing zeros: 200 → 0.2."""
    return f"{milliseconds / 1000:g}"


def template(name: str) -> Template:
    """A compiled template (compiled once per process)."""
    return _environment().get_template(name)
