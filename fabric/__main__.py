"""Command line: ``python -m fabric validate|plan|render|lint|lab|diff|push|rollback|verify|nodes|export|schema``.

Exit codes: 0 success; 2 invalid definition (nothing written); 1 any other failure, and lint findings.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import sys
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from rich.console import Console
from rich.markup import escape

from fabric.errors import FabricError, Finding, InputError, PlanError, RenderError
from fabric.reports.console import print_findings, print_plan, summary_line
from fabric.validate import validate_file

if TYPE_CHECKING:
    from fabric.plan.types import ClusterPlan

EXIT_OK, EXIT_FAILED, EXIT_INVALID = 0, 1, 2


def schema_json() -> str:
    """The committed JSON Schema of the cluster definition."""
    from fabric.model.cluster import ClusterSpec

    schema = ClusterSpec.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "gpufabric cluster definition"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


APPLY_COMMANDS = ("diff", "push", "rollback", "verify")  # registered by fabric.cli.apply, imported only when used


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; ``command`` (the first word given) spares the import of the apply and nodes stages."""
    prog = "gpufabric" if Path(sys.argv[0]).name == "gpufabric" else "python -m fabric"  # the console script or the module
    parser = argparse.ArgumentParser(prog=prog, description="GPU cluster and fabric as code.")
    sub = parser.add_subparsers(dest="command", required=True)
    validate = sub.add_parser("validate", help="check definitions and report every problem")
    validate.add_argument("files", nargs="+", type=Path)
    validate.add_argument("--json", action="store_true", help="machine-readable findings")
    plan = sub.add_parser("plan", help="derive nodes, addresses, topology and cabling")
    plan.add_argument("files", nargs="+", type=Path)
    plan.add_argument("--json", action="store_true", help="the full plan as JSON (one file only)")
    plan.add_argument("-o", "--output", type=Path, help="write the JSON plan to this file")
    render = sub.add_parser("render", help="switch configs per NOS, cabling CSV and the plan, written to a directory")
    render.add_argument("file", type=Path)
    render.add_argument("-o", "--output", type=Path, default=Path("build"), help="output directory (default: build/<cluster>)")
    render.add_argument("--json", action="store_true", help="the files written and their SHA-256, as JSON")
    render.add_argument(
        "--jobs",
        type=_jobs,
        help="worker processes rendering the switch configs (default: GPUFABRIC_JOBS, else the cores available; 1: none)",
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
    lab = sub.add_parser("lab", help="the local twin of an FRR fabric: network namespaces, FRR, sshd (root)")
    lab.add_argument(
        "action",
        choices=("up", "status", "ping", "planes", "down"),
        help="ping: jumbo frames between nodes in different racks; planes: reachability inside OOB and storage, none across planes",
    )
    lab.add_argument("file", type=Path, nargs="?", default=Path("inventories/lab/cluster.yaml"))
    lab.add_argument("--state", type=Path, help="state directory (default: .gpufabric/<cluster>)")
    lab.add_argument("--json", action="store_true", help="the result as JSON (status is always JSON)")
    if command is None or command in APPLY_COMMANDS or command not in COMMANDS:
        from fabric.cli.apply import add_commands

        add_commands(sub)
    if command is None or command == "nodes" or command not in COMMANDS:
        from fabric.cli.nodes import add_command

        add_command(sub)
    if command is None or command == "export" or command not in COMMANDS:
        from fabric.cli.export import add_command as add_export

        add_export(sub)
    schema = sub.add_parser("schema", help="print the JSON Schema of the cluster definition")
    schema.add_argument("-o", "--output", type=Path, help="write it to this file")
    return parser


def _jobs(text: str) -> int:
    """``--jobs``: a whole number of at least 1."""
    if not text.isdecimal() or int(text) < 1:
        msg = f"{text!r} is no number of worker processes: give a whole number of at least 1"
        raise argparse.ArgumentTypeError(msg)
    return int(text)


def _finding_data(findings: Sequence[Finding]) -> list[dict[str, object]]:
    return [{"file": f.file, "line": f.line, "path": f.dotted_path, "severity": f.severity, "message": f.message} for f in findings]


def _cmd_validate(args: argparse.Namespace, out: Console, err: Console) -> int:
    results: list[dict[str, object]] = []
    code = EXIT_OK
    for file in args.files:
        try:
            validated = validate_file(file)
            plan = validated.plan
        except InputError as exc:
            code = EXIT_INVALID
            results.append({"file": str(file), "valid": False, "findings": _finding_data(exc.findings)})
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
        results.append({"file": str(file), "valid": True, "findings": _finding_data(validated.warnings)})
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
        _check_output_file(args.output)
    for file in args.files:
        from fabric.plan.serialize import write_plan_json

        validated = validate_file(file)
        plan = validated.plan
        if args.output:
            with args.output.open("w", encoding="utf-8") as stream:
                write_plan_json(plan, stream)
        if args.json:
            write_plan_json(plan, sys.stdout)
        else:
            print_findings(err, validated.warnings)
            print_plan(out, plan)
    return EXIT_OK


def _status(err: Console, text: str) -> AbstractContextManager[object]:
    """A spinner on a terminal; elsewhere nothing (rich's spinner machinery is not even imported)."""
    return err.status(text) if err.is_terminal else nullcontext()


def _template_cache() -> None:
    """Compiled templates kept between runs in ``$XDG_CACHE_HOME/gpufabric/jinja`` (``~/.cache``); off with GPUFABRIC_NO_CACHE=1."""
    if os.environ.get("GPUFABRIC_NO_CACHE") == "1":
        return
    from fabric.render._jinja import use_bytecode_cache

    base = os.environ.get("XDG_CACHE_HOME")
    try:
        home = Path(base) if base else Path.home() / ".cache"
    except RuntimeError:  # no home directory to be found: compile in memory
        return
    use_bytecode_cache(home / "gpufabric" / "jinja")


def _cmd_render(args: argparse.Namespace, out: Console, err: Console) -> int:
    from fabric.cli.render_workers import SwitchWorkers, write_files
    from fabric.render import render_avd_configs, render_plan_files

    _template_cache()

    with _status(err, f"validating and planning {args.file}"):
        validated = validate_file(args.file)
    plan = validated.plan
    counts = {"compute": len(plan.fabric.switches) if plan.fabric else 0}
    counts |= {net.name: len(net.switches) for net in plan.storage} | ({"oob": len(plan.oob.switches)} if plan.oob else {})
    switches = f"{sum(counts.values())} switches"
    if len(counts) > 1:
        switches += f" ({', '.join(f'{plane} {n}' for plane, n in counts.items())})"
    # The compute switches render in worker processes (fabric.cli.render_workers) while this one renders the rest; nothing is
    # written before every file has rendered.
    with SwitchWorkers(plan, args.jobs, switches=args.format == "nos") as workers:
        with _status(err, f"rendering {switches}"):
            if args.format == "avd":
                files = render_avd_configs(plan)
                if not files:
                    msg = "--format avd writes AVD structured config for EOS switches, and no tier runs eos; use --format nos"
                    raise InputError([Finding(("fabric",), msg, file=str(args.file))], str(args.file))
            else:
                files = render_plan_files(plan)
            count = len(files) + workers.rendered()
        print_findings(err, validated.warnings)
        target = args.output / plan.name if args.output == Path("build") else args.output
        _check_output_dir(target)
        with _status(err, f"writing {count + 1} files into {target}"):
            workers.write(target, digest=args.json)
            written = write_files(target, files, digest=args.json)
            written["plan.json"] = _write_plan(target / "plan.json", plan, digest=args.json)
            written |= workers.written()
    if args.json:
        out.print_json(json.dumps({"cluster": plan.name, "directory": str(target), "files": dict(sorted(written.items()))}))
    else:
        out.print(f"[green]rendered[/] {len(written)} files for {switches} into {target}", highlight=False)
    return EXIT_OK


def _write_plan(path: Path, plan: ClusterPlan, *, digest: bool) -> str:
    """Stream plan.json to ``path``; its SHA-256 when asked for (read back), else ""."""
    from fabric.plan.serialize import write_plan_json

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as stream:
        write_plan_json(plan, stream)
    return hashlib.sha256(path.read_bytes()).hexdigest() if digest else ""


def _usage_error(where: str, problem: str) -> InputError:
    return InputError([Finding((), problem, file=where)], where)


def _check_output_file(path: Path) -> None:
    """Refuse an output file whose directory is missing or that is itself a directory, before anything is computed."""
    if path.is_dir():
        raise _usage_error(str(path), "-o names a directory; give a file name, e.g. plan.json")
    if not path.parent.is_dir():
        raise _usage_error(str(path), f"-o: the directory {str(path.parent)!r} does not exist; create it first")


def _check_output_dir(path: Path) -> None:
    """Refuse an output directory that exists as something else, or whose parts exist as files."""
    for part in (path, *path.parents):
        if part.exists() and not part.is_dir():
            raise _usage_error(str(path), f"-o: {str(part)!r} exists and is not a directory; name a directory (it is created if missing)")


def _cmd_schema(args: argparse.Namespace, out: Console, err: Console) -> int:  # noqa: ARG001 - one signature for all commands
    text = schema_json()
    if args.output:
        _check_output_file(args.output)
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _storage_configs(plan: ClusterPlan, directory: Path | None) -> dict[str, str | None]:
    """Each storage / in-band switch's config: from ``directory`` as render lays it out, else freshly rendered."""
    from fabric.lint import read_configs
    from fabric.lint.storage import storage_config_files
    from fabric.render.storage import render_storage

    files = storage_config_files(plan)
    if directory is None:
        rendered = render_storage(plan)
        return {name: rendered.get(f"switches/{name}/{file}") for name, file in files.items()}
    return read_configs(plan, directory, files)


def _oob_configs(plan: ClusterPlan, directory: Path | None) -> dict[str, str | None]:
    """Each OOB management switch's config: from ``directory`` as render lays it out, else freshly rendered."""
    from fabric.lint import read_configs
    from fabric.lint.oob import oob_config_files
    from fabric.render.oob import render_oob

    files = oob_config_files(plan)
    if directory is None:
        rendered = render_oob(plan)
        return {name: rendered.get(f"switches/{name}/{file}") for name, file in files.items()}
    return read_configs(plan, directory, files)


def _cmd_lint(args: argparse.Namespace, out: Console, err: Console) -> int:
    from fabric.export import export_nccl
    from fabric.export.telemetry.gnmi import gnmic_config
    from fabric.lint import config_paths, lint_configs, read_configs
    from fabric.lint.gnmi import lint_gnmi, read_gnmic
    from fabric.lint.nccl import lint_nccl, read_nccl_files
    from fabric.lint.oob import lint_oob
    from fabric.lint.parse.qos import CONFIG_FILE
    from fabric.lint.storage import lint_storage
    from fabric.render import render_configs

    _template_cache()
    plan = validate_file(args.file).plan
    sources: dict[str, str] = {}
    if args.configs is not None:
        if not args.configs.is_dir():
            raise _usage_error(str(args.configs), "--configs names no directory; give the directory render wrote (it holds switches/)")
        configs = read_configs(plan, args.configs)
        sources = config_paths(plan, args.configs)
    else:
        files = render_configs(plan)
        configs = {s.name: files.get(f"switches/{s.name}/{CONFIG_FILE.get(s.nos, '')}") for s in (plan.fabric.switches if plan.fabric else ())}
    findings = lint_configs(plan, configs, sources)
    storage = _storage_configs(plan, args.configs)
    findings += lint_storage(plan, storage)  # plane separation, MTU per plane, RoCE storage, LAG members (storage / in-band switches)
    oob = _oob_configs(plan, args.configs)
    findings += lint_oob(plan, oob)  # OOB: management ACL, endpoints on the OOB VLAN, relay target
    configs.update(storage)
    nccl = read_nccl_files(args.configs) if args.configs is not None else {k[5:-4]: v for k, v in export_nccl(plan).items()}
    findings += lint_nccl(plan, nccl)  # the NCCL side of the contract: --configs DIR/nccl/<group>.env, as export writes it
    gnmic = read_gnmic(args.configs) or (gnmic_config(plan), "telemetry/gnmic.yaml")
    findings += lint_gnmi(plan, configs, *gnmic)  # the telemetry side: each switch's gNMI server vs DIR/telemetry/gnmic.yaml
    if args.json:
        out.print_json(json.dumps({"clean": not findings, "findings": [dataclasses.asdict(f) for f in findings]}))
        return EXIT_FAILED if findings else EXIT_OK
    for finding in findings:
        err.print(f"[bold red]lint[/]: {finding}", highlight=False, soft_wrap=True)
    checked = sum(1 for text in [*configs.values(), *oob.values()] if text is not None)
    out.print(
        f"{'[green]clean[/]' if not findings else '[red]' + str(len(findings)) + ' finding(s)[/]'}: {checked} switch configs checked", highlight=False
    )
    return EXIT_FAILED if findings else EXIT_OK


def _lab_planes(args: argparse.Namespace, out: Console, plan: ClusterPlan) -> int:
    """Reachability inside the OOB plane and none across to compute, on the twin."""
    from fabric.twin.lab import namespace
    from fabric.twin.oob import oob_checks, oob_devices
    from fabric.twin.storage import storage_checks

    devices = [*oob_devices(plan), *(n.hostname for n in plan.nodes)]
    ns = {d: namespace(plan.name, d) for d in devices}
    checks = oob_checks(plan, ns) + storage_checks(plan, ns)
    if args.json:
        out.print_json(json.dumps([{**dataclasses.asdict(c), "ok": c.ok} for c in checks]))
    for c in checks if not args.json else ():
        verdict = "answers" if c.answered else "no answer"
        colour = "green" if c.ok else "red"
        want = "inside the plane" if c.expect else "across planes: must not answer"
        out.print(f"[{colour}]{'ok' if c.ok else 'FAILED'}[/] {c.source} → {c.target} ({c.address}): {verdict} ({want}); {c.output}", highlight=False)
    if not checks:
        out.print(f"[red]no OOB plane with BMCs[/] in cluster '{plan.name}' (planes.oob.network, a node port on the oob plane)", highlight=False)
    return EXIT_OK if checks and all(c.ok for c in checks) else EXIT_FAILED


def _cmd_lab(args: argparse.Namespace, out: Console, err: Console) -> int:  # noqa: ARG001 - one signature for all commands
    from fabric.twin.lab import lab_down, lab_heal, lab_namespaces, lab_status, lab_up
    from fabric.twin.traffic import cross_rack_ping

    plan = validate_file(args.file).plan
    state_dir = (args.state or Path(".gpufabric") / plan.name).resolve()
    if args.action == "up":
        healed = lab_heal(plan, state_dir)  # a twin already there: restart only what died
        state = healed[0] if healed is not None else lab_up(plan, state_dir)
        ssh = {s.name: f"ssh -p {s.ssh_port} -i {state.client_key} root@127.0.0.1" for s in state.switches}
        restarted = healed[1] if healed is not None else []
        if args.json:
            out.print_json(
                json.dumps(
                    {"cluster": plan.name, "state": str(state_dir), "namespaces": len(state.namespaces), "processes": len(state.pids), "ssh": ssh,
                     "healed": healed is not None, "restarted": restarted}
                )
            )  # fmt: skip
            return EXIT_OK
        if healed is not None:
            out.print(f"[green]twin healed[/]: restarted {', '.join(restarted)}" if restarted else "twin already up: nothing died", highlight=False)
        out.print(f"[green]twin up[/]: {len(state.namespaces)} namespaces, {len(state.pids)} processes, state in {state_dir}", highlight=False)
        for name, command in ssh.items():
            out.print(f"  {name}: {command}", highlight=False)
    elif args.action == "ping":
        ping = cross_rack_ping(plan)
        if args.json:
            out.print_json(json.dumps(dataclasses.asdict(ping)))
            return EXIT_OK if ping.ok else EXIT_FAILED
        colour = "green" if ping.ok else "red"
        out.print(
            f"[{colour}]jumbo ping {'ok' if ping.ok else 'FAILED'}[/]: {ping.source} → {ping.target} ({ping.address}), "
            f"{ping.payload}-byte payload, DF set: {ping.output}",
            highlight=False,
        )
        return EXIT_OK if ping.ok else EXIT_FAILED
    elif args.action == "planes":
        return _lab_planes(args, out, plan)
    elif args.action == "down":
        removed = lab_down(plan.name, state_dir, lab_namespaces(plan))
        if args.json:
            out.print_json(json.dumps({"cluster": plan.name, "removed": removed}))
            return EXIT_OK
        out.print(f"[green]twin down[/]: removed {len(removed)} (processes and namespaces)", highlight=False)
    else:
        out.print_json(json.dumps(lab_status(state_dir)))
    return EXIT_OK


def _cmd_report(args: argparse.Namespace, out: Console, err: Console) -> int:
    from fabric.cli.render_workers import write_files
    from fabric.reports.html import build_report

    _template_cache()
    with _status(err, f"validating and planning {args.file}"):
        validated = validate_file(args.file)
    print_findings(err, validated.warnings)
    target = args.output / validated.plan.name if args.output == Path("build") else args.output
    _check_output_dir(target)
    with _status(err, "rendering, linting and drawing the report"):
        report = build_report(validated.plan, validated.warnings)
    digests = write_files(target, {"report.html": report.html})
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


def _run_apply(args: argparse.Namespace, out: Console, err: Console) -> int:
    from fabric.cli.apply import run

    return run(args, out, err)


def _run_export(args: argparse.Namespace, out: Console, err: Console) -> int:
    from fabric.cli.export import run

    return run(args, out, err)


def _run_nodes(args: argparse.Namespace, out: Console, err: Console) -> int:
    from fabric.cli.nodes import run

    return run(args, out, err)


COMMANDS = {
    "validate": _cmd_validate,
    "plan": _cmd_plan,
    "render": _cmd_render,
    "lint": _cmd_lint,
    "lab": _cmd_lab,
    "report": _cmd_report,
    **dict.fromkeys(APPLY_COMMANDS, _run_apply),
    "nodes": _run_nodes,
    "export": _run_export,
    "schema": _cmd_schema,
}


def console(stream: TextIO) -> Console:
    """Rich on a terminal; off one (pipes, CI logs) plain text: full lines, no wrapping, no colour, no markup styles."""
    if stream.isatty():
        return Console(file=stream)
    return Console(file=stream, width=100_000, soft_wrap=True, no_color=True, color_system=None, highlight=False, emoji=False)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (2 for anything the input must fix, 1 for other failures)."""
    words = list(sys.argv[1:] if argv is None else argv)
    args = _parser(next((w for w in words if not w.startswith("-")), None)).parse_args(words)
    out, err = console(sys.stdout), console(sys.stderr)
    try:
        return COMMANDS[args.command](args, out, err)
    except InputError as exc:
        err.print(f"[bold red]{escape(exc.file or 'definition')}: invalid, {len(exc.errors)} error(s)[/]", highlight=False)
        print_findings(err, exc.findings)
        return EXIT_INVALID
    except (PlanError, RenderError) as exc:
        err.print(f"[bold red]cannot {'plan' if isinstance(exc, PlanError) else 'render'}:[/] {escape(str(exc))}", highlight=False)
        return EXIT_INVALID
    except FabricError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        return EXIT_FAILED
    except OSError as exc:  # the machine, not the definition: a full disk, a permission, a vanished directory
        err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
