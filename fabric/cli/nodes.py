"""``python -m fabric nodes FILE``: prepare the bare-metal nodes of a definition with ``playbooks/site.yml``.

The definition is validated first (exit 2 with the report, nothing run; also for a cloud definition or a missing
``-i`` inventory). Then ansible-runner runs the playbook with the definition as inventory; every task and host result
is shown as it happens (stderr), and a per-host table closes the run (stdout). Exit 0 when every selected host
succeeded, 1 when any failed, was unreachable or was never run; 2 when the playbook is found neither in a checkout
nor in the installed package.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

from fabric.cli.common import EXIT_FAILED, EXIT_INVALID, EXIT_OK
from fabric.errors import Finding, InputError, ProjectMissingError
from fabric.model.loader import parse_yaml
from fabric.nodes.runner import NodesRun, RunOptions, run_playbook
from fabric.validate import validate_file

PLAYBOOKS = {"site": "playbooks/site.yml", "check": "playbooks/check.yml"}
HELP = "prepare bare-metal nodes: playbooks/site.yml through ansible-runner, with the definition as inventory"


def add_commands(sub: Any) -> None:  # noqa: ANN401 - argparse keeps its subparsers type private
    """Register ``nodes``."""
    cmd = sub.add_parser("nodes", help=HELP, description=HELP)
    cmd.add_argument("file", type=Path, help="the cluster definition (target: onprem)")
    cmd.add_argument(
        "--playbook", choices=sorted(PLAYBOOKS), default="site", help="site: prepare the nodes (default); check: read-only fabric checks"
    )
    cmd.add_argument("--check", action="store_true", help="dry run: report what would change, change nothing")
    cmd.add_argument("--diff", action="store_true", help="show file and package differences")
    cmd.add_argument("--limit", help="hosts or groups, as ansible-playbook --limit (e.g. gpu_nodes[0:7], stor01)")
    cmd.add_argument("--tags", help="only these tags (e.g. nic_qos_verify,network_planes_verify)")
    cmd.add_argument("--skip-tags", help="skip these tags")
    cmd.add_argument("-i", "--inventory", action="append", type=Path, default=[], help="extra inventory layered on the definition")
    extra = "extra variable, VALUE read as YAML (repeatable): -e fabric_check_ping_planes=[storage]"
    cmd.add_argument("-e", "--extra-vars", action="append", type=_key_value, default=[], metavar="KEY=VALUE", help=extra)
    cmd.add_argument("--json", action="store_true", help="per-host results as JSON on stdout")


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Validate, run the playbook, report; returns the exit code."""
    validated = validate_file(args.file)  # an invalid definition raises InputError: exit 2 before anything runs
    if validated.spec.target != "onprem":
        message = (
            f"nodes prepares bare-metal nodes, and this cluster's target is {validated.spec.target}. "
            "Fix: run ansible-playbook -i <the stack's ansible_inventory output, saved as .yml> playbooks/site.yml"
        )
        _, source, _ = parse_yaml(Path(validated.file).read_text(encoding="utf-8"), validated.file)
        raise InputError([source.locate(Finding(("target",), message, file=validated.file))], validated.file)
    missing = [str(p) for p in args.inventory if not p.exists()]
    if missing:
        err.print(f"[bold red]nodes refused:[/] no such inventory: {', '.join(missing)}", highlight=False)
        return EXIT_INVALID
    options = RunOptions(
        check=args.check,
        diff=args.diff,
        limit=args.limit,
        tags=args.tags,
        skip_tags=args.skip_tags,
        extra_inventories=tuple(args.inventory),
        extravars=dict(args.extra_vars),
    )
    started = time.monotonic()

    def progress(host: str, task: str, outcome: str) -> None:
        if args.json:
            return
        stamp = f"[{time.monotonic() - started:7.1f}s]"
        if outcome == "start":
            err.print(f"{stamp} [bold]{task}[/]", highlight=False)
        elif outcome in ("changed", "failed", "unreachable"):
            colour = {"changed": "yellow", "failed": "red", "unreachable": "red"}[outcome]
            err.print(f"{stamp}   {host:<16} [{colour}]{outcome}[/]", highlight=False)

    try:
        result = run_playbook(args.file, options, progress, playbook=PLAYBOOKS[args.playbook])
    except ProjectMissingError as missing_project:
        err.print(f"[bold red]nodes refused:[/] {missing_project}", highlight=False)
        return EXIT_INVALID
    if args.json:
        out.print_json(json.dumps(_as_data(result)))
    else:
        print_hosts(out, result)
    return EXIT_OK if result.ok else EXIT_FAILED


def print_hosts(out: Console, result: NodesRun) -> None:
    """The per-host table and a one-line verdict."""
    table = Table(title="nodes", title_justify="left")
    for column in ("host", "ok", "changed", "failed", "unreachable", "skipped", "first failure"):
        table.add_column(column, justify="right" if column not in ("host", "first failure") else "left")
    for host in result.hosts:
        first = f"{host.failures[0][0]}: {host.failures[0][1]}" if host.failures else "" if host.ran else "not run"
        c = host.counts
        style = None if host.ok else "red"
        table.add_row(host.host, *(str(c[k]) for k in ("ok", "changed", "failed", "unreachable", "skipped")), first[:160], style=style)
    out.print(table)
    failed = [h.host for h in result.hosts if h.ran and not h.ok]
    not_run = [h.host for h in result.hosts if not h.ran]
    succeeded = len(result.hosts) - len(failed) - len(not_run)
    verdict = f"{succeeded}/{len(result.hosts)} hosts succeeded"
    verdict += f"; failed: {', '.join(failed)}" if failed else ""
    verdict += f"; not run (the play stopped after a batch failed beyond max_fail_percentage): {', '.join(not_run)}" if not_run else ""
    if result.rc != 0 and not failed:
        verdict += f"; ansible-playbook exited {result.rc}"
    out.print(verdict, highlight=False)
    if result.rc != 0 and not failed:
        out.print("\n".join(f"    {line}" for line in result.output_tail), highlight=False, markup=False)


def _as_data(result: NodesRun) -> dict[str, object]:
    return {
        "rc": result.rc,
        "ok": result.ok,
        "output_tail": list(result.output_tail) if result.rc != 0 else [],
        "hosts": {h.host: {**h.counts, "ran": h.ran, "failures": [{"task": t, "msg": m} for t, m in h.failures]} for h in result.hosts},
    }


def _key_value(item: str) -> tuple[str, object]:
    """``KEY=VALUE`` with VALUE read as YAML: ``n=5`` is a number, ``planes=[storage]`` a list, ``x=on`` a string."""
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--extra-vars {item!r}: expected KEY=VALUE")
    try:
        parsed: object = yaml.safe_load(value) if value else ""
    except yaml.YAMLError:
        raise argparse.ArgumentTypeError(f"--extra-vars {item!r}: VALUE is not valid YAML") from None
    return key, parsed


COMMANDS = {"nodes": run}
