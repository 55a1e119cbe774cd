"""``init``: a commented starter definition for a target, written to a file; it validates as written."""

from __future__ import annotations

import argparse
import re
from importlib.resources import files
from pathlib import Path
from typing import Any

from rich.console import Console

from fabric.cli.common import EXIT_OK, check_output_file, usage_error
from fabric.model.base import NAME_RE

STARTERS = ("onprem-roce", "onprem-ib", "aws", "gcp", "azure")
HELP = "write a commented starter cluster definition for a target; it validates as written"
_NAME = re.compile(NAME_RE)
_NAME_LINE = re.compile(r"^name: \S+", re.MULTILINE)


def add_commands(sub: Any) -> None:  # noqa: ANN401 - argparse keeps its subparsers type private
    """Register ``init``."""
    cmd = sub.add_parser("init", help=HELP, description=HELP)
    cmd.add_argument("--target", required=True, choices=STARTERS, help="onprem-roce, onprem-ib (switches rendered here) or a cloud: aws, gcp, azure")
    cmd.add_argument("-o", "--output", type=Path, default=Path("cluster.yaml"), help="the file to write (default: cluster.yaml)")
    cmd.add_argument("--name", help="the cluster's name (a DNS label: letters, digits, '-'); default: the starter's")
    cmd.add_argument("--force", action="store_true", help="overwrite the file if it exists")


def starter(target: str, name: str | None = None) -> str:
    """The starter definition of ``target``, under ``name`` when given.

    Example:
        >>> starter("aws", "train-1").count("name: train-1")
        1
    """
    text = files("fabric").joinpath("starters", f"{target}.yaml").read_text(encoding="utf-8")
    return _NAME_LINE.sub(f"name: {name}", text, count=1) if name else text


def _cmd_init(args: argparse.Namespace, out: Console, err: Console) -> int:  # noqa: ARG001 - one signature for all commands
    target: Path = args.output
    if args.name is not None and not _NAME.match(args.name):
        raise usage_error("--name", f"{args.name[:40]!r} is no cluster name: letters, digits and '-', as a DNS label")
    check_output_file(target)
    if target.exists() and not args.force:
        raise usage_error(str(target), "-o names a file that exists; pick another name or add --force to overwrite it")
    target.write_text(starter(args.target, args.name), encoding="utf-8")
    out.print(f"wrote {target} ({args.target} starter); next: gpufabric validate {target}", highlight=False, markup=False)
    return EXIT_OK


COMMANDS = {"init": _cmd_init}
