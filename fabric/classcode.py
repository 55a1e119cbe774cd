"""Dataclass methods compiled once per machine and class text, not once per process (issue 36).

``dataclasses`` writes each class's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` (and a frozen class's
``__setattr__`` and ``__delattr__``) as source text and compiles it with ``exec`` when the class is created (CPython
3.11 ``Lib/dataclasses.py``, ``_create_fn``: ``exec(txt, globals, ns)``; 3.12 the same; 3.13 ``_FuncBuilder.
add_fns_to_class``: one ``exec`` per class). A render creates some 150 dataclasses (gpufabric's ~110 plan, facts and
render classes, the rest in the libraries it imports after ``fabric``): about 500 compiles, some 40 ms of every
command's start, the largest single item of a render's imports. ``typing.ForwardRef`` likewise compiles each
annotation text it is given (``compile(text, "<string>", "eval")``): pydantic-core's schema types alone make some
1,000 of them at import, about 10 ms.

``install`` (called first thing by ``fabric/__init__.py``) gives the ``dataclasses`` module its own ``exec``, a module
global its ``exec(txt, …)`` finds before the builtin. For a class created from then on it looks the text up in its
module's cache file and runs the code object stored under that exact text; else it compiles the text as
``dataclasses`` would (``compile(text, "<string>", "exec")``, no ``__future__`` flag inherited, as ``exec`` in
``dataclasses`` inherits none) and keeps it. So the methods are the very code a compile of the same text gives, and an
entry cannot go stale: a changed field, default, type or option changes the text, which is then a miss. Classes
created before ``install`` are untouched; those of a script's ``__main__`` are compiled as before, never cached.
``typing`` gets its own ``compile`` the same way, for the forward references' texts (one file for every caller, kept
across processes up to ``FORWARD_REFS_MAX`` texts).

The cache lives in ``$XDG_CACHE_HOME/gpufabric/classes`` (``~/.cache``), one file per module and interpreter
(``sys.implementation.cache_tag``, ``sys.hexversion``, ``marshal.version`` in the name), off with
``GPUFABRIC_NO_CACHE=1``. An entry is code this process runs, so the rules of the template cache apply
(``fabric/render/_jinja_env.py``, issue 30): only a directory owned by the user and closed to others (``open_private_dir``),
only a regular file (no link) owned by the user and not group- or world-writable, and a file whose SHA-256 does not
match its contents (truncated, damaged) is ignored and written again. A module with a miss has its file rewritten at
exit by the process that installed the cache (never by a forked render worker) with the texts this process used:
what another checkout's classes left there is replaced, so a file holds one version of its module.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import dataclasses
import hashlib
import marshal
import os
import stat
import sys
import typing
from pathlib import Path
from types import CodeType
from typing import cast

SUFFIX = f"{sys.implementation.cache_tag}-{sys.hexversion:x}-m{marshal.version}.code"
"""The interpreter a file was written by: marshalled code is read only by the interpreter that wrote it."""

FORWARD_REFS = "typing-forward-refs"
"""The file of ``typing.ForwardRef``'s compiled annotation texts (no module is named so)."""
FORWARD_REFS_MAX = 4096
"""Texts kept in it across processes; past that only the last process's."""

_state: dict[str, object] = {}  # "folder": the open cache directory, "pid": the process that saves at exit
_files: dict[str, dict[str, CodeType]] = {}  # module -> its file's entries (read once, on the module's first class)
_used: dict[str, dict[str, CodeType]] = {}  # module -> the texts this process compiled or found, with their code
_missed: set[str] = set()  # modules with a text their file lacked


def cache_home() -> Path | None:
    """``$XDG_CACHE_HOME/gpufabric`` (``~/.cache/gpufabric``); None with ``GPUFABRIC_NO_CACHE=1`` or no home."""
    if os.environ.get("GPUFABRIC_NO_CACHE") == "1":
        return None
    base = os.environ.get("XDG_CACHE_HOME")
    try:
        return (Path(base) if base else Path.home() / ".cache") / "gpufabric"
    except RuntimeError:  # no home directory to be found
        return None


def open_private_dir(directory: Path) -> int | None:
    """A descriptor of ``directory`` (made 0700 if missing) when it is a directory, no link, owned by this user and
    closed to everyone else (mode 0700 or stricter); None otherwise (the cache is then not used, never repaired: what
    others could write there before is not to be trusted)."""
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    info = os.fstat(fd)
    if info.st_uid != os.geteuid() or info.st_mode & 0o077:
        os.close(fd)
        return None
    return fd


def install() -> None:
    """Cache the methods of every dataclass created from now on and ``typing``'s forward references (once per
    process; a no-op when the cache is off or its directory is not private)."""
    if "folder" in _state:
        return
    home = cache_home()
    folder = open_private_dir(home / "classes") if home else None
    if folder is None:
        return
    _state["folder"], _state["pid"] = folder, os.getpid()
    dataclasses.exec = _exec  # type: ignore[attr-defined] - a module global the module's own ``exec(txt, …)`` finds first
    typing.compile = _compile  # type: ignore[attr-defined] - likewise for ``ForwardRef``'s ``compile(text, …)``
    atexit.register(save)


def uninstall() -> None:
    """``dataclasses`` and ``typing`` compile with the builtins again; nothing more is cached or saved."""
    if getattr(dataclasses, "exec", None) is _exec:
        del dataclasses.exec  # type: ignore[attr-defined]
    if getattr(typing, "compile", None) is _compile:
        del typing.compile  # type: ignore[attr-defined]
    folder = _state.pop("folder", None)
    if isinstance(folder, int):
        os.close(folder)
    _state.clear()
    _files.clear()
    _used.clear()
    _missed.clear()
    atexit.unregister(save)


def _exec(source: object, globals: dict[str, object] | None = None, locals: dict[str, object] | None = None, /) -> None:
    """``exec`` as ``dataclasses`` calls it: a module's text runs its cached code, compiled once."""
    module = globals.get("__name__") if globals is not None else None
    if type(source) is not str:
        builtins.exec(source, globals, locals)  # type: ignore[arg-type]  # noqa: S102 - code objects pass through
    elif type(module) is not str or (module not in _files and not _cacheable(module)):
        builtins.exec(compile(source, "<string>", "exec", dont_inherit=True), globals, locals)  # noqa: S102 - dataclasses' own
    else:
        builtins.exec(_code(module, source, "exec"), globals, locals)  # noqa: S102 - the code of dataclasses' own text


def _compile(source: object, filename: str, mode: str, /, *args: object, **kwargs: object) -> CodeType:
    """``compile`` as ``typing.ForwardRef`` calls it (``compile(text, "<string>", "eval")``, typing.py 3.11-3.13): the
    cached code of the text. Any other call is compiled as asked, with ``typing``'s own ``__future__`` flags (none)."""
    if not args and not kwargs and type(source) is str and filename == "<string>" and mode == "eval":
        return _code(FORWARD_REFS, source, "eval")
    options = dict(zip(("flags", "dont_inherit", "optimize"), args, strict=False)) | kwargs
    options.setdefault("dont_inherit", True)
    return builtins.compile(source, filename, mode, **options)  # type: ignore[call-overload]


def _code(label: str, source: str, mode: str) -> CodeType:
    """The code of ``source`` from ``label``'s file (read on first use), else compiled (``dont_inherit``: as the
    ``dataclasses`` and ``typing`` modules compile, with no ``__future__`` flag) and kept for ``save``."""
    entries = _files.get(label)
    if entries is None:
        entries = _files[label] = _read(label)
    code = entries.get(source)
    if code is None:
        code = compile(source, "<string>", mode, dont_inherit=True)
        _missed.add(label)
    _used.setdefault(label, {})[source] = code
    return code


def _cacheable(module: str) -> bool:
    """A module whose name can name its file: dotted identifiers, not a script's ``__main__`` (one name, many files)."""
    return module != "__main__" and len(module) < 200 and all(part.isidentifier() for part in module.split("."))


def _read(module: str) -> dict[str, CodeType]:
    """The entries of ``module``'s file when it is ours, private and whole; else none (every text is then compiled)."""
    folder = _state.get("folder")
    if not isinstance(folder, int):
        return {}
    try:
        fd = os.open(f"{module}.{SUFFIX}", os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=folder)
    except OSError:  # missing, a link (ELOOP), unreadable
        return {}
    with os.fdopen(fd, "rb") as stream:
        info = os.fstat(stream.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
            return {}
        data = stream.read()
    digest, payload = data[:32], data[32:]
    entries: object = None
    if len(digest) == 32 and hashlib.sha256(payload).digest() == digest:
        with contextlib.suppress(EOFError, ValueError, TypeError):
            entries = marshal.loads(payload)  # noqa: S302 - our own private, checksummed file (the checks above)
    if not isinstance(entries, dict):
        return {}
    items = cast("dict[object, object]", entries).items()
    return {k: v for k, v in items if type(k) is str and type(v) is CodeType}


def save() -> None:
    """Write each module that had a miss: the texts this process used, to a temporary file renamed over the module's
    file. Only the process that installed the cache writes (a forked worker inherits the exit hook, not the job); a
    failure (full disk, a vanished directory) only costs the next process the compiles."""
    folder = _state.get("folder")
    if not isinstance(folder, int) or _state.get("pid") != os.getpid():
        return
    import secrets  # only a process that writes needs it

    for module in sorted(_missed):
        name = f"{module}.{SUFFIX}"
        entries = _used[module]
        if module == FORWARD_REFS and len(merged := {**_files.get(module, {}), **entries}) <= FORWARD_REFS_MAX:
            entries = merged  # one file for every caller's annotations: what other processes used is kept
        payload = marshal.dumps(entries)
        temporary = f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=folder)
        except OSError:
            continue
        try:
            with os.fdopen(fd, "wb") as stream:
                stream.write(hashlib.sha256(payload).digest() + payload)
            os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=folder)
    _missed.clear()
