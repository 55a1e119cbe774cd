"""The one Jinja2 environment: templates from the package, strict about undefined names, stable whitespace.

Defence in depth against injection: every value a template prints goes through ``finalize``, which refuses a line
break or any other control character, so no value can start a new command line in a config whatever the model let
through.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import cast

from jinja2 import Environment, PackageLoader, StrictUndefined, Template

from fabric.errors import RenderError
from fabric.model.strings import is_safe_text


@cache
def _environment() -> Environment:
    env = Environment(  # noqa: S701 - renders device configs, not HTML
        loader=PackageLoader("fabric.render", "templates"),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=one_line,
    )
    filters = cast("dict[str, Callable[..., object]]", env.filters)  # pyright: ignore[reportUnknownMemberType] - jinja2 leaves it untyped
    filters["kbytes"] = _kbytes
    filters["token"] = token
    filters["seconds"] = _seconds
    return env


def one_line(value: object) -> object:
    """``value`` unchanged when its text holds no line break or control character.

    Example:
        >>> one_line("swp1")
        'swp1'

    Raises:
        RenderError: the value would break out of its line (e.g. ``"eth1\\nip route 0.0.0.0/0 blackhole"``).
    """
    if isinstance(value, str) and not is_safe_text(value):
        msg = f"refusing to render {value[:80]!r}: a line break or control character would inject config lines"
        raise RenderError(msg)
    return value


def token(value: object) -> str:
    """``value`` as one CLI token: where a name goes (an interface, a peer, a VRF), nothing that could end it.

    Example:
        >>> token("Ethernet1/1")
        'Ethernet1/1'

    Raises:
        RenderError: the text holds whitespace, a quote, a shell or CLI metacharacter, or is empty.
    """
    text = str(value)
    if not _TOKEN.match(text):
        msg = f"refusing to render {text[:80]!r} where one name goes: only letters, digits and _ . : / @ + - are allowed"
        raise RenderError(msg)
    return text


_TOKEN = re.compile(r"^[A-Za-z0-9_.:/@+-]+$")


def _kbytes(size: int) -> int:
    """Bytes to the kbytes that EOS and NX-OS thresholds take (1 kbyte = 1000 bytes)."""
    return size // 1000


def _seconds(milliseconds: int) -> str:
    """Milliseconds to seconds without trailing zeros: 200 → 0.2."""
    return f"{milliseconds / 1000:g}"


def template(name: str) -> Template:
    """A compiled template (compiled once per process)."""
    return _environment().get_template(name)
