"""What a rendered value may be where it stands on a line of a NOS's config: defence in depth against injection,
whatever the model let through. Every value a template prints goes through the NOS's ``finalize`` (``guard_for``), and
the Python builders (``fabric.render.nos.frr``, SONiC's config_db, Cumulus ports) call the same functions:

- a number prints as it is;
- free text marked with the ``text`` filter (descriptions) must hold no line break or control character, and the
  ``nvue_text`` filter also quotes it for the shell words an NVUE line is split into;
- anything else stands where one CLI word goes (an interface, a host name, a route map, an address) and must be a
  safe token for that NOS (``TOKEN_RE``): no whitespace, quote, comment or shell character that could end the word.

No Jinja here: a render that prints no template (SONiC's compute switches) never imports it (``fabric.render._jinja``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import cast

from fabric.errors import RenderError
from fabric.model.strings import is_safe_text
from fabric.render.vlan_list import vlan_ranges

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

    A number prints as it is only when its type is ``int`` or ``float`` itself: a template prints ``str(value)``, which
    a subclass may override (``bool`` prints ``True``), so any other value must print as one word.

    Raises:
        RenderError: text with a line break or control character; anything else that is not a safe token of ``nos``.
    """
    if type(value) is int or (type(value) is str and is_word(nos, value)):  # the common cases (bool is not int's type)
        return value
    if isinstance(value, Text):
        return one_line(value)
    if isinstance(value, str):
        return token(one_line(value), nos)
    if type(value) is float:
        return value
    return token(value, nos)  # None, a bool, a subclass of int or float, anything else: its str() must be one word


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


_JOINED: dict[str, re.Pattern[str]] = {
    nos: re.compile(rf"(?:{word})(?: (?:{word}))*") for nos, word in ((n, r.pattern.removeprefix("^").removesuffix("$")) for n, r in TOKEN_RE.items())
}
"""Per NOS, words of ``TOKEN_RE`` joined by single spaces (``all_words``)."""


def all_words(nos: str, values: Sequence[object]) -> bool:
    """Whether every value is a ``str`` that matches the whole of ``TOKEN_RE[nos]``, found with one regex over the values
    joined by spaces instead of a call per value (an FRR leaf prints some 500).

    No looser than ``is_word`` on each value: no word holds a space, so when the joined text holds exactly one space per
    joint, its spaces are the joints and the parts between them are the values themselves; the regex then matches the
    whole text exactly when each part matches the whole of ``TOKEN_RE[nos]`` (an empty value leaves an empty part,
    which no word matches). A value holding a space adds one and is refused by the count.

    Each value's type must be ``str`` itself: the join reads a subclass's characters, but a line prints its ``str()``
    (an f-string calls it), which the subclass may override; ``guard`` checks what ``str()`` gives.

    Example:
        >>> all_words("frr", ["Ethernet0", "10.0.0.0/31"]), all_words("frr", ["a b", "c"]), all_words("frr", ["a", ""])
        (True, False, False)
        >>> all_words("frr", ["a", None]), all_words("frr", ["-a"]), all_words("frr", []), all_words("frr", [Text("a")])
        (False, False, True, False)
    """
    if not values:
        return True
    if set(map(type, values)) != {str}:  # a value that is not a str, or a subclass (its str() may not be its characters)
        return False
    text = " ".join(cast("Sequence[str]", values))
    return text.count(" ") == len(values) - 1 and _JOINED[nos].fullmatch(text) is not None


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


def vlan_ranges_text(vlans: Iterable[int]) -> Text:
    """``vlan_ranges`` as printable text: built from integers alone, its commas cannot break a line or a word."""
    return Text(vlan_ranges(int(v) for v in vlans))


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


def kbytes(size: int) -> int:
    """Bytes to the kbytes that EOS and NX-OS thresholds take (1 kbyte = 1000 bytes)."""
    return size // 1000


def seconds(milliseconds: int) -> str:
    """Milliseconds to seconds without trailing zeros: 200 → 0.2."""
    return f"{milliseconds / 1000:g}"
