"""``render``, ``report`` and ``lint``: the switch configs and the plan written to a directory, the HTML report, the
contract linter over rendered (or hand-written) configs."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from fabric.cli.common import EXIT_FAILED, EXIT_OK, check_output_dir, status, template_cache, usage_error
from fabric.errors import Finding, InputError
from fabric.reports.console import print_findings, switch_counts
from fabric.validate import collector_paused, validate_file

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from fabric.cli.staging import Staging
    from fabric.lint import LintFinding
    from fabric.lint.phys import PhysReport
    from fabric.plan.types import ClusterPlan


def add_commands(sub: Any) -> None:  # noqa: ANN401 - argparse keeps its subparsers type private
    """Register ``render``, ``report`` and ``lint``."""
    render = sub.add_parser("render", help="switch configs per NOS, cabling CSV and the plan, written to a directory")
    render.add_argument("file", type=Path)
    render.add_argument("-o", "--output", type=Path, default=Path("build"), help="output directory (default: build/<cluster>)")
    render.add_argument("--json", action="store_true", help="the files written and their SHA-256, as JSON")
    render.add_argument(
        "--jobs",
        type=_jobs,
        help="processes rendering the switch configs, this one included (default: GPUFABRIC_JOBS, else the cores available; 1: no fork)",
    )
    render.add_argument(
        "--format",
        choices=("nos", "avd"),
        default="nos",
        help="nos: each switch's own config files (default); avd: Arista AVD structured config per EOS switch",
    )
    report = sub.add_parser("report", help="one self-contained HTML page for review: plan, diagrams, cabling, ports, RoCE, lint")
    report.add_argument("file", type=Path)
    report.add_argument("-o", "--output", type=Path, default=Path("build"), help="output directory (default: build/<cluster>)")
    report.add_argument("--json", action="store_true", help="the page written, its SHA-256 and the lint verdict, as JSON")
    lint = sub.add_parser("lint", help="check switch configs against the RoCE contract (the NIC side) and each other")
    lint.add_argument("file", type=Path)
    lint.add_argument("--configs", type=Path, help="directory laid out as render writes it; default: lint freshly rendered configs")
    lint.add_argument("--json", action="store_true", help="the findings as JSON")


def _jobs(text: str) -> int:
    """``--jobs``: a whole number of at least 1."""
    if not text.isdecimal() or int(text) < 1:
        msg = f"{text!r} is no number of processes: give a whole number of at least 1"
        raise argparse.ArgumentTypeError(msg)
    return int(text)


def _cmd_render(args: argparse.Namespace, out: Console, err: Console) -> int:
    from fabric.cli.output import OutputTree, refuse_links
    from fabric.cli.render_workers import SwitchWorkers
    from fabric.cli.staging import Staging
    from fabric.render import render_avd_configs, render_plan_files

    template_cache()

    with status(err, f"validating and planning {args.file}"):
        validated = validate_file(args.file)
    plan = validated.plan
    switches = switch_counts(plan)
    target = args.output / plan.name if args.output == Path("build") else args.output
    check_output_dir(target)
    # The compute switches render in worker processes (fabric.cli.render_workers), and in this one once it has rendered
    # the rest. Every file is staged as it renders (fabric.cli.staging); nothing enters the output directory before every
    # file has rendered and every path is checked.
    staging = Staging(target, named=args.output, digest=args.json)
    with staging, SwitchWorkers(plan, staging, args.jobs, switches=args.format == "nos") as workers:
        with status(err, f"rendering {switches}"), collector_paused():
            if args.format == "avd":
                files = render_avd_configs(plan)
                if not files:
                    msg = "--format avd writes AVD structured config for EOS switches, and no tier runs eos; use --format nos"
                    raise InputError([Finding(("fabric",), msg, file=str(args.file))], str(args.file))
            else:
                files = render_plan_files(plan)
            own = [*files, "plan.json"]
            for path, text in files.items():
                staging.put(path, text)
            del files
            _stage_plan_json(staging, plan)  # while the workers render: this process would otherwise wait for them
            count = len(own) + workers.rendered()
        print_findings(err, validated.warnings)
        refuse_links(target, [*own, *workers.paths()], named=args.output)  # nothing written through a link
        with status(err, f"writing {count} files into {target}"), OutputTree(target, named=args.output) as tree:
            workers.write(target, named=args.output)
            written = staging.commit(tree, staging.entries)
            written |= workers.written()
    if args.json:
        out.print_json(json.dumps({"cluster": plan.name, "directory": str(target), "files": dict(sorted(written.items()))}))
    else:
        out.print(f"[green]rendered[/] {len(written)} files for {switches} into {target}", highlight=False)
    return EXIT_OK


def _stage_plan_json(staging: Staging, plan: ClusterPlan) -> None:
    """``plan.json`` encoded now, straight into its staged file (moved in with the rest once every switch has rendered)."""
    from fabric.plan.serialize import write_plan_json

    with staging.open("plan.json") as raw:
        write_plan_json(plan, raw)


def _family_configs(plan: ClusterPlan, directory: Path | None, family: str) -> dict[str, str | None]:
    """Each storage / in-band (``family`` "storage") or OOB management ("oob") switch's config: from ``directory`` as
    render lays it out, else freshly rendered."""
    from fabric.lint import read_configs
    from fabric.lint.oob import oob_config_files
    from fabric.lint.storage import storage_config_files
    from fabric.render.oob import render_oob
    from fabric.render.storage import render_storage

    files = storage_config_files(plan) if family == "storage" else oob_config_files(plan)
    if directory is None:
        rendered = render_storage(plan) if family == "storage" else render_oob(plan)
        return {name: rendered.get(f"switches/{name}/{file}") for name, file in files.items()}
    return read_configs(plan, directory, files)


def _cabling(plan: ClusterPlan, directory: Path | None) -> str:
    """``DIR/cabling.csv`` as render wrote it (hand edits included); the plan's own when no directory or no such file."""
    from fabric.render.cabling import render_cabling

    path = directory / "cabling.csv" if directory is not None else None
    if path is not None and path.is_file():
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise usage_error(str(path), f"cannot read the cabling list ({exc}); it must be the UTF-8 CSV render writes") from exc
    return render_cabling(plan)


def _cmd_lint(args: argparse.Namespace, out: Console, err: Console) -> int:
    from fabric.export import export_nccl
    from fabric.export.telemetry.gnmi import gnmic_config
    from fabric.lint import config_paths, lint_configs, read_configs
    from fabric.lint.gnmi import lint_gnmi, lint_gnmic_processors, read_gnmic
    from fabric.lint.nccl import lint_nccl, read_nccl_files
    from fabric.lint.oob import lint_oob
    from fabric.lint.parse.qos import CONFIG_FILE
    from fabric.lint.phys import lint_phys
    from fabric.lint.planes import lint_planes
    from fabric.lint.storage import lint_storage
    from fabric.render import render_configs

    template_cache()
    validated = validate_file(args.file)
    plan = validated.plan
    if not args.json:  # the definition's warnings (e.g. a profile's placeholder port names the NCCL check takes on trust)
        print_findings(err, validated.warnings)
    sources: dict[str, str] = {}
    if args.configs is not None:
        if not args.configs.is_dir():
            raise usage_error(str(args.configs), "--configs names no directory; give the directory render wrote (it holds switches/)")
        configs = read_configs(plan, args.configs)
        sources = config_paths(plan, args.configs)
    else:
        files = render_configs(plan)
        configs = {s.name: files.get(f"switches/{s.name}/{CONFIG_FILE.get(s.nos, '')}") for s in (plan.fabric.switches if plan.fabric else ())}
    findings = lint_configs(plan, configs, sources)
    storage = _family_configs(plan, args.configs, "storage")
    findings += lint_storage(plan, storage)  # plane separation, MTU per plane, RoCE storage, LAG members (storage / in-band switches)
    oob = _family_configs(plan, args.configs, "oob")
    findings += lint_oob(plan, oob)  # OOB: management ACL, endpoints on the OOB VLAN, relay target
    configs.update(storage)
    nccl = read_nccl_files(args.configs) if args.configs is not None else {k[5:-4]: v for k, v in export_nccl(plan).items()}
    findings += lint_nccl(plan, nccl)  # the NCCL side of the contract: --configs DIR/nccl/<group>.env, as export writes it
    gnmic = read_gnmic(args.configs) or (gnmic_config(plan), "telemetry/gnmic.yaml")
    findings += lint_gnmi(plan, configs, *gnmic)  # the telemetry side: each switch's gNMI server vs DIR/telemetry/gnmic.yaml
    findings += lint_gnmic_processors(*gnmic)  # and its processors that keep SONiC's strings out of the labels
    cabling = _cabling(plan, args.configs)
    phys = lint_phys(plan, {**configs, **oob}, cabling)  # both ends of every cable, breakout, FEC
    findings += phys.findings
    findings += lint_planes(plan, configs, cabling)  # multi-plane: no cable or config line joins two compute planes
    unproven = _unproven(plan, {**configs, **oob})
    if args.json:
        return _lint_json(out, findings, phys, unproven, validated.warnings)
    for finding in findings:
        err.print(f"[bold red]lint[/]: {finding}", highlight=False, soft_wrap=True)
    for device, number, command in unproven:
        note = f"{device} line {number}: {escape(command)} (no vendor text shows this form; docs/switch-references.md)"
        err.print(f"[yellow]unproven[/]: {note}", highlight=False)
    checked = sum(1 for text in [*configs.values(), *oob.values()] if text is not None)
    out.print(
        f"{'[green]clean[/]' if not findings else '[red]' + str(len(findings)) + ' finding(s)[/]'}: {checked} switch configs checked; "
        f"physical layer: {phys.ports} ports on {phys.cables} cables"
        + (f" ({phys.unconfirmed} at a speed the catalog cannot confirm for its breakout mode)" if phys.unconfirmed else ""),
        highlight=False,
    )
    return EXIT_FAILED if findings else EXIT_OK


def _lint_json(
    out: Console, findings: Sequence[LintFinding], phys: PhysReport, unproven: list[tuple[str, int, str]], warnings: Sequence[Finding]
) -> int:
    """``lint --json``: the findings, the physical layer's counts, the unproven notes and the definition's warnings."""
    data = {
        "clean": not findings,
        "findings": [dataclasses.asdict(f) for f in findings],
        "physical": {"ports": phys.ports, "cables": phys.cables, "unconfirmed": phys.unconfirmed},
        "unproven": [{"device": d, "line": n, "command": c} for d, n, c in unproven],
        "warnings": [dataclasses.asdict(f) for f in warnings],
    }
    out.print_json(json.dumps(data))
    return EXIT_FAILED if findings else EXIT_OK


def _unproven(plan: ClusterPlan, configs: Mapping[str, str | None]) -> list[tuple[str, int, str]]:
    """Every rendered line only an UNPROVEN command form matches (fabric/lint/forms), per device: notes, not findings."""
    from fabric.lint.forms import unproven_commands
    from fabric.lint.phys import switch_inventory

    nos = {name: kind for name, (_, kind) in switch_inventory(plan).items()}
    return [(name, n, command) for name, text in sorted(configs.items()) if text for n, command in unproven_commands(nos.get(name, ""), text)]


def _cmd_report(args: argparse.Namespace, out: Console, err: Console) -> int:
    from fabric.cli.output import refuse_links, write_files
    from fabric.reports.html import build_report

    template_cache()
    with status(err, f"validating and planning {args.file}"):
        validated = validate_file(args.file)
    print_findings(err, validated.warnings)
    target = args.output / validated.plan.name if args.output == Path("build") else args.output
    check_output_dir(target)
    with status(err, "rendering, linting and drawing the report"):
        report = build_report(validated.plan, validated.warnings)
    refuse_links(target, ["report.html"], named=args.output)
    digests = write_files(target, {"report.html": report.html}, named=args.output)
    if args.json:
        out.print_json(
            json.dumps(
                {
                    "cluster": validated.plan.name,
                    "report": str(target / "report.html"),
                    "sha256": digests["report.html"],
                    "lint_clean": report.lint_clean,
                }
            )
        )
    else:
        out.print(f"[green]report[/] {target / 'report.html'}: lint {'clean' if report.lint_clean else 'FINDINGS'}", highlight=False)
    return EXIT_OK


COMMANDS = {"render": _cmd_render, "report": _cmd_report, "lint": _cmd_lint}
