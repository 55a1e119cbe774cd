"""One shape for every subcommand's ``--help``: usage, a one-line summary, every argument explained, examples and
the exit codes. Each command group registers its own arguments; ``shape_help`` fills in what every help page shares,
so a new command cannot ship a bare page (``tests/firsthour/test_cli_frictions.py`` walks them all).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXAMPLES: dict[str, tuple[str, ...]] = {
    "init": ("gpufabric init --target onprem-roce -o cluster.yaml", "gpufabric init --target aws --name train-1 -o train-1.yaml"),
    "validate": ("gpufabric validate cluster.yaml", "gpufabric validate --json sites/*.yaml"),
    "plan": ("gpufabric plan cluster.yaml", "gpufabric plan cluster.yaml --json -o plan.json"),
    "render": ("gpufabric render cluster.yaml -o out", "gpufabric render cluster.yaml --format avd -o out-avd"),
    "report": ("gpufabric report cluster.yaml -o out    # writes out/report.html",),
    "lint": ("gpufabric lint cluster.yaml", "gpufabric lint cluster.yaml --configs out    # hand-edited configs, as render laid them out"),
    "lab": ("sudo gpufabric lab up", "sudo gpufabric lab ping", "sudo gpufabric lab down inventories/lab/cluster.yaml"),
    "diff": ("gpufabric diff cluster.yaml --plane compute", "gpufabric diff cluster.yaml --offline --full"),
    "push": ("gpufabric push cluster.yaml    # dry run: the diffs only", "gpufabric push cluster.yaml --commit --plane oob"),
    "rollback": ("gpufabric rollback cluster.yaml --to CHANGE    # dry run", "gpufabric rollback cluster.yaml --to CHANGE --commit"),
    "verify": ("gpufabric verify cluster.yaml", "gpufabric verify cluster.yaml --cabling --from replies/"),
    "nodes": ("gpufabric nodes cluster.yaml --check --limit gpu001", "gpufabric nodes cluster.yaml --playbook check"),
    "export": ("gpufabric export nccl cluster.yaml -o out", "gpufabric export acceptance cluster.yaml -o out"),
    "accept": ("gpufabric accept localise cluster.yaml results/ -o follow-up",),
    "schema": ("gpufabric schema -o cluster.schema.json",),
}
POSITIONALS = {
    "file": "the cluster definition (YAML)",
    "files": "one or more cluster definitions (YAML), each checked on its own",
}
DEBUG_HELP = "on a failure, print the full error and traceback too (device errors are one line each without it)"
EXIT_CODES = "exit codes: 0 success; 1 failure (lint findings, an unreachable device); 2 invalid definition or arguments"
EXIT_EXTRA = {
    "diff": "; 3 changes pending",
    "push": "; 3 changes pending (--detailed-exitcode); 130 interrupted",
    "rollback": "; 130 interrupted",
    "accept": "; 1 slow pairs",
}


def version(name: str) -> str:
    """``importlib.metadata.version``, imported on first use: importing ``importlib.metadata`` and scanning every
    installed distribution costs a command some 20-30 ms, and only ``--version`` needs it (issue 36)."""
    from importlib.metadata import version as metadata_version

    return metadata_version(name)


def package_version() -> str:
    """The installed distribution's version (package metadata), or the checkout's ``pyproject.toml`` when run from a
    clone that was never installed.

    Example:
        >>> package_version().count(".") >= 2
        True
    """
    from importlib.metadata import PackageNotFoundError

    try:
        return version("gpufabric")
    except PackageNotFoundError:
        import tomllib

        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        try:
            project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        except (OSError, tomllib.TOMLDecodeError):
            return "unknown"
        return f"{project.get('version', 'unknown')} (checkout, not installed)"


class VersionAction(argparse.Action):
    """``--version``: print ``gpufabric VERSION`` and exit, the version looked up only then (argparse's own ``version``
    action takes the text when the parser is built, so every command would pay for ``package_version``)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, help: str | None = None) -> None:
        """Take no value, like argparse's ``version`` action."""
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help or "show program's version number and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object, option_string: str | None = None) -> None:
        """Print the version on stdout and exit 0."""
        del namespace, values, option_string
        sys.stdout.write(f"gpufabric {package_version()}\n")
        parser.exit()


def shape_help(sub: Any) -> None:  # noqa: ANN401 - argparse keeps its subparsers type private
    """Give each registered subcommand's help the common shape (a summary, argument help, examples, exit codes)."""
    summaries: dict[str, str] = {action.dest: action.help or "" for action in sub._choices_actions}
    parsers: dict[str, argparse.ArgumentParser] = sub.choices
    for name, parser in parsers.items():
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
        if not parser.description:
            parser.description = summaries.get(name, "")
        # also after the command word (gpufabric diff x.yaml --debug); SUPPRESS keeps the top-level value when absent here
        parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)
        for action in parser._actions:
            if not action.option_strings and action.help is None:
                action.help = POSITIONALS.get(action.dest)
        lines = ["examples:", *(f"  {line}" for line in EXAMPLES.get(name, ())), "", EXIT_CODES + EXIT_EXTRA.get(name, "")]
        parser.epilog = "\n".join([parser.epilog, "", *lines] if parser.epilog else lines)
