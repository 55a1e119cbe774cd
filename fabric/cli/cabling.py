"""``verify --cabling``: the real neighbours read back against the plan's cables (``cabling.csv``), diagnosed per rail.

Replies come from ``--from DIR`` (recorded, one file per device: ``fabric.apply.cabling.collect``), else from the twin
when the state directory holds one (its lldpd, ``fabric.twin.lldp``), else from every switch live over its management
session. Exit codes: 0 every checked cable is where the plan puts it, 1 a cable differs (or nothing could be read
live), 2 a reply or an argument is bad (``InputError``, naming the device and the file).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from fabric.apply.cabling.collect import Replies, read_dir, read_live
from fabric.apply.cabling.compare import Report, compare, plan_names, planned_cables
from fabric.apply.nos import Adapter
from fabric.apply.planes import select_devices
from fabric.apply.session import DeviceAccess
from fabric.apply.terminal import visible
from fabric.cli.common import EXIT_FAILED, EXIT_OK
from fabric.errors import LabError
from fabric.plan.types import ClusterPlan
from fabric.twin.lab import load_state
from fabric.twin.lldp import twin_replies


def add_arguments(cmd: argparse.ArgumentParser) -> None:
    """The cabling read-back's options on ``verify``."""
    cmd.add_argument("--cabling", action="store_true", help="read every device's LLDP neighbours and compare them with the plan's cabling (per rail)")
    cmd.add_argument(
        "--from",
        dest="replies",
        type=Path,
        metavar="DIR",
        help="--cabling: recorded replies, one file per device (<device>.<form>), instead of the devices",
    )


def source(args: argparse.Namespace, plan: ClusterPlan, state: Path, access: Mapping[str, DeviceAccess], adapters: Mapping[str, Adapter]) -> Replies:
    """The replies: ``--from DIR``, else the twin's lldpd, else each switch live."""
    if args.replies is not None:
        return read_dir(args.replies)
    twin = load_state(state)
    if twin is not None:
        if not any(p.name.endswith("/lldpd") for p in twin.processes):
            msg = f"the twin under {state} runs no lldpd (it was built before the twin had LLDP); run 'lab down' and 'lab up' again"
            raise LabError(msg)
        return twin_replies(Path(twin.directory), twin.processes)
    nos = {d.name: d.nos for d in select_devices(plan)} | ({s.name: s.nos for s in plan.fabric.switches} if plan.fabric else {})
    return read_live(access, nos, adapters)


def check(plan: ClusterPlan, replies: Replies, planes: Sequence[str]) -> Report:
    """The diagnosis of ``replies`` against the cables of ``planes``."""
    return compare(planned_cables(plan, planes), replies.seen, replies.replied, plan_names(plan), every=planned_cables(plan))


def report(args: argparse.Namespace, out: Console, result: Report, replies: Replies) -> int:
    """Print the diagnosis (text or ``--json``); the exit code."""
    if args.json:
        data = {
            "ok": result.ok,
            "planned": result.planned,
            "checked": result.checked,
            "matched": result.matched,
            "faults": [{"kind": f.kind, "device": f.device, "problem": f.text, "fix": f.fix} for f in result.faults],
            "unread": {d: replies.unread.get(d, "no reply") for d in result.unread},
        }
        out.print_json(json.dumps(data), ensure_ascii=True)  # every control character a \u escape
    else:
        for fault in result.faults:
            out.print(f"[red]{escape(fault.kind)}[/]: {escape(visible(fault.text))}", highlight=False)
        if result.faults:
            out.print("fix list:", highlight=False)
            for n, fault in enumerate(result.faults, start=1):
                out.print(f"  {n}. {visible(fault.fix)}", highlight=False, markup=False)
        for device in result.unread:
            out.print(f"not read: {visible(device)} ({visible(replies.unread.get(device, 'no reply'))})", highlight=False, markup=False)
        verdict = "as planned" if result.ok else f"{len(result.faults)} fault(s)"
        out.print(f"cabling: {result.matched}/{result.checked} checked cables as planned ({result.planned} planned); {verdict}", highlight=False)
    if not result.checked and not args.replies:
        return EXIT_FAILED  # live, and nothing could be read: not verified
    return EXIT_OK if result.ok else EXIT_FAILED
