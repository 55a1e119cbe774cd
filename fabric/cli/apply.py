"""The apply commands of the CLI: ``diff``, ``push`` (dry run unless ``--commit``), ``rollback`` and ``verify``.

Everything a device sent (diffs, drift, errors, progress, ping output) is shown with its control characters escaped
(``fabric.apply.terminal.visible``, after masking where secrets may appear); JSON output escapes them as ``\\u``.

Exit codes (for pipelines): 0 nothing to change / push succeeded / fabric verified; 3 changes pending (diff, dry run
with ``--detailed-exitcode``); 2 invalid definition or arguments; 1 failed (a device rejected its change, failed its
post-check, could not be reached, drifted from the plan, the fabric is locked, or the change record cannot be
written); 130 interrupted (SIGINT/SIGTERM: devices in flight finished or reverted, the record says which).
"""

from __future__ import annotations

import argparse
import json
import signal
import threading
import time
from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from fabric.apply.checks.verify import DeviceVerdict, verify_fabric
from fabric.apply.nos import Adapter
from fabric.apply.planes import PLANES, parse_planes
from fabric.apply.push import candidates, offline_diff, push_and_record
from fabric.apply.record import recorded_state
from fabric.apply.rollout import RolloutOptions
from fabric.apply.secrets import ANY_NOS, mask_lines
from fabric.apply.session import DeviceAccess
from fabric.apply.shown import shown_result, shown_text
from fabric.apply.terminal import visible
from fabric.apply.transaction import PushResult
from fabric.cli import cabling
from fabric.cli.cabling import add_arguments as add_cabling_arguments
from fabric.cli.common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_PENDING
from fabric.errors import PushError
from fabric.plan.types import ClusterPlan
from fabric.twin.access import access_for, adapters_for
from fabric.twin.lab import load_state
from fabric.twin.traffic import PingResult, leaf_pair_pings
from fabric.validate import validate_file

HELP = {
    "diff": "show what a push would change on every switch (read-only; --offline: against the change record)",
    "push": "push the rendered configs: canary per tier, then batches (dry run unless --commit)",
    "rollback": "put every switch back to what it ran after a recorded change (dry run unless --commit)",
    "verify": "read-only drift check of the live fabric: running vs rendered, BGP, ECMP, MTU; --cabling: neighbours against the cabling plan",
}


def add_commands(sub: Any) -> None:  # noqa: ANN401 - argparse keeps its subparsers type private
    """Register the apply commands."""
    for name, text in HELP.items():
        cmd = sub.add_parser(name, help=text, description=text)
        cmd.add_argument("file", type=Path)
        cmd.add_argument("--state", type=Path, help="state directory (default: .gpufabric/<cluster>)")
        cmd.add_argument("--json", action="store_true", help="machine-readable result on stdout")
        cmd.add_argument(
            "--plane",
            action="append",
            metavar="PLANE",
            help=f"only the switches of this plane: {'|'.join(PLANES)} (repeat or comma list; default all"
            + (", pushed in that order, compute last)" if name in {"push", "rollback"} else ")"),
        )
        if name == "diff":
            cmd.add_argument("--offline", action="store_true", help="diff against the change record, without device access")
            cmd.add_argument(
                "--full", action="store_true", help="--offline: print a never-pushed switch's whole config too (default: its line count only)"
            )
        if name == "rollback":
            cmd.add_argument("--to", required=True, metavar="CHANGE", help="the change id to return to (see audit.jsonl)")
        if name in {"push", "rollback"}:
            cmd.add_argument("--commit", action="store_true", help="apply; without it only the diffs are shown")
            cmd.add_argument("--parallel", type=int, default=4, help="switches per batch after the canaries (default 4)")
            cmd.add_argument("--continue-on-failure", action="store_true", help="keep rolling out after a failed device")
            cmd.add_argument("--post-check-timeout", type=float, default=30.0, help="seconds for BGP and routes to recover (default 30)")
            cmd.add_argument("--post-check-hold", type=float, default=6.0, help="seconds BGP and routes must stay clean (default 6)")
            cmd.add_argument("--deadline", type=float, default=120.0, help="overall seconds per device transaction (default 120)")
            cmd.add_argument(
                "--drain", action="store_true", help="hitless: one switch at a time, traffic moved off it before its change and back after (FRR)"
            )
            cmd.add_argument("--drain-timeout", type=float, default=60.0, help="seconds for the neighbours to move the traffic (default 60)")
        if name == "push":
            cmd.add_argument(
                "--canaries",
                action="store_true",
                help="only each plane's canary (its first switch; compute: the first of each tier), for a pipeline to verify before the rest",
            )
        if name == "verify":
            cmd.add_argument("--wait", type=float, default=0.0, help="keep checking up to this many seconds (converging fabric)")
            cmd.add_argument("--hold", type=int, default=3, help="with --wait: consecutive clean samples needed (default 3)")
            cmd.add_argument("--traffic", action="store_true", help="the twin: DF pings at the compute MTU between a node of every leaf pair")
            add_cabling_arguments(cmd)


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Run one apply command; returns its exit code."""
    planes = parse_planes(args.plane)  # before anything else: a bad --plane is the caller's to fix (exit 2)
    validated = validate_file(args.file)
    plan = validated.plan
    state = (args.state or Path(".gpufabric") / plan.name).resolve()
    started = time.monotonic()

    def progress(device: str, step: str) -> None:
        if not args.json:
            err.print(f"  [{time.monotonic() - started:6.1f}s] {device:<14} {visible(step)}", highlight=False, markup=False)

    adapters = adapters_for(state)  # the twin pushes a SONiC switch's frr.conf through the FRR adapter
    try:
        if args.command == "diff" and args.offline:
            results = offline_diff(plan, state, planes, adapters)
            _report(args, out, "offline", results)
            return _exit(args.command, results)
        if args.command == "verify" and args.cabling:  # fabric.cli.cabling: neighbours against cabling.csv
            access = {} if args.replies is not None else access_for(validated, plan, state, planes)  # recorded: no credentials
            replies = cabling.source(args, plan, state, access, adapters)
            return cabling.report(args, out, cabling.check(plan, replies, planes if args.plane else ("compute",)), replies)
        access = access_for(validated, plan, state, planes)
        if args.command == "verify":
            return _verify(args, out, plan, access, state, planes=planes, adapters=adapters)
        with _stop_on_signals() as stop:
            options = RolloutOptions(
                commit=args.command in {"push", "rollback"} and args.commit,
                parallel=max(1, getattr(args, "parallel", 4)),
                stop_on_failure=not getattr(args, "continue_on_failure", False),
                post_check_s=getattr(args, "post_check_timeout", 30.0),
                post_check_hold_s=getattr(args, "post_check_hold", 6.0),
                deadline_s=getattr(args, "deadline", 120.0),
                drain=getattr(args, "drain", False),
                drain_timeout_s=getattr(args, "drain_timeout", 60.0),
                stop=stop,
                planes=planes,
                canaries_only=getattr(args, "canaries", False),
                adapters=adapters,
            )
            rollback_to = getattr(args, "to", None)
            change, results = push_and_record(
                plan, Path(args.file), state, access, options, progress=progress, rollback_to=rollback_to, record=args.command != "diff"
            )
    except PushError as exc:
        err.print(f"[bold red]{args.command} refused:[/] {escape(visible(shown_text(str(exc))))}", highlight=False)
        return EXIT_FAILED
    _report(args, out, change, results)
    if stop.is_set():
        err.print(
            f"[bold red]{args.command} interrupted[/]: devices in flight finished, the others were not reached (see the record)", highlight=False
        )
        return EXIT_INTERRUPTED
    return _exit(args.command, results)


@contextmanager
def _stop_on_signals() -> Generator[threading.Event]:
    """SIGINT/SIGTERM set the returned event instead of raising: the rollout finishes the devices in flight."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(_signum: int, _frame: object) -> None:
        stop.set()

    saved = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old)


def _exit(command: str, results: list[PushResult]) -> int:
    if any(r.error for r in results):
        return EXIT_FAILED
    return EXIT_PENDING if command == "diff" and any(r.changed for r in results) else EXIT_OK


def _verify(
    args: argparse.Namespace,
    out: Console,
    plan: ClusterPlan,
    access: Mapping[str, DeviceAccess],
    state: Path,
    *,
    planes: Sequence[str],
    adapters: Mapping[str, Adapter],
) -> int:
    previous = recorded_state(state) if (state / "changes").is_dir() else {}
    wanted = candidates(plan, planes, adapters)
    verdicts = verify_fabric(plan, wanted, access, wait_s=args.wait, hold=args.hold, previous=previous, adapters=adapters)
    pings = _pings(plan, state) if args.traffic else []
    failed = [p for p in pings if not p.ok]
    if args.json:
        data: dict[str, Any] = {
            v.device: {"ok": v.ok, "drift": mask_lines(ANY_NOS, v.drift), "problems": [shown_text(p) for p in v.problems]} for v in verdicts
        }
        if args.traffic:
            data["traffic"] = [{"from": p.source, "to": p.target, "address": p.address, "ok": p.ok, "output": p.output} for p in pings]
        out.print_json(json.dumps(data), ensure_ascii=True)  # every control character a \u escape
    else:
        _print_verdicts(out, verdicts)
        for ping in failed:
            failure = f"ping {ping.source} → {ping.target} ({ping.address}) DF {ping.payload} bytes FAILED"
            out.print(f"[red]{escape(failure)}[/]: {escape(visible(ping.output))}", highlight=False)
        if pings:
            out.print(f"traffic: {len(pings) - len(failed)}/{len(pings)} leaf pairs pass DF pings at the compute MTU", highlight=False)
    return EXIT_OK if all(v.ok for v in verdicts) and not failed else EXIT_FAILED


def _pings(plan: ClusterPlan, state: Path) -> list[PingResult]:
    if load_state(state) is None:
        msg = f"verify --traffic pings between the twin's nodes; no twin under {state} (python -m fabric lab up)"
        raise PushError(msg)
    return leaf_pair_pings(plan)


def _print_verdicts(out: Console, verdicts: list[DeviceVerdict]) -> None:
    for v in verdicts:
        out.print(f"[bold]{v.device}[/]: " + ("[green]in sync[/]" if v.ok else "[red]NOT in sync[/]"), highlight=False)
        for line in mask_lines(ANY_NOS, v.drift):
            out.print(f"    drift: {visible(line)}", highlight=False, markup=False)
        for problem in v.problems:
            out.print(f"    {visible(shown_text(problem))}", highlight=False, markup=False)
    bad = [v.device for v in verdicts if not v.ok]
    out.print(f"verify: {len(verdicts) - len(bad)}/{len(verdicts)} switches in sync" + (f"; check {', '.join(bad)}" if bad else ""))


def _report(args: argparse.Namespace, out: Console, change: str, results: list[PushResult]) -> None:
    if args.json:
        data = {
            "change": change,
            "devices": {r.device: shown_result(r) for r in results},
        }
        out.print_json(json.dumps(data), ensure_ascii=True)  # every control character a \u escape
        return
    for r in results:
        status = "[red]failed[/]" if r.error else "[green]committed[/]" if r.committed else "[yellow]changes pending[/]" if r.changed else "unchanged"
        out.print(f"[bold]{r.device}[/]: {status}" + (f" (rolled back: {r.rolled_back})" if r.error and r.changed else ""), highlight=False)
        if r.diff and not r.committed and _summarised(args, r):
            out.print(f"    never pushed (nothing in the change record): {len(r.diff)} lines to send; --full prints them", highlight=False)
        elif r.diff and not r.committed:
            out.print("\n".join(f"    {visible(line)}" for line in mask_lines(ANY_NOS, r.diff)), highlight=False, markup=False)
        if r.error:
            error = shown_text(r.error).split("\n")  # one escaped line per line of the device's reply
            out.print("\n".join(f"    {visible(line)}" for line in error), highlight=False, markup=False)
    committed, changed, failed = sum(r.committed for r in results), sum(r.changed for r in results), sum(bool(r.error) for r in results)
    if getattr(args, "command", None) == "diff":  # a diff commits nothing
        unchanged = len(results) - changed - failed
        out.print(f"diff {change}: {changed} with changes, {unchanged} unchanged, {failed} failed", highlight=False)
        return
    out.print(f"change {change}: {committed} committed, {changed} with changes, {failed} failed", highlight=False)


def _summarised(args: argparse.Namespace, result: PushResult) -> bool:
    """An offline diff of a switch the record has never seen is its whole config (thousands of lines for a fabric):
    a line count unless ``--full`` asks for it."""
    return getattr(args, "command", None) == "diff" and args.offline and not args.full and not result.backup


COMMANDS = dict.fromkeys(HELP, run)
