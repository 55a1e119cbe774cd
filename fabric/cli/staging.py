"""A render's files written as they render, into a hidden staging folder, and moved into the output directory only once
every file has rendered and every output path has passed ``refuse_links``.

Holding every rendered file until the last switch rendered cost memory in the fabric's size (43 MB of configs for
2,048 SONiC nodes, all of it fresh pages) and left the whole write for the end; a file staged as it renders is freed at
once, and the write overlaps the rendering. The contract is unchanged: nothing enters the output directory before every
switch has rendered and the paths are checked; a render that fails removes its staging folder, and nothing else was
written. Moving a staged file in is a rename (``OutputTree.move_in``): a reader never sees half a file.

Where: in the directory the user named when it exists, else in its nearest existing ancestor (a rename needs the same
file system, and the output directory itself is made only when the files move in). The folder is named
``STAGING_PREFIX`` plus ``tempfile.mkdtemp``'s random suffix, mode 0700, and the render holds an exclusive ``flock``
on it (inherited by its forked workers) until it is removed. A render killed outright (SIGKILL, out of memory) cannot
remove its folder; the next render staging in the same place removes every such folder no process holds locked, and
nothing else.

Example:
    >>> import tempfile
    >>> from fabric.cli.output import DIR_FLAGS, NEW_FILE_FLAGS, OutputTree
    >>> out = Path(tempfile.mkdtemp()) / "out"
    >>> with Staging(out) as staging:
    ...     staging.put("a/b.txt", "hello\\n")
    ...     before = out.exists()
    ...     with OutputTree(out) as tree:
    ...         digests = staging.commit(tree, staging.entries)
    >>> before, (out / "a" / "b.txt").read_text(), sorted(p.name for p in out.parent.iterdir())
    (False, 'hello\\n', ['out'])
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Self

from fabric.cli.output import DIR_FLAGS, NEW_FILE_FLAGS, OutputTree

STAGING_PREFIX = ".gpufabric-staging-"
_STAGING_NAME = re.compile(re.escape(STAGING_PREFIX) + r"[a-z0-9_]{8}")
"""A folder ``tempfile.mkdtemp(prefix=STAGING_PREFIX)`` makes (8 random characters of ``[a-z0-9_]``), nothing else."""

Entry = tuple[str, str, str]
"""A staged file: its path relative to the output directory, its name in the staging folder, its SHA-256 (or "")."""


class Staging:
    """The staging folder of one render (made on entering, removed on leaving by the process that made it).

    Every process of the render (the forked workers inherit it) stages its own files (``put``, ``open``) and keeps their
    ``entries``; once every switch has rendered and the paths are checked, each moves its own in (``commit``).
    """

    def __init__(self, root: Path, *, named: Path | None = None, digest: bool = False) -> None:
        """Stage files for ``root`` (below ``named``, the directory the user named, as ``OutputTree`` takes them);
        ``digest``: keep each file's SHA-256."""
        self._top = named if named is not None else root
        self._digest = digest
        self.entries: list[Entry] = []
        self.path = Path()
        self._fd = -1
        self._owner = -1

    def __enter__(self) -> Self:
        """Make the staging folder and lock it, after removing the folders earlier renders were killed before removing."""
        home = _home(self._top)
        remove_abandoned(home)
        try:
            self.path = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=home))
        except OSError as exc:  # named for the directory the user named, not for the folder that was to be made
            raise type(exc)(exc.errno, f"{exc.strerror} (making a staging folder in {str(home)!r})", str(self._top)) from exc
        try:
            self._fd = os.open(self.path, DIR_FLAGS)
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new folder: nobody else holds it
        except OSError:  # the folder went, or cannot be locked: leave nothing behind
            if self._fd >= 0:
                os.close(self._fd)
            shutil.rmtree(self.path, ignore_errors=True)
            raise
        self._owner = os.getpid()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        """Remove the folder and what is still in it (nothing after a commit); only the process that made it does."""
        if os.getpid() != self._owner:
            return
        try:
            shutil.rmtree(self.path, ignore_errors=True)
        finally:
            os.close(self._fd)
            self._owner = -1

    def put(self, relative: str, text: str) -> None:
        """Stage ``text`` (UTF-8) as the file ``relative``."""
        data = text.encode()
        name = self._new_name()
        fd = os.open(name, NEW_FILE_FLAGS, 0o666, dir_fd=self._fd)
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        self.entries.append((relative, name, hashlib.sha256(data).hexdigest() if self._digest else ""))

    @contextmanager
    def open(self, relative: str) -> Generator[BinaryIO]:
        """A new staged file for ``relative`` to write bytes into (``plan.json``); kept only if the block ends without an error."""
        name = self._new_name()
        fd = os.open(name, NEW_FILE_FLAGS, 0o666, dir_fd=self._fd)
        with os.fdopen(fd, "wb") as stream:
            yield stream
        digest = ""
        if self._digest:
            with os.fdopen(os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self._fd), "rb") as stream:
                digest = hashlib.file_digest(stream, "sha256").hexdigest()
        self.entries.append((relative, name, digest))

    def commit(self, tree: OutputTree, entries: list[Entry]) -> dict[str, str]:
        """Move ``entries`` (this process's) into ``tree``; each relative path → its SHA-256 (or "")."""
        for relative, name, _ in entries:
            tree.move_in(self._fd, name, relative)
        return {relative: digest for relative, _, digest in entries}

    def _new_name(self) -> str:
        """A name no process of this render uses: this process's PID and a count."""
        return f"{os.getpid()}-{len(self.entries)}"


def _home(top: Path) -> Path:
    """Where the staging folder goes: ``top`` when it exists, else its nearest existing ancestor (``check_output_dir``
    has refused a file on the way)."""
    for place in (top, *top.absolute().parents):
        if place.is_dir():
            return place
    return Path("/")


MAX_ABANDONED = 64
"""Staging folders removed per render at most: what a few killed renders leave, never an unbounded sweep."""


def remove_abandoned(home: Path) -> list[str]:
    """Remove the staging folders in ``home`` that no process holds locked (their render was killed); their names.

    Only a folder named as ``Staging`` names its own, not a link, and only when its ``flock`` is free: a render still
    running holds it. At most ``MAX_ABANDONED`` per call.
    """
    removed: list[str] = []
    try:
        listing = [e for e in os.scandir(home) if _STAGING_NAME.fullmatch(e.name) and e.is_dir(follow_symlinks=False)]
    except OSError:  # not listable: nothing to sweep; making the folder will say what is wrong
        return removed
    for entry in sorted(listing, key=lambda e: e.name)[:MAX_ABANDONED]:
        try:
            fd = os.open(entry.path, DIR_FLAGS)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: a render is using it
            os.close(fd)
            continue
        try:
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.name)
        finally:
            os.close(fd)
    return removed


__all__ = ["MAX_ABANDONED", "STAGING_PREFIX", "Entry", "Staging", "remove_abandoned"]
