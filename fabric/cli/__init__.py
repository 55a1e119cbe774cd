"""The command line: ``gpufabric`` / ``python -m fabric`` and its command groups, one module each.

``init`` (``fabric.cli.init``) · ``validate``, ``plan``, ``schema`` (``fabric.cli.validate``) · ``render``, ``report``,
``lint`` (``fabric.cli.render``, the worker processes in ``fabric.cli.render_workers``) · ``lab`` (``fabric.cli.twin``) · ``diff``, ``push``,
``rollback``, ``verify`` (``fabric.cli.apply``) · ``nodes`` (``fabric.cli.nodes``) · ``export`` (``fabric.cli.export``) ·
``accept`` (``fabric.cli.accept``).
A group's module is imported only when one of its commands runs (or for the full help).

Exit codes: 0 success; 2 invalid definition or arguments (nothing written); 1 any other failure, and lint findings;
3 changes pending (``diff``, ``push --detailed-exitcode``); 130 interrupted (apply commands).
"""

from __future__ import annotations

import argparse
import atexit
import dataclasses
import importlib
import logging
import os
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from rich.console import Console
from rich.markup import escape

from fabric.cli.common import EXIT_FAILED, EXIT_INVALID, console
from fabric.cli.helpshape import DEBUG_HELP, VersionAction, shape_help
from fabric.errors import FabricError, InputError, PlanError, RenderError
from fabric.reports.console import print_findings

GROUPS = {  # command -> the module that registers and runs it, in help order
    "init": "init",
    "validate": "validate",
    "plan": "validate",
    "render": "render",
    "report": "render",
    "lint": "render",
    "lab": "twin",
    "diff": "apply",
    "push": "apply",
    "rollback": "apply",
    "verify": "apply",
    "nodes": "nodes",
    "export": "export",
    "accept": "accept",
    "schema": "validate",  # registered last (``add_schema``); named here so that ``schema`` imports no other group
}
Handler = Callable[[argparse.Namespace, Console, Console], int]


def _parser(command: str | None) -> tuple[argparse.ArgumentParser, dict[str, Handler]]:
    """The argument parser and each registered command's handler; a known ``command`` (the first word given) spares
    the import of the other groups."""
    prog = "gpufabric" if Path(sys.argv[0]).name == "gpufabric" else "python -m fabric"  # the console script or the module
    parser = argparse.ArgumentParser(prog=prog, description="GPU cluster and fabric as code.")
    parser.add_argument("--version", action=VersionAction)
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    sub = parser.add_subparsers(dest="command", required=True)
    wanted = {GROUPS[command]} if command in GROUPS else set(GROUPS.values())
    handlers: dict[str, Handler] = {}
    for group in dict.fromkeys(GROUPS.values()):
        if group in wanted:
            module = importlib.import_module(f"fabric.cli.{group}")
            module.add_commands(sub)
            handlers |= module.COMMANDS
    validate = importlib.import_module("fabric.cli.validate")
    validate.add_schema(sub)
    handlers["schema"] = validate.COMMANDS["schema"]
    shape_help(sub)
    return parser, handlers


def _logging(*, debug: bool) -> None:
    """Device libraries log tracebacks of every failed connection (paramiko's transport thread): one line per device is
    what a terminal or CI log gets, and ``--debug`` shows them with gpufabric's own full errors."""
    if debug:
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
        logging.getLogger("fabric").setLevel(logging.DEBUG)
        return
    for name in ("paramiko", "netmiko"):
        logger = logging.getLogger(name)
        if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
            logger.addHandler(logging.NullHandler())  # so Python's last-resort handler never prints their tracebacks


def _in_definition(exc: InputError, definition: object) -> InputError:
    """``exc`` with the command's definition file on each finding that names no file: a refusal raised after planning
    (``export nccl`` of Spectrum-X hwplb, ``export k8s`` of Spectrum-X on InfiniBand) is about the definition's YAML path.

    Example:
        >>> from fabric.errors import Finding
        >>> _in_definition(InputError([Finding(("fabric",), "no")]), Path("c.yaml")).findings[0].file
        'c.yaml'
    """
    if not isinstance(definition, (str, Path)) or all(f.file for f in exc.findings):
        return exc
    located = [f if f.file else dataclasses.replace(f, file=str(definition)) for f in exc.findings]
    return InputError(located, exc.file or str(definition))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (2 for anything the input must fix, 1 for other failures)."""
    words = list(sys.argv[1:] if argv is None else argv)
    parser, handlers = _parser(next((w for w in words if not w.startswith("-")), None))
    args = parser.parse_args(words)
    out, err = console(sys.stdout), console(sys.stderr)
    _logging(debug=args.debug)
    try:
        return handlers[args.command](args, out, err)
    except InputError as exc:
        exc = _in_definition(exc, getattr(args, "file", None))
        err.print(f"[bold red]{escape(exc.file or 'definition')}: invalid, {len(exc.errors)} error(s)[/]", highlight=False)
        print_findings(err, exc.findings)
        return EXIT_INVALID
    except (PlanError, RenderError) as exc:
        err.print(f"[bold red]cannot {'plan' if isinstance(exc, PlanError) else 'render'}:[/] {escape(str(exc))}", highlight=False)
        return EXIT_INVALID
    except FabricError as exc:  # may quote a device's reply: shown with its control characters escaped
        from fabric.apply.terminal import visible  # here: a render that succeeds imports nothing of apply

        if args.debug:
            logging.getLogger("fabric").debug("the error in full", exc_info=exc)
        err.print(f"[bold red]error:[/] {escape(visible(str(exc)))}", highlight=False)
        return EXIT_FAILED
    except OSError as exc:  # the machine, not the definition: a full disk, a permission, a vanished directory
        from fabric.apply.terminal import visible

        err.print(f"[bold red]error:[/] {escape(visible(str(exc)))}", highlight=False)
        return EXIT_FAILED


def run() -> NoReturn:
    """The process's entry (``gpufabric``, ``python -m fabric``): ``main()``, then ``exit_now`` with its code."""
    exit_now(main())


EXIT_FLUSH_FAILED = 120
"""The status CPython itself exits with when flushing a standard stream fails at exit, whatever the code given
(``Py_Exit``: ``if (Py_FinalizeEx() < 0) sts = 120``, Python/pylifecycle.c, CPython 3.11-3.13)."""


def exit_now(code: int) -> NoReturn:
    """End the process with ``code`` as the interpreter would, less its teardown.

    The ``atexit`` handlers run (the class-code cache is written, ``logging`` flushed, multiprocessing's children
    joined), the standard streams are flushed, then ``os._exit``. What is skipped is the teardown: a full cyclic
    collection and every module's objects freed one by one, some 0.1 CPU s of a 16 x 128 render's 0.8 (issue 36),
    nothing a finished command needs. While another thread still runs (a command that left a worker thread) the
    interpreter's own exit waits for it as before: ``sys.exit``.
    """
    if threading.active_count() > 1:
        sys.exit(code)
    atexit._run_exitfuncs()  # pyright: ignore[reportPrivateUsage] - the interpreter's own exit hook, in CPython since 3.0
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: 120 whatever the code, as the interpreter's exit
            code = EXIT_FLUSH_FAILED
    os._exit(code)
