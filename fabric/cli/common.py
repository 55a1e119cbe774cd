"""What every command shares: exit codes, the consoles, a spinner, the template cache, refusals of bad output paths."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TextIO

from rich.console import Console

from fabric.classcode import cache_home
from fabric.errors import Finding, InputError

EXIT_OK, EXIT_FAILED, EXIT_INVALID, EXIT_PENDING, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def console(stream: TextIO) -> Console:
    """Rich on a terminal; off one (pipes, CI logs) plain text: full lines, no wrapping, no colour, no markup styles."""
    if stream.isatty():
        return Console(file=stream)
    return Console(file=stream, width=100_000, soft_wrap=True, no_color=True, color_system=None, highlight=False, emoji=False)


def status(err: Console, text: str) -> AbstractContextManager[object]:
    """A spinner on a terminal; elsewhere nothing (rich's spinner machinery is not even imported)."""
    return err.status(text) if err.is_terminal else nullcontext()


def template_cache() -> None:
    """Compiled templates kept between runs in ``$XDG_CACHE_HOME/gpufabric/jinja`` (``~/.cache``); off with GPUFABRIC_NO_CACHE=1."""
    home = cache_home()
    if home is None:
        return
    from fabric.render.template_cache import use_bytecode_cache

    use_bytecode_cache(home / "jinja")


def finding_data(findings: Sequence[Finding]) -> list[dict[str, object]]:
    """Findings as JSON-ready records: file, line, path, severity, message."""
    return [{"file": f.file, "line": f.line, "path": f.dotted_path, "severity": f.severity, "message": f.message} for f in findings]


def usage_error(where: str, problem: str) -> InputError:
    """A refusal of a command-line value (exit 2), named by where it was given."""
    return InputError([Finding((), problem, file=where)], where)


def check_output_file(path: Path) -> None:
    """Refuse an output file whose directory is missing, that is itself a directory or that is a link (a write would
    replace the link, not the file it points to: name that file instead), before anything is computed."""
    if path.is_symlink():
        problem = f"-o names a symbolic link (to {str(path.readlink())!r}); name the file itself, output never goes through a link"
        raise usage_error(str(path), problem)
    if path.is_dir():
        raise usage_error(str(path), "-o names a directory; give a file name, e.g. plan.json")
    if not path.parent.is_dir():
        raise usage_error(str(path), f"-o: the directory {str(path.parent)!r} does not exist; create it first")


def check_output_dir(path: Path) -> None:
    """Refuse an output directory that exists as something else, or whose parts exist as files."""
    for part in (path, *path.parents):
        if part.exists() and not part.is_dir():
            raise usage_error(str(path), f"-o: {str(part)!r} exists and is not a directory; name a directory (it is created if missing)")
