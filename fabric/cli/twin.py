"""``lab``: the local twin of a fabric (``fabric.twin``): up (or heal), status, a jumbo ping, the planes kept apart, down."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from fabric.cli.common import EXIT_FAILED, EXIT_OK
from fabric.validate import validate_file

if TYPE_CHECKING:
    from fabric.plan.types import ClusterPlan


def add_commands(sub: Any) -> None:  # noqa: ANN401 - argparse keeps its subparsers type private
    """Register ``lab``."""
    lab = sub.add_parser("lab", help="the local twin of an FRR fabric: network namespaces, FRR, sshd (root)")
    lab.add_argument(
        "action",
        choices=("up", "status", "ping", "planes", "down"),
        help=(
            "up: build the twin (namespaces, FRR, sshd) and push the rendered configs; status: what runs, as JSON; "
            "ping: jumbo frames between nodes in different racks; planes: reachability inside OOB and storage, none across planes; "
            "down: tear it all down"
        ),
    )
    lab.add_argument(
        "file",
        type=Path,
        nargs="?",
        default=Path("inventories/lab/cluster.yaml"),
        help="the cluster definition (default: inventories/lab/cluster.yaml)",
    )
    lab.add_argument("--state", type=Path, help="state directory (default: .gpufabric/<cluster>)")
    lab.add_argument("--json", action="store_true", help="the result as JSON (status is always JSON)")


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


def _cmd_lab(args: argparse.Namespace, out: Console, err: Console) -> int:
    from fabric.twin.lab import lab_down, lab_heal, lab_namespaces, lab_status, lab_up
    from fabric.twin.rehearse import SCOPE
    from fabric.twin.traffic import cross_rack_ping

    plan = validate_file(args.file).plan
    state_dir = (args.state or Path(".gpufabric") / plan.name).absolute()  # not resolved: a symlink given is refused
    if args.action == "up":
        healed = lab_heal(plan, state_dir)  # a twin already there: restart only what died
        state = healed[0] if healed is not None else lab_up(plan, state_dir)
        ssh = {s.name: f"ssh -p {s.ssh_port} -i {state.client_key} root@127.0.0.1" for s in state.switches}
        restarted = healed[1] if healed is not None else []
        rehearsed = sorted(s.name for s in state.switches if s.rehearses)  # SONiC switches: their routing config in FRR
        if args.json:
            out.print_json(
                json.dumps(
                    {"cluster": plan.name, "state": str(state_dir), "namespaces": len(state.namespaces), "processes": len(state.pids), "ssh": ssh,
                     "healed": healed is not None, "restarted": restarted, **({"rehearsal": SCOPE} if rehearsed else {})}
                )
            )  # fmt: skip
            return EXIT_OK
        if healed is not None:
            out.print(f"[green]twin healed[/]: restarted {', '.join(restarted)}" if restarted else "twin already up: nothing died", highlight=False)
        out.print(f"[green]twin up[/]: {len(state.namespaces)} namespaces, {len(state.pids)} processes, state in {state_dir}", highlight=False)
        for name, command in ssh.items():
            out.print(f"  {name}: {command}", highlight=False)
        if rehearsed:
            out.print(f"[yellow]{escape(SCOPE)}[/] ({', '.join(rehearsed)})", highlight=False)
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
        down = lab_down(plan.name, state_dir, lab_namespaces(plan))
        if args.json:
            out.print_json(json.dumps({"cluster": plan.name, "removed": down.removed, "left_alone": down.left}))
            return EXIT_OK
        out.print(f"[green]twin down[/]: removed {len(down.removed)} (processes and namespaces)", highlight=False)
        for line in down.left:  # never the twin's to stop: named so a person can look
            err.print(f"[yellow]{escape(line)}[/]", highlight=False)
    else:
        out.print_json(json.dumps(lab_status(state_dir)))
    return EXIT_OK


COMMANDS = {"lab": _cmd_lab}
