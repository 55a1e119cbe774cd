"""``validate``, ``plan`` and ``schema``: a definition checked, its plan shown or written, the JSON Schema of the input."""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from fabric.cli.common import EXIT_INVALID, EXIT_OK, check_output_file, finding_data
from fabric.cli.output import OutputTree, write_files
from fabric.errors import InputError, PlanError
from fabric.reports.console import print_findings, print_plan, summary_line
from fabric.validate import validate_file


def add_commands(sub: Any) -> None:  # noqa: ANN401 - argparse keeps its subparsers type private
    """Register ``validate`` and ``plan``."""
    validate = sub.add_parser("validate", help="check definitions and report every problem")
    validate.add_argument("files", nargs="+", type=Path)
    validate.add_argument("--json", action="store_true", help="machine-readable findings")
    plan = sub.add_parser("plan", help="derive nodes, addresses, topology and cabling")
    plan.add_argument("files", nargs="+", type=Path)
    plan.add_argument("--json", action="store_true", help="the full plan as JSON (one file only)")
    plan.add_argument("-o", "--output", type=Path, help="write the JSON plan to this file")


def add_schema(sub: Any) -> None:  # noqa: ANN401 - argparse keeps its subparsers type private
    """Register ``schema`` (last in the help, as before)."""
    schema = sub.add_parser("schema", help="print the JSON Schema of the cluster definition")
    schema.add_argument("-o", "--output", type=Path, help="write it to this file")


def schema_json() -> str:
    """The committed JSON Schema of the cluster definition."""
    from fabric.model.cluster import ClusterSpec

    schema = ClusterSpec.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "gpufabric cluster definition"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def _cmd_validate(args: argparse.Namespace, out: Console, err: Console) -> int:
    results: list[dict[str, object]] = []
    code = EXIT_OK
    for file in args.files:
        try:
            validated = validate_file(file)
            plan = validated.plan
        except InputError as exc:
            code = EXIT_INVALID
            results.append({"file": str(file), "valid": False, "findings": finding_data(exc.findings)})
            if not args.json:
                err.print(f"[bold red]{escape(str(file))}: invalid, {len(exc.errors)} error(s)[/]", highlight=False)
                print_findings(err, exc.findings)
            continue
        except PlanError as exc:
            code = EXIT_INVALID
            results.append({"file": str(file), "valid": False, "findings": [{"file": str(file), "severity": "error", "message": str(exc)}]})
            if not args.json:
                err.print(f"[bold red]{escape(str(file))}: cannot be planned:[/] {escape(str(exc))}", highlight=False)
            continue
        results.append({"file": str(file), "valid": True, "findings": finding_data(validated.warnings)})
        if not args.json:
            out.print(f"[green]valid[/] {file}: {summary_line(plan)}", highlight=False)
            print_findings(err, validated.warnings)
    if args.json:
        out.print_json(json.dumps({"valid": code == EXIT_OK, "files": results}))
    return code


def _cmd_plan(args: argparse.Namespace, out: Console, err: Console) -> int:
    if (args.json or args.output) and len(args.files) != 1:
        err.print("--json and --output take exactly one definition")
        return EXIT_INVALID
    if args.output:
        check_output_file(args.output)
    for file in args.files:
        from fabric.plan.serialize import write_plan_json

        validated = validate_file(file)
        plan = validated.plan
        if args.output:
            with OutputTree(args.output.parent) as tree, tree.open(args.output.name) as raw:  # a new file, renamed over the name
                stream = io.TextIOWrapper(raw, encoding="utf-8")
                write_plan_json(plan, stream)
                stream.detach()
        if args.json:
            write_plan_json(plan, sys.stdout)
        else:
            print_findings(err, validated.warnings)
            print_plan(out, plan)
    return EXIT_OK


def _cmd_schema(args: argparse.Namespace, out: Console, err: Console) -> int:  # noqa: ARG001 - one signature for all commands
    text = schema_json()
    if args.output:
        check_output_file(args.output)
        write_files(args.output.parent, {args.output.name: text}, digest=False)  # a new file, renamed over the name
    else:
        sys.stdout.write(text)
    return EXIT_OK


COMMANDS = {"validate": _cmd_validate, "plan": _cmd_plan, "schema": _cmd_schema}
