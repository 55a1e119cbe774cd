"""The apply commands of the CLI: ``diff`` and ``push`` (dry run unless ``--commit``).

Exit codes (for pipelines): 0 nothing to change / push succeeded; 3 changes pending (diff); 2 invalid definition;
1 failed (a device rejected its change, failed its post-check, could not be reached, or the fabric is locked).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from fabric.apply.frr import PushResult
from fabric.apply.lab import load_state
from fabric.apply.record import append_audit, new_change_id, push_lock, record_device
from fabric.apply.rollout import RolloutOptions, device_access, lab_access, push_fabric
from fabric.errors import PushError
from fabric.plan import plan_cluster
from fabric.plan.types import ClusterPlan
from fabric.render import render_configs
from fabric.validate import validate_file

EXIT_OK, EXIT_FAILED, EXIT_PENDING = 0, 1, 3


def add_commands(sub: Any) -> None:  # noqa: ANN401 - argparse keeps its subparsers type private
    """Register ``diff`` and ``push``."""
    for name, text in (
        ("diff", "show what a push would change on every switch (read-only)"),
        ("push", "push the rendered configs (dry run unless --commit)"),
    ):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("file", type=Path)
        cmd.add_argument("--state", type=Path, help="state directory (default: .gpufabric/<cluster>)")
        cmd.add_argument("--json", action="store_true", help="machine-readable result")
        if name == "push":
            cmd.add_argument("--commit", action="store_true", help="apply; without it the push only shows diffs")
            cmd.add_argument("--parallel", type=int, default=4, help="switches per batch after the canaries (default 4)")
            cmd.add_argument("--continue-on-failure", action="store_true", help="keep rolling out after a failed device")


def _configs(plan: ClusterPlan) -> dict[str, str]:
    files = render_configs(plan)
    return {s.name: files[f"switches/{s.name}/frr.conf"] for s in plan.fabric.switches if s.nos == "frr"} if plan.fabric else {}


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Run ``diff`` or ``push``."""
    validated = validate_file(args.file)
    plan = plan_cluster(validated.spec)
    state = (args.state or Path(".gpufabric") / plan.name).resolve()
    lab = load_state(state)
    access = lab_access(lab) if lab is not None else device_access(plan, validated.spec.switches, Path(args.file).parent)
    commit = args.command == "push" and args.commit
    options = RolloutOptions(
        commit=commit, parallel=max(1, getattr(args, "parallel", 4)), stop_on_failure=not getattr(args, "continue_on_failure", False)
    )

    def progress(device: str, step: str) -> None:
        if not args.json:
            err.print(f"  {device:<12} {step}", highlight=False)

    try:
        with push_lock(state):
            change = new_change_id()
            candidates = _configs(plan)
            results = push_fabric(plan, candidates, access, options, progress)
            if args.command == "push":
                for result in results:
                    record_device(state, change, result, candidates[result.device] if result.committed else None)
                append_audit(state, change, Path(args.file), results, commit=commit)
    except PushError as exc:
        err.print(f"[bold red]push refused:[/] {exc}", highlight=False)
        return EXIT_FAILED
    _report(args, out, change, results)
    if any(r.error for r in results):
        return EXIT_FAILED
    return EXIT_PENDING if args.command == "diff" and any(r.changed for r in results) else EXIT_OK


def _report(args: argparse.Namespace, out: Console, change: str, results: list[PushResult]) -> None:
    if args.json:
        data = {
            "change": change,
            "devices": {
                r.device: {"changed": r.changed, "committed": r.committed, "rolled_back": r.rolled_back, "error": r.error, "diff": r.diff}
                for r in results
            },
        }
        out.print_json(json.dumps(data))
        return
    for r in results:
        status = "[red]failed[/]" if r.error else "[green]committed[/]" if r.committed else "[yellow]changes pending[/]" if r.changed else "unchanged"
        out.print(f"[bold]{r.device}[/]: {status}" + (f" (rolled back: {r.rolled_back})" if r.error and r.changed else ""), highlight=False)
        if r.diff and not r.committed:
            out.print("\n".join(f"    {line}" for line in r.diff), highlight=False, markup=False)
        if r.error:
            out.print(f"    {r.error}", highlight=False, markup=False)
    committed, changed, failed = sum(r.committed for r in results), sum(r.changed for r in results), sum(bool(r.error) for r in results)
    out.print(f"change {change}: {committed} committed, {changed} with changes, {failed} failed", highlight=False)
