"""The Jinja2 environments, one per NOS: templates from the package, strict about undefined names, stable whitespace.

Defence in depth against injection, whatever the model let through. Every value a template prints goes through the
NOS's ``finalize``, which knows the value's type:

- a number prints as it is;
- free text marked with the ``text`` filter (descriptions) must hold no line break or control character, and the
  ``nvue_text`` filter also quotes it for the shell words an NVUE line is split into;
- anything else stands where one CLI word goes (an interface, a host name, a route map, an address) and must be a
  safe token for that NOS (``TOKEN_RE``): no whitespace, quote, comment or shell character that could end the word.

A refused value raises ``RenderError`` naming the value and the template (``GuardedTemplate``).

Templates are compiled once per process and never checked for changes on disk (``auto_reload=False``: the package's
templates do not change under a running render). The CLI may give a directory for Jinja's bytecode cache
(``use_bytecode_cache``): a template is then compiled once per machine and content, not once per run. Jinja keys each
entry by the template's name and the SHA-1 of its source, and its header by the Jinja and Python versions
(``jinja2.bccache``), so an edited template or an upgrade compiles afresh; the output is the same either way. An entry
is code: only a directory and entries private to the user are trusted, a damaged entry is compiled again
(``PrivateBytecodeCache``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterable, Sequence
from functools import cache, partial
from pathlib import Path
from typing import cast

from jinja2 import BytecodeCache, Environment, PackageLoader, StrictUndefined, Template
from jinja2.bccache import Bucket

from fabric.classcode import open_private_dir
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


class GuardedTemplate(Template):
    """A template whose refused value names the template: ``eos/interfaces.j2: refusing to render …``."""

    def render(self, *args: object, **kwargs: object) -> str:
        """``Template.render``; a ``RenderError`` raised by the guard gains this template's name."""
        try:
            return super().render(*args, **kwargs)
        except RenderError as exc:
            msg = f"{self.name}: {exc}"
            raise RenderError(msg) from exc


class PrivateBytecodeCache(BytecodeCache):
    """Jinja's bytecode cache in a directory only this user can write, read and written through its descriptor.

    An entry is code this process runs (a pickled checksum and marshalled bytecode, ``jinja2.bccache.Bucket``), so a
    cache another user can write is code they run as us (issue 30). Hence:

    - the directory, opened once without following a link, must be owned by this user with mode 0700
      (``open_private_dir``), else no cache is used; later renames of its path change nothing (the descriptor stays);
    - an entry is read only if it is a regular file (no link), owned by this user and not group- or world-writable;
    - each entry starts with the SHA-256 of the rest, checked before Jinja unpickles or unmarshals anything: a truncated
      or damaged entry is a miss and is compiled and written again, never a traceback;
    - an entry is written to a temporary file (0600) renamed over its name; a failure (full disk) only costs the compile.
    """

    def __init__(self, folder: int) -> None:
        """Use the open directory descriptor ``folder`` (from ``open_private_dir``)."""
        self._folder = folder

    @staticmethod
    def _name(bucket: Bucket) -> str:
        return f"__jinja2_{bucket.key}.cache"

    def load_bytecode(self, bucket: Bucket) -> None:
        """Fill ``bucket`` from its entry when the entry is ours, private and whole; else leave it empty (a compile)."""
        try:
            fd = os.open(self._name(bucket), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=self._folder)
        except OSError:  # missing, a link (ELOOP), unreadable: compile
            return
        with os.fdopen(fd, "rb") as stream:
            info = os.fstat(stream.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
                return
            data = stream.read()
        digest, payload = data[:32], data[32:]
        if len(digest) < 32 or hashlib.sha256(payload).digest() != digest:
            return
        bucket.bytecode_from_string(payload)

    def dump_bytecode(self, bucket: Bucket) -> None:
        """Write the entry (its digest, then Jinja's bytes) if the directory lets us."""
        payload = bucket.bytecode_to_string()
        temporary = f".{self._name(bucket)}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=self._folder)
        except OSError:
            return
        try:
            with os.fdopen(fd, "wb") as stream:
                stream.write(hashlib.sha256(payload).digest() + payload)
            os.replace(temporary, self._name(bucket), src_dir_fd=self._folder, dst_dir_fd=self._folder)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=self._folder)


_CACHE: list[BytecodeCache] = []  # set once by use_bytecode_cache, before the first template is loaded


def use_bytecode_cache(directory: Path) -> bool:
    """Keep compiled templates in ``directory`` (made, private to the user, if missing); False when it cannot be made
    or is not private to the user (``open_private_dir``): templates are then compiled in memory.

    Call it before the first render of the process: environments made earlier keep compiling in memory.
    """
    folder = open_private_dir(directory)
    if folder is None:
        return False
    _CACHE[:] = [PrivateBytecodeCache(folder)]
    return True


@cache
def _environment(nos: str) -> Environment:
    env = Environment(  # noqa: S701 - renders device configs, not HTML
        loader=PackageLoader("fabric.render", "templates"),
        bytecode_cache=_CACHE[0] if _CACHE else None,
        auto_reload=False,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=guard_for(nos),
    )
    env.template_class = GuardedTemplate
    filters = cast("dict[str, Callable[..., object]]", env.filters)  # pyright: ignore[reportUnknownMemberType] - jinja2 leaves it untyped
    filters["kbytes"] = _kbytes
    filters["token"] = partial(token, nos=nos)
    filters["text"] = text
    filters["nvue_text"] = nvue_text
    filters["seconds"] = _seconds
    filters["vlan_ranges"] = _vlan_ranges
    return env


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

    Example:
        >>> all_words("frr", ["Ethernet0", "10.0.0.0/31"]), all_words("frr", ["a b", "c"]), all_words("frr", ["a", ""])
        (True, False, False)
        >>> all_words("frr", ["a", None]), all_words("frr", ["-a"]), all_words("frr", [])
        (False, False, True)
    """
    if not values:
        return True
    try:
        text = " ".join(cast("Sequence[str]", values))  # join checks each is a str
    except TypeError:  # a value that is not a str
        return False
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


def _vlan_ranges(vlans: Iterable[int]) -> Text:
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


def _kbytes(size: int) -> int:
    """Bytes to the kbytes that EOS and NX-OS thresholds take (1 kbyte = 1000 bytes)."""
    return size // 1000


def _seconds(milliseconds: int) -> str:
    """Milliseconds to seconds without trailing zeros: 200 → 0.2."""
    return f"{milliseconds / 1000:g}"


@cache
def template(name: str) -> Template:
    """A compiled template (compiled once per process), guarded for the NOS its directory names (a template at the top level: FRR)."""
    nos = name.split("/", 1)[0] if "/" in name else "frr"
    return _environment(nos).get_template(name)
