"""``python -m fabric accept localise FILE RESULTS``: from the acceptance pairs' measured bandwidth, the cables to blame.

The pairs are planned again from the definition (``fabric.plan.acceptance`` is deterministic, so they are the pairs
``export acceptance`` wrote), each pair's result read from ``RESULTS/<pair>.txt``, the client's ``ib_write_bw
--report_gbits`` output (the average Gb/s column of its result line). Where one round leaves suspects together, the
follow-up pairs are written with ``-o DIR`` (the same four files as ``export acceptance``); their results, put in the
same ``RESULTS`` directory, are read on the next run. Exit 0: no slow pair; 1: slow pairs (the cables named, or the
suspects left); 2: a bad definition, a missing results directory or a result that cannot be read.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from fabric.cli.common import EXIT_FAILED, EXIT_OK, check_output_dir, usage_error
from fabric.cli.output import refuse_links, write_files
from fabric.export.acceptance import acceptance_files
from fabric.plan.acceptance import AcceptancePlan, follow_up, plan_acceptance
from fabric.plan.acceptance_localise import localise
from fabric.validate import validate_file

HELP = "acceptance tests: name the cables that the slow pairs' measurements point at"
# perftest's result line under --report_gbits: #bytes #iterations BW-peak BW-average MsgRate (linux-rdma/perftest
# src/perftest_parameters.h REPORT_FMT), e.g. " 65536      227456         0.00               397.53             0.758234"
_RESULT = re.compile(r"^\s*\d+\s+\d+\s+[\d.]+\s+([\d.]+)\s+[\d.]+\s*$", re.MULTILINE)


def add_commands(sub: Any) -> None:  # noqa: ANN401 - argparse keeps its subparsers type private
    """Register ``accept``."""
    cmd = sub.add_parser("accept", help=HELP, description=HELP)
    verbs = cmd.add_subparsers(dest="verb", required=True, help="localise: name the slow cable from the measured pairs")
    loc = verbs.add_parser("localise", help="read each pair's ib_write_bw result and name the slow cables", description=__doc__)
    loc.add_argument("file", type=Path, help="the cluster definition the pairs were exported from")
    loc.add_argument("results", type=Path, help="the directory with <pair>.txt results (the Slurm job's $OUT)")
    loc.add_argument("--threshold", type=float, default=0.8, help="a pair below this fraction of the best is slow (default 0.8)")
    loc.add_argument("-o", "--output", type=Path, help="write the follow-up pairs here when suspects are left together")
    loc.add_argument("--json", action="store_true", help="the localisation as JSON")


def read_gbps(text: str) -> float | None:
    """The average Gb/s of an ``ib_write_bw --report_gbits`` output (the last result line); None without one.

    Example:
        >>> read_gbps(" #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]\\n 65536 227456 0.00 397.53 0.758234\\n")
        397.53
    """
    found = _RESULT.findall(text)
    return float(found[-1]) if found else None


def _measured(results: Path, names: list[str]) -> tuple[dict[str, float], list[str]]:
    """Pair → Gb/s for the results present; the names of results that exist but hold no result line."""
    measured: dict[str, float] = {}
    unreadable: list[str] = []
    for name in names:
        path = results / f"{name}.txt"
        if not path.is_file():
            continue
        gbps = read_gbps(path.read_text(encoding="utf-8", errors="replace"))
        if gbps is None:
            unreadable.append(str(path))
        else:
            measured[name] = gbps
    return measured, unreadable


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Plan, read, localise, report; the follow-up pairs written where asked."""
    validated = validate_file(args.file)
    acceptance = plan_acceptance(validated.plan)
    if acceptance is None:
        raise usage_error(str(args.file), "this cluster has no on-prem compute fabric: there is nothing to accept")
    if not args.results.is_dir():
        raise usage_error(str(args.results), "no such results directory; give the directory the Slurm job wrote (its $OUT)")
    if args.output is not None:
        check_output_dir(args.output)
    first, unreadable = _measured(args.results, [p.name for p in acceptance.pairs])
    round_one = localise(acceptance.pairs, first, threshold=args.threshold)
    extra = follow_up(validated.plan, acceptance, round_one.suspects, round_one.proven) if round_one.ambiguous else ()
    second, unreadable_extra = _measured(args.results, [p.name for p in extra])
    if unreadable or unreadable_extra:
        raise usage_error(str(args.results), f"no ib_write_bw result line in {', '.join(unreadable + unreadable_extra)}; rerun those pairs")
    final = localise(acceptance.pairs + extra, first | second, threshold=args.threshold)
    report = {
        "measured": len(first) + len(second),
        "slow": list(final.slow),
        "named": list(final.named),
        "ambiguous": {name: list(links) for name, links in final.ambiguous},
        "unexplained": list(final.unexplained),
        "missing": list(final.missing),
        "follow_up": [p.name for p in extra if p.name not in second],
    }
    if args.output is not None and report["follow_up"]:
        pending = tuple(p for p in extra if p.name not in second)
        plan = AcceptancePlan(acceptance.cluster, acceptance.link_layer, acceptance.pinned, round_one.suspects, pending, 0, ())
        files = acceptance_files(plan)
        refuse_links(args.output, files, named=args.output)
        write_files(args.output, files, named=args.output)
    if args.json:
        out.print_json(json.dumps(report))
    else:
        _print(out, err, report, args.output)
    return EXIT_FAILED if final.slow else EXIT_OK


def _print(out: Console, err: Console, report: dict[str, Any], output: Path | None) -> None:
    out.print(f"{report['measured']} pairs measured, {len(report['slow'])} slow", highlight=False)
    for cable in report["named"]:
        out.print(f"[red]cable[/] {escape(cable)}: the only suspect of a slow pair", highlight=False)
    for pair, links in report["ambiguous"].items():
        out.print(f"[yellow]{escape(pair)}[/]: one of {escape(', '.join(links))}", highlight=False)
    for pair in report["unexplained"]:
        out.print(f"[yellow]{escape(pair)}[/]: slow, yet healthy pairs crossed all its cables (a host, an HCA or an unpinned path)", highlight=False)
    if report["missing"]:
        err.print(f"no result for {len(report['missing'])} pairs: {escape(', '.join(report['missing'][:10]))}", highlight=False)
    if report["follow_up"]:
        where = f"written to {output}" if output else "give -o DIR to write them"
        out.print(f"{len(report['follow_up'])} follow-up pairs split the suspects ({where}); run them, then localise again", highlight=False)


COMMANDS = {"accept": run}
