"""Device text made visible before it reaches a terminal or a log: no control character ever gets through.

A running config, a drift line, a device's error reply or a ping's output is text a switch chose. Printed as it is, an
escape sequence in it moves the cursor, erases lines (``ESC [2K``, ``ESC [1A``, a bare ``CR``) or sets the window title,
and can hide lines of the diff a person is approving (issue 30). ``visible`` shows every character that is not
printable as an escape instead, so the line reads as what the device sent:

- ``\\t``, ``\\n``, ``\\r`` and ``\\\\`` (the backslash itself, so that the escapes cannot be forged);
- any other C0 or C1 control, DEL, and every other character Python does not call printable (bidirectional overrides,
  zero-width and line separators, unassigned code points, lone surrogates) as ``\\xNN``, ``\\uNNNN`` or ``\\UNNNNNNNN``.

Printable text, non-ASCII letters included, is left alone; the escaping is one pass over the text (linear in its length).

Example:
    >>> visible("interface swp1\\x1b[2K\\r  description ok")
    'interface swp1\\\\x1b[2K\\\\r  description ok'
    >>> visible("ip as-path access-list A permit ^65001\\\\_")
    'ip as-path access-list A permit ^65001\\\\\\\\_'
"""

from __future__ import annotations

import logging

_LOG = logging.getLogger("fabric.apply")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\\": "\\\\"}


def _escape(char: str) -> str:
    named = _NAMED.get(char)
    if named is not None:
        return named
    point = ord(char)
    if point < 0x100:
        return f"\\x{point:02x}"
    return f"\\u{point:04x}" if point < 0x10000 else f"\\U{point:08x}"


def visible(text: str) -> str:
    """``text`` with every non-printable character (and the backslash) shown as an escape; see the module docstring."""
    if text.isprintable() and "\\" not in text:
        return text
    return "".join(char if char.isprintable() and char != "\\" else _escape(char) for char in text)


def visible_lines(lines: list[str]) -> list[str]:
    """``visible`` of each line."""
    return [visible(line) for line in lines]


def one_line(exc: BaseException) -> str:
    """A device error as one line for a terminal or a CI log: the exception's first non-empty line (two when the first
    ends in a colon) and its type; the
    full text and traceback go to the ``fabric.apply`` logger at debug level (shown with ``gpufabric --debug``).

    Example:
        >>> one_line(TimeoutError("TCP connection to device failed.\\n\\nCommon causes of this problem are:\\n1. ..."))
        'TimeoutError: TCP connection to device failed.'
        >>> one_line(EOFError())
        'EOFError'
    """
    _LOG.debug("device error in full", exc_info=exc)
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    # "A paramiko SSHException occurred during connection creation:" says little without the line that follows it
    first = " ".join(lines[:2]) if len(lines) > 1 and lines[0].endswith(":") else (lines[0] if lines else "")
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__
