"""The Jinja2 environments, one per NOS: templates from the package, strict about undefined names, stable whitespace.

Defence in depth against injection, whatever the model let through. Every value a template prints goes through the
NOS's ``finalize``, which knows the value's type:

- a number prints as it is;
- free text marked with the ``text`` filter (descriptions) must hold no line break or control character, and the
  ``nvue_text`` filter also quotes it for the shell words an NVUE line is split into;
- anything else stands where one CLI word goes (an interface, a host name, a route map, an address) and must be a
  safe token for that NOS (``TOKEN_RE``): no whitespace, quote, comment or shell character that could end the word.

A refused value raises ``RenderError`` naming the value and the template (``GuardedTemplate``). Jinja itself, the
environments and the classes built on it are in ``fabric.render._jinja_env``, imported with the first template: a
render whose switches are all built in Python imports no Jinja.

Templates are compiled once per process and never checked for changes on disk (``auto_reload=False``: the package's
templates do not change under a running render). The CLI may give a directory for Jinja's bytecode cache
(``use_bytecode_cache``): a template is then compiled once per machine and content, not once per run. Jinja keys each
entry by the template's name and the SHA-1 of its source, and its header by the Jinja and Python versions
(``jinja2.bccache``), so an edited template or an upgrade compiles afresh; the output is the same either way. An entry
is code: only a directory and entries private to the user are trusted, a damaged entry is compiled again
(``fabric.render._jinja_env.PrivateBytecodeCache``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING

from fabric.classcode import open_private_dir
from fabric.errors import RenderError
from fabric.model.strings import is_safe_text
from fabric.render.vlan_list import vlan_ranges

if TYPE_CHECKING:
    from jinja2 import Environment, Template

# One CLI word: letters, digits and _ . : / @ + -, not starting with '-'. Per NOS, what ends a word or starts a comment:
# EOS and NX-OS CLI: whitespace ends a word, '!' / '#' start comments, '?' asks for help, '|' pipes output;
# FRR vtysh: whitespace, '!' comments; MLNX-OS: whitespace, '#' comments, '"' quotes; Cumulus NVUE: each line is
# split with POSIX shell rules (fabric/apply/nos/cumulus.py shlex.split) and passed as argv to `nv`, so quotes,
# '$', '`', ';', '&', '|', '<', '>', '\\' and a leading '-' (an option to `nv`) must not appear in a word.
_WORD = r"^[A-Za-z0-9_.:/@+][A-Za-z0-9_.:/@+-]*$"
TOKEN_RE: dict[str, re.Pattern[str]] = {
    "eos": re.compile(_WORD),
    "nxos": re.compile(_WORD),
    "frr": re.compile(_WORD),
    "mlnxos": re.compile(_WORD),
    "cumulus": re.compile(_WORD),
    "sonic": re.compile(_WORD),  # config_db key parts and names: '|' joins key parts, so it never appears in one
}


_WORDS: dict[str, set[str]] = {nos: set() for nos in TOKEN_RE}
"""Per NOS, strings ``guard`` has seen match ``TOKEN_RE``: a set lookup instead of a regex for the names every switch
repeats (a 32k-GPU fabric prints some 1.2 million values). Only matching strings enter; emptied past ``_WORDS_MAX``."""
_WORDS_MAX = 1 << 16


class Text(str):
    """Free text a template marked as such (``{{ p.description | text }}``): one printable line, spaces allowed."""

    __slots__ = ()


BYTECODE_DIR: list[int] = []  # the cache directory's descriptor, set once by use_bytecode_cache before the first template is loaded


def use_bytecode_cache(directory: Path) -> bool:
    """Keep compiled templates in ``directory`` (made, private to the user, if missing); False when it cannot be made
    or is not private to the user (``open_private_dir``): templates are then compiled in memory.

    Call it before the first render of the process: environments made earlier keep compiling in memory. Only the
    directory is opened here; Jinja itself is imported with the first template (``fabric.render._jinja_env``).
    """
    folder = open_private_dir(directory)
    if folder is None:
        return False
    BYTECODE_DIR[:] = [folder]
    return True


def guard_for(nos: str) -> Callable[[object], object]:
    """``guard`` for one NOS, with its commonest cases (an int, a word seen before) decided in place: a 4,096-node
    Cumulus render prints some 1.2 million values. The environments' ``finalize``, and the FRR builder's guard."""
    words = _WORDS[nos]  # the same set for the life of the process (emptied in place when full)

    def finalize(value: object) -> object:
        if type(value) is int or (type(value) is str and value in words):
            return value
        return guard(nos, value)

    return finalize


def guard(nos: str, value: object) -> object:
    """``value`` as the template prints it, once it is safe where it stands on a line of ``nos``'s config.

    Example:
        >>> guard("eos", "Ethernet1/1"), guard("eos", 9214), guard("eos", Text("to gpu001 eth0"))
        ('Ethernet1/1', 9214, 'to gpu001 eth0')

    Raises:
        RenderError: text with a line break or control character; anything else that is not a safe token of ``nos``.
    """
    if type(value) is int or (type(value) is str and is_word(nos, value)):  # the common cases (bool is not int's type)
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return token(value, nos)
    if isinstance(value, Text):
        return one_line(value)
    if isinstance(value, str):
        return token(one_line(value), nos)
    return value


def is_word(nos: str, value: str) -> bool:
    """``value`` matches the whole of ``TOKEN_RE[nos]``: a set lookup for a word seen before (port names on every switch),
    else the regex.

    Example:
        >>> is_word("sonic", "Ethernet0"), is_word("sonic", "Ethernet0|x"), is_word("eos", "a\\n")
        (True, False, False)
    """
    words = _WORDS[nos]
    if value in words:
        return True
    if not TOKEN_RE[nos].fullmatch(value):
        return False
    if len(words) >= _WORDS_MAX:
        words.clear()
    words.add(value)
    return True


def one_line(value: str) -> str:
    """``value`` unchanged when its text holds no line break or control character.

    Example:
        >>> one_line("swp1")
        'swp1'

    Raises:
        RenderError: the value would break out of its line (e.g. ``"eth1\\nip route 0.0.0.0/0 blackhole"``).
    """
    if not is_safe_text(value):
        msg = f"refusing to render {value[:80]!r}: a line break or control character would inject config lines"
        raise RenderError(msg)
    return value


def token(value: object, nos: str = "eos") -> str:
    """``value`` as one CLI word of ``nos``: where a name goes (an interface, a peer, a VRF), nothing that could end it.

    Example:
        >>> token("Ethernet1/1")
        'Ethernet1/1'

    Raises:
        RenderError: the text holds whitespace, a quote, a shell or CLI metacharacter, starts with '-', or is empty.
    """
    word = str(value)
    if not TOKEN_RE[nos].fullmatch(word):  # not match: its '$' also matches before a final line break
        msg = f"refusing to render {word[:80]!r} where one {nos} word goes: only letters, digits and _ . : / @ + - are allowed (not a leading -)"
        raise RenderError(msg)
    return word


def text(value: object) -> Text:
    """``value`` marked as free text (a description): one line, spaces allowed.

    Raises:
        RenderError: a line break or control character.
    """
    return Text(one_line(str(value)))


def nvue_text(value: object) -> Text:
    """``value`` as one single-quoted POSIX shell word, for free text on an NVUE line (split with ``shlex.split``).

    Example:
        >>> print(nvue_text("it's up"))
        'it'"'"'s up'

    Raises:
        RenderError: a line break or control character.
    """
    quoted = one_line(str(value)).replace("'", "'\"'\"'")
    return Text(f"'{quoted}'")


def _vlan_ranges(vlans: Iterable[int]) -> Text:
    """``vlan_ranges`` as printable text: built from integers alone, its commas cannot break a line or a word."""
    return Text(vlan_ranges(int(v) for v in vlans))


def _kbytes(size: int) -> int:
    """Bytes to the kbytes that EOS and NX-OS thresholds take (1 kbyte = 1000 bytes)."""
    return size // 1000


def _seconds(milliseconds: int) -> str:
    """Milliseconds to seconds without trailing zeros: 200 → 0.2."""
    return f"{milliseconds / 1000:g}"


@cache
def _environment(nos: str) -> Environment:
    """The environment of ``nos``'s templates: Jinja is imported here, with the first template, not with the guard."""
    from fabric.render._jinja_env import environment

    filters: dict[str, Callable[..., object]] = {
        "kbytes": _kbytes,
        "token": partial(token, nos=nos),
        "text": text,
        "nvue_text": nvue_text,
        "seconds": _seconds,
        "vlan_ranges": _vlan_ranges,
    }
    return environment(guard_for(nos), filters, BYTECODE_DIR[0] if BYTECODE_DIR else None)


@cache
def template(name: str) -> Template:
    """A compiled template (compiled once per process), guarded for the NOS its directory names (a template at the top level: FRR)."""
    nos = name.split("/", 1)[0] if "/" in name else "frr"
    return _environment(nos).get_template(name)
