"""Files written into a directory the user named (``render -o``, ``report -o``, ``export -o``), never through a link.

A link already inside the output directory (``plan.json`` pointing at another file, ``switches/leaf01`` at another
folder) would carry a write somewhere the user did not name (issue 30). So, below the directory the user named:

- ``refuse_links`` looks at every path about to be written before anything is: a symbolic link on the way or in a
  file's place, a file where a folder goes or a folder where a file goes, is refused (``InputError``, exit 2, the
  path, the problem and the fix), and nothing is written;
- ``OutputTree`` then writes each file through directory descriptors opened with ``O_NOFOLLOW`` (a link that appears
  in between ends the write with an error instead of following it), into a temporary file in the file's folder that
  is renamed over the name: a reader never sees half a file, and a rename replaces a link instead of writing through it.

The directory the user named may itself be a link (``-o ~/configs`` where ``~`` is one): that is the user's choice.
Files are created 0666 less the umask, as ``open`` would; folders 0777 less the umask.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import shutil
import stat
from collections.abc import Generator, Iterable
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from fabric.errors import Finding, InputError

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""A folder opened never through a link (ELOOP / ENOTDIR instead)."""
NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
"""A file that must be new, written never through a link."""


def _parts(relative: str) -> tuple[str, ...]:
    parts = PurePosixPath(relative).parts
    if not parts or any(p in {"", ".", ".."} or "/" in p for p in parts) or PurePosixPath(relative).is_absolute():
        msg = f"output path {relative!r} leaves its directory"
        raise ValueError(msg)
    return parts


def _refusal(root: Path, where: Path, problem: str) -> InputError:
    msg = f"-o: {str(where)!r} {problem}; nothing was written. Fix: remove it, or name another output directory than {str(root)!r}"
    return InputError([Finding((), msg, file=str(where))], str(where))


def _below(root: Path, named: Path | None) -> tuple[str, ...]:
    """The folders of ``root`` below ``named`` (the directory the user named; ``build`` for ``build/<cluster>``)."""
    return () if named is None or named == root else _parts(root.relative_to(named).as_posix())


def refuse_links(root: Path, relatives: Iterable[str], *, named: Path | None = None) -> None:
    """Refuse, before anything is written, any of ``relatives`` (paths below ``root``) that would be written through a
    link or over something that is not a regular file; the folders of ``root`` below ``named`` are held to the same.

    Each folder is read once (``os.scandir``: the kind of every entry, no ``lstat`` per file; a folder that cannot be
    read falls back to ``lstat``), and a plain relative path is split as a string: some 1,700 paths of a 2,048-node
    render cost about 3 ms, not 15-30 ms.

    Raises:
        InputError: the first such path (a link, a file where a folder goes, a folder or device where a file goes).
    """
    base = _below(root, named)
    top = named if named is not None else root
    folders: dict[tuple[str, ...], dict[str, int] | None] = {}
    seen: set[tuple[str, ...]] = set()
    for relative in relatives:
        parts = base + _split(relative)
        for depth in range(1, len(parts) + 1):
            prefix = parts[:depth]
            if prefix in seen:
                continue
            seen.add(prefix)
            folder = prefix[:-1]
            entries = folders[folder] if folder in folders else folders.setdefault(folder, _entries(top, folder))
            mode = entries.get(prefix[-1]) if entries is not None else _lstat(top, prefix)
            if mode is None:
                break  # nothing below a missing folder exists either
            if stat.S_ISLNK(mode):
                raise _refusal(top, top.joinpath(*prefix), "is a symbolic link; output is never written through a link")
            last = depth == len(parts)
            if last and not stat.S_ISREG(mode):
                raise _refusal(top, top.joinpath(*prefix), "exists and is not a regular file")
            if not last and not stat.S_ISDIR(mode):
                raise _refusal(top, top.joinpath(*prefix), "exists and is not a folder")


def _split(relative: str) -> tuple[str, ...]:
    """``_parts`` of a plain relative path (no empty, ``.`` or ``..`` part: then both agree) without ``PurePosixPath``."""
    parts = tuple(relative.split("/"))
    return _parts(relative) if "" in parts or "." in parts or ".." in parts else parts


def _entries(top: Path, folder: tuple[str, ...]) -> dict[str, int] | None:
    """The file type (``stat.S_IFMT``: link, folder, file, 0 for anything else) of every entry of ``top/folder``, as
    ``lstat`` would give it; empty for a missing folder; None for one that cannot be read (then ``_lstat`` per path).

    Raises:
        PermissionError: a folder that can be listed but not searched (read without execute permission): nothing in it
            could be written, and ``lstat`` of a path in it fails the same way.
    """
    path = os.path.join(top, *folder)
    try:
        with os.scandir(path) as listing:
            entries = {entry.name: _mode(entry) for entry in listing}
    except FileNotFoundError:
        return {}
    except NotADirectoryError:
        raise _refusal(top, Path(path), "is not a folder") from None
    except PermissionError:
        return None
    if entries and not os.access(path, os.X_OK):  # listed, yet nothing in it can be reached: as lstat fails it
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
    return entries


def _mode(entry: os.DirEntry[str]) -> int:
    if entry.is_symlink():
        return stat.S_IFLNK
    if entry.is_dir(follow_symlinks=False):
        return stat.S_IFDIR
    return stat.S_IFREG if entry.is_file(follow_symlinks=False) else 0


def _lstat(top: Path, prefix: tuple[str, ...]) -> int | None:
    """The mode of ``top/prefix`` (not following a link there), None if missing."""
    path = top.joinpath(*prefix)
    try:
        return path.lstat().st_mode
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise _refusal(top, path.parent, "is not a folder") from None


class OutputTree:
    """Writes files below ``root`` (made if missing) through descriptors that never follow a link below ``named``
    (default: ``root`` itself), the directory the user named.

    Use it as a context manager: leaving closes the folder descriptors it opened.
    """

    def __init__(self, root: Path, *, named: Path | None = None) -> None:
        """Open (making it if missing) the directory the user named; a link there is followed (the user named it)."""
        top = named if named is not None else root
        self._top, self._base = top, _below(root, named)
        top.mkdir(parents=True, exist_ok=True)
        self._folders: dict[tuple[str, ...], int] = {(): os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)}

    def __enter__(self) -> OutputTree:
        """The tree itself."""
        return self

    def __exit__(self, *_: object) -> None:
        """Close every folder descriptor."""
        for fd in self._folders.values():
            os.close(fd)
        self._folders.clear()

    def _folder(self, parts: tuple[str, ...]) -> int:
        """The descriptor of folder ``parts``, each step made if missing and opened without following a link."""
        fd = self._folders.get(parts)
        if fd is not None:
            return fd
        parent = self._folder(parts[:-1])
        try:
            with contextlib.suppress(FileExistsError):  # made by an earlier run or by another worker
                os.mkdir(parts[-1], 0o777, dir_fd=parent)
            fd = os.open(parts[-1], DIR_FLAGS, dir_fd=parent)  # ELOOP / ENOTDIR on a link: an error, never a followed link
        except OSError as exc:
            raise self._named_error(exc, parts) from exc
        self._folders[parts] = fd
        return fd

    def _named_error(self, exc: OSError, parts: tuple[str, ...]) -> OSError:
        """``exc`` naming the whole path (an error from a ``dir_fd`` call names only the last part)."""
        return type(exc)(exc.errno, exc.strerror, str(self._top.joinpath(*parts)))

    @contextmanager
    def open(self, relative: str) -> Generator[BinaryIO]:
        """A new file for ``relative``, renamed over the name when the block ends without an error (dropped otherwise)."""
        parts = self._base + _parts(relative)
        folder = self._folder(parts[:-1])
        temporary = f".{parts[-1]}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(temporary, NEW_FILE_FLAGS, 0o666, dir_fd=folder)
        except OSError as exc:
            raise self._named_error(exc, parts) from exc
        try:
            with os.fdopen(fd, "wb") as stream:
                yield stream
            os.replace(temporary, parts[-1], src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException as exc:
            os.unlink(temporary, dir_fd=folder)
            if isinstance(exc, OSError) and exc.filename is not None:
                raise self._named_error(exc, parts) from exc
            raise

    def move_in(self, source_dir: int, source: str, relative: str) -> None:
        """Rename the file ``source`` of the folder ``source_dir`` (a descriptor) over ``relative``: a staged file moved
        in (``fabric.cli.staging``). Across file systems (a folder below the output directory is a mount point) its
        bytes are copied into a new file renamed over the name instead, and the source removed."""
        parts = self._base + _parts(relative)
        folder = self._folder(parts[:-1])
        try:
            os.replace(source, parts[-1], src_dir_fd=source_dir, dst_dir_fd=folder)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise self._named_error(exc, parts) from exc
            staged = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=source_dir)
            with os.fdopen(staged, "rb") as data, self.open(relative) as stream:
                shutil.copyfileobj(data, stream, 1 << 20)
            os.unlink(source, dir_fd=source_dir)

    def sha256(self, relative: str) -> str:
        """The SHA-256 of a file written here, read back without following a link."""
        parts = self._base + _parts(relative)
        fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self._folder(parts[:-1]))
        with os.fdopen(fd, "rb") as stream:
            return hashlib.file_digest(stream, "sha256").hexdigest()

    def write(self, files: dict[str, str], *, digest: bool = True) -> dict[str, str]:
        """Write every file (relative path → text); returns path → SHA-256 of its bytes (or "" without ``digest``)."""
        digests: dict[str, str] = {}
        for relative, text in files.items():
            data = text.encode()
            with self.open(relative) as stream:
                stream.write(data)
            digests[relative] = hashlib.sha256(data).hexdigest() if digest else ""
        return digests


def write_files(root: Path, files: dict[str, str], *, digest: bool = True, named: Path | None = None) -> dict[str, str]:
    """Write every file under ``root`` (``files`` maps a relative path to its text); returns path → SHA-256 (or "")."""
    with OutputTree(root, named=named) as tree:
        return tree.write(files, digest=digest)
