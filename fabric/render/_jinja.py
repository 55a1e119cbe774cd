"""The Jinja2 environments, one per NOS: templates from the package, strict about undefined names, stable whitespace.

Every value a template prints goes through the NOS's ``finalize`` (``fabric.render.guards.guard_for``); a refused value
raises ``RenderError`` naming the value and the template (``GuardedTemplate``).

Templates are compiled once per process and never checked for changes on disk (``auto_reload=False``: the package's
templates do not change under a running render). The CLI may give a directory for Jinja's bytecode cache
(``fabric.render.template_cache.use_bytecode_cache``): a template is then compiled once per machine and content, not once
per run. Jinja keys each entry by the template's name and the SHA-1 of its source, and its header by the Jinja and
Python versions (``jinja2.bccache``), so an edited template or an upgrade compiles afresh; the output is the same either
way. An entry is code: only a directory and entries private to the user are trusted, a damaged entry is compiled again
(``PrivateBytecodeCache``).

Import it only where a template is printed (``fabric.render.templating.template`` does, on first use): importing Jinja
costs some 16 ms of every process that does.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import stat
from collections.abc import Callable
from functools import cache, partial
from typing import cast

from jinja2 import BytecodeCache, Environment, PackageLoader, StrictUndefined, Template
from jinja2.bccache import Bucket

from fabric.errors import RenderError
from fabric.render.guards import guard_for, kbytes, nvue_text, seconds, text, token, vlan_ranges_text
from fabric.render.template_cache import bytecode_folder


class GuardedTemplate(Template):
    """A template whose refused value names the template: ``eos/vrfs.j2: refusing to render …``."""

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


def _bytecode_cache() -> BytecodeCache | None:
    """The private bytecode cache in the directory ``use_bytecode_cache`` opened, if any (else compile in memory)."""
    folder = bytecode_folder()
    return None if folder is None else PrivateBytecodeCache(folder)


@cache
def _environment(nos: str) -> Environment:
    env = Environment(  # noqa: S701 - renders device configs, not HTML
        loader=PackageLoader("fabric.render", "templates"),
        bytecode_cache=_bytecode_cache(),
        auto_reload=False,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=guard_for(nos),
    )
    env.template_class = GuardedTemplate
    filters = cast("dict[str, Callable[..., object]]", env.filters)  # pyright: ignore[reportUnknownMemberType] - jinja2 leaves it untyped
    filters["kbytes"] = kbytes
    filters["token"] = partial(token, nos=nos)
    filters["text"] = text
    filters["nvue_text"] = nvue_text
    filters["seconds"] = seconds
    filters["vlan_ranges"] = vlan_ranges_text
    return env


@cache
def template(name: str) -> Template:
    """A compiled template (compiled once per process), guarded for the NOS its directory names."""
    nos = name.split("/", 1)[0]
    return _environment(nos).get_template(name)
