"""``python -m fabric export {k8s,nccl,slurm,telemetry} FILE -o DIR``: what the workload side must be told, from the definition."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from fabric.cli.output import refuse_links, write_files
from fabric.errors import Finding, InputError
from fabric.export.acceptance import export_acceptance
from fabric.export.k8s import export_k8s
from fabric.export.k8s.nic_config import nic_configuration
from fabric.export.nccl import export_nccl
from fabric.export.nvlink_facts import read_facts_dir
from fabric.export.slurm_nvlink import NOTE_FILE, export_slurm_from_facts, export_slurm_with_blocks
from fabric.export.telemetry import export_telemetry
from fabric.plan.types import ClusterPlan
from fabric.validate import validate_file

EXPORTERS: dict[str, Callable[[ClusterPlan], dict[str, str]]] = {
    "acceptance": export_acceptance,
    "k8s": export_k8s,
    "nccl": export_nccl,
    "slurm": export_slurm_with_blocks,
    "telemetry": export_telemetry,
}
HELP = (
    "derive workload settings from the definition: Network/GPU Operator objects and Kueue topology, NCCL env per node group, "
    "Slurm topology/nodes/gres, Prometheus alerts, acceptance test pairs"
)


def add_commands(sub: Any) -> None:  # noqa: ANN401 - argparse keeps its subparsers type private
    """Register ``export``."""
    cmd = sub.add_parser("export", help=HELP, description=HELP)
    cmd.add_argument(
        "kind",
        choices=sorted(EXPORTERS),
        help=(
            "acceptance: acceptance/{plan.json,acceptance.sbatch,pins.csv,fabric_check.yml}, bandwidth pairs crossing every fabric cable; "
            "k8s: k8s/*.yaml; nccl: nccl/<group>.env; slurm: slurm/{topology,nodes,gres}.conf; "
            "telemetry: telemetry/{alerts,prometheus}.yml + a Grafana dashboard"
        ),
    )
    cmd.add_argument("file", type=Path, help="the cluster definition")
    cmd.add_argument("-o", "--output", type=Path, default=Path("build"), help="output directory (default: build/<cluster>)")
    cmd.add_argument("--json", action="store_true", help="the files written and their SHA-256, as JSON")
    cmd.add_argument(
        "--nvlink-facts",
        type=Path,
        metavar="DIR",
        help="slurm only: <hostname>.nvidia-smi-q.txt files the nodes reported (cloud_fabric_nvlink_facts_dir); "
        "topology-block.conf gets one block per NVLink domain they name",
    )


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Validate, plan, export and write; returns the exit code (2 on an invalid definition, nothing written)."""
    from fabric.reports.console import print_findings

    validated = validate_file(args.file)
    facts_dir: Path | None = getattr(args, "nvlink_facts", None)
    if facts_dir is not None and args.kind != "slurm":
        msg = f"--nvlink-facts is for export slurm (its block topology), not export {args.kind}. Fix: drop it, or export slurm"
        raise InputError([Finding((), msg, file=str(facts_dir))], str(facts_dir))
    if facts_dir is not None:
        files = export_slurm_from_facts(validated.plan, read_facts_dir(facts_dir), source=str(facts_dir))
    else:
        files = EXPORTERS[args.kind](validated.plan)
    if args.kind == "k8s":  # the NICs' Spectrum-X settings come from the definition, not the plan (fabric.export.k8s.nic_config)
        files = dict(sorted({**files, **nic_configuration(validated.spec)}.items()))
    print_findings(err, validated.warnings)
    target = args.output / validated.plan.name if args.output == Path("build") else args.output
    written = _write(target, files, named=args.output)
    if args.json:
        out.print_json(json.dumps({"cluster": validated.plan.name, "directory": str(target), "files": dict(sorted(written.items()))}))
    elif not files:
        out.print(f"[yellow]nothing to export[/]: {args.kind} has no settings for this cluster", highlight=False)
    else:
        out.print(f"[green]exported[/] {len(files)} {args.kind} files into {target}", highlight=False)
        if args.kind == "acceptance":
            out.print(json.loads(files["acceptance/plan.json"])["summary"], highlight=False)
    if NOTE_FILE in files and not args.json:
        err.print(f"[yellow]note[/]: no topology-block.conf yet, the nodes must report their NVLink domains: {target / NOTE_FILE}", highlight=False)
    return 0


def _write(target: Path, files: dict[str, str], *, named: Path) -> dict[str, str]:
    """Write every file under ``target``, never through a link below ``named`` (``fabric.cli.output``); path → SHA-256.

    Raises:
        InputError: ``target`` or one of its parents exists and is not a directory; a link or a non-file in the way.
    """
    for part in (target, *target.parents):
        if part.exists() and not part.is_dir():
            msg = f"-o: {str(part)!r} exists and is not a directory; name a directory (it is created if missing)"
            raise InputError([Finding((), msg, file=str(target))], str(target))
    refuse_links(target, files, named=named)
    return write_files(target, files, named=named)


COMMANDS = {"export": run}
