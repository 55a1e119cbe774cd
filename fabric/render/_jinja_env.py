"""Jinja2 itself, imported with the first template (``fabric.render._jinja.template``), not with the guard.

The guard, the filters and the bytecode cache's directory live in ``fabric.render._jinja``, which every renderer imports;
a render whose switches are all built in Python (EOS and SONiC compute switches, FRR) never loads a template, and now
never imports Jinja either (some 15 ms of a render's start-up, issue 36). What needs Jinja's classes is here: the
environments, ``GuardedTemplate`` (a refusal names the template) and ``PrivateBytecodeCache`` (issue 30).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import stat
from collections.abc import Callable, Mapping
from typing import cast

from jinja2 import BytecodeCache, Environment, PackageLoader, StrictUndefined, Template
from jinja2.bccache import Bucket

from fabric.errors import RenderError


class GuardedTemplate(Template):
    """A template whose refused value names the template: ``nxos/interfaces.j2: refusing to render …``."""

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


def environment(finalize: Callable[[object], object], filters: Mapping[str, Callable[..., object]], folder: int | None) -> Environment:
    """An environment of the package's templates printing every value through ``finalize``, with these ``filters``;
    compiled templates kept in the directory open as ``folder`` (``PrivateBytecodeCache``), or in memory (None).

    ``fabric.render._jinja.template`` makes one per NOS, with that NOS's guard and filters.
    """
    env = Environment(  # noqa: S701 - renders device configs, not HTML
        loader=PackageLoader("fabric.render", "templates"),
        bytecode_cache=None if folder is None else PrivateBytecodeCache(folder),
        auto_reload=False,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=finalize,
    )
    env.template_class = GuardedTemplate
    cast("dict[str, Callable[..., object]]", env.filters).update(filters)  # pyright: ignore[reportUnknownMemberType] - jinja2 leaves it untyped
    return env
