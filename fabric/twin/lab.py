"""The local twin of an on-prem fabric: one network namespace per switch running FRR, one per node, veth links exactly as
the cabling plan says, and one sshd per switch on 127.0.0.1 (its own port) through which netmiko reaches that switch's
vtysh, past the switch's management ACL (``fabric.twin.sshd``, ``fabric.twin.login_gate``).

The twin starts with no fabric configuration: only the FRR base (hostname, logging, the FRR 8.4 nexthop workaround).
Everything else reaches the switches through the push. A SONiC compute fabric is rehearsed on its routing config: each
switch boots its own rendered ``frr.conf`` with config_db's addresses on its ports (``fabric.twin.rehearse``).
Traffic stays inside the twin's namespaces and on loopback.
``down`` stops only what the twin started (``fabric.twin.procs``): each recorded process whose PID, start time and
executable all still match, and, when the record is lost or corrupt, each process that runs one of the twin's own
daemons with its own config file under the directory and started after the marker's tick; anything else is left alone
and named in the report. It works only on a directory the twin created (``fabric.twin.state``: the marker; ``/``,
home and top-level directories, symlinks and other users' directories are refused with exit 2), and deletes exactly
the twin's namespaces (``<cluster>-<device>`` from the state and the plan, never a prefix match); ``up`` cleans up a
previous twin first and records each daemon's identity as soon as it runs. The state file is written atomically.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from fabric.errors import LabError
from fabric.plan.compute.planes import fabric_plane_cidrs, plane_of
from fabric.plan.types import ClusterPlan
from fabric.render import render_configs
from fabric.twin.lldp import LLDPD, lldp_interfaces, lldpd_in, restart_lldpd, start_lldpd
from fabric.twin.oob import cable_oob, oob_devices
from fabric.twin.ports import free_port
from fabric.twin.procs import TwinProcess, boot_id, identify, is_alive, is_current, mismatch, start_ticks, started_from, stop
from fabric.twin.rehearse import IN_FRR, ZEBRA_MODULES, program_addresses, refuse_unrehearsable
from fabric.twin.sshd import SSHD, prepare_keys, start_sshd
from fabric.twin.state import LabState, LabSwitch, claim, load_state, owned, save_state, twin_executables, write_marker
from fabric.twin.storage import cable_storage, storage_devices, storage_hosts
from fabric.twin.switches import FRR_BIN, FRR_DAEMONS, L2_NOS, boot_config, boot_l2, l2_startups, start_daemon, start_frr, wait_pid

HOST_MTU_DEFAULT = 9000
PLANE_TABLE = 100  # roles/network_planes' compute table base (network_planes_tables.compute): port i uses table 100 + i
COMMAND_TIMEOUT_S = 30
__all__ = ["LabState", "LabSwitch", "Teardown", "is_alive", "lab_down", "lab_heal", "lab_namespaces", "lab_status", "lab_up", "load_state"]


@dataclass(frozen=True, slots=True)
class Teardown:
    """What ``down`` did: ``removed`` (processes and namespaces) and ``left`` (what it would not touch, and why)."""

    removed: list[str]
    left: list[str]


def _run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(list(args), capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False)  # noqa: S603 - fixed argv, no shell
    if check and result.returncode != 0:
        msg = f"{' '.join(args)} failed ({result.returncode}): {result.stderr.strip() or result.stdout.strip()}"
        raise LabError(msg)
    return result


def namespace(cluster: str, device: str) -> str:
    """The namespace of a device: ``<cluster>-<device>`` (lab-leaf01).

    Example:
        >>> namespace("lab", "leaf01")
        'lab-leaf01'
    """
    return f"{cluster}-{device}"


def lab_namespaces(plan: ClusterPlan) -> tuple[str, ...]:
    """Every namespace the twin of ``plan`` has: one per switch, one per cabled node and the OOB plane's, exactly."""
    fabric = plan.fabric
    if fabric is None:
        return ()
    devices = [s.name for s in fabric.switches] + [n.hostname for n in plan.nodes if any(i.switch for i in n.interfaces)]
    devices += [h for h in storage_hosts(plan) if h not in devices] + list(storage_devices(plan))  # fabric.twin.storage
    devices += oob_devices(plan)  # the OOB core, management switches and BMC stand-ins (fabric.twin.oob)
    return tuple(namespace(plan.name, d) for d in devices)


def _preflight() -> None:
    if os.geteuid() != 0:
        msg = "the twin needs root (network namespaces, veth links); run it as root"
        raise LabError(msg)
    missing = [str(p) for p in (FRR_BIN / "zebra", SSHD, LLDPD) if not p.exists()] + [t for t in ("ip", "ssh-keygen") if shutil.which(t) is None]
    if missing:
        msg = f"missing {', '.join(missing)}; ./dev installs frr, openssh-server and lldpd when run as root"
        raise LabError(msg)


def lab_up(plan: ClusterPlan, directory: Path) -> LabState:
    """Build the twin of ``plan`` under ``directory`` (absolute path), after removing any previous twin there.

    Raises:
        InputError: ``directory`` is not the twin's: it holds files the twin did not create, or fails the checks of
            ``fabric.twin.state`` (nothing is stopped or removed).
        LabError: not root, tools missing, the plan has no on-prem fabric or a compute switch is neither FRR nor SONiC
            (``fabric.twin.rehearse``), or a command failed.
    """
    _preflight()
    refuse_unrehearsable(plan)
    other = sorted(f"{name} ({nos})" for name, nos in _l2_switches(plan).items() if nos != L2_NOS)
    if other:
        msg = f"cluster '{plan.name}': the twin stands in for {L2_NOS} storage/OOB switches only, not {', '.join(other)}; set their nos: {L2_NOS}"
        raise LabError(msg)
    marker = claim(directory, lambda: _named(directory))
    directory = directory.resolve()
    namespaces = lab_namespaces(plan)
    healed = lab_heal(plan, directory)
    if healed is not None:
        return healed[0]
    lab_down(plan.name, directory, namespaces)
    marker = write_marker(directory, marker.token)  # this boot, this command's start: what a crash recovery trusts
    _check_reachable(directory)
    taken = sorted(set(namespaces) & _netns())
    if taken:
        msg = f"namespaces {', '.join(taken)} exist and belong to no twin under {directory}; run 'lab down' with that twin's state"
        raise LabError(msg)
    base = LabState(plan.name, str(directory), namespaces, (), "", "", token=marker.token, boot=marker.boot)
    save_state(base, directory)  # a crash from here on is cleaned up
    try:
        state = _build(plan, directory, base)
    except BaseException:
        lab_down(plan.name, directory, namespaces)  # never leave half a twin behind
        raise
    save_state(state, directory)
    return state


def lab_heal(plan: ClusterPlan, directory: Path) -> tuple[LabState, list[str]] | None:
    """Restart what died in the twin of ``plan`` under ``directory`` (only those daemons, in their exact namespaces,
    from the switch's saved config); the healed state and what was restarted. None when there is no such twin to heal
    (no, a corrupt or a foreign state, another cluster or boot, other namespaces than the plan's, or one of them gone):
    build it anew.

    Raises:
        InputError: ``directory`` holds a record but is not the twin's (``fabric.twin.state``).
        LabError: something died and this is not root or tools are missing, or a daemon does not start again.
    """
    if not os.path.lexists(directory / "lab.json"):
        return None
    marker = owned(directory, lambda: _named(directory))
    directory = directory.resolve()
    try:
        state = load_state(directory)
    except LabError:
        return None
    wanted = lab_namespaces(plan)
    if state is None or state.token != marker.token or state.boot != boot_id() or state.cluster != plan.name:
        return None
    if set(state.namespaces) != set(wanted) or not set(wanted) <= _netns():
        return None
    if not state.processes or not state.client_key:
        return None  # a twin whose build never finished
    restarted: list[str] = []
    processes: list[TwinProcess] = []
    if not all(is_current(p) for p in state.processes):
        _preflight()
    for process in state.processes:
        if not is_current(process):  # gone, or its PID now names another process: never signalled, started anew
            process = _restart(state, process.name, directory)  # noqa: PLW2901 - the process's new identity
            restarted.append(process.name)
        processes.append(process)
    healed = replace(state, processes=tuple(processes))
    if restarted:
        save_state(healed, directory)
    return healed, restarted


def _restart(state: LabState, process: str, directory: Path) -> TwinProcess:
    """Start one recorded process again ("leaf01/bgpd", "leaf01/sshd"); its new identity."""
    name, daemon = process.split("/")
    since = start_ticks(os.getpid()) or 0
    if daemon == "lldpd":  # a node's or a switch's (fabric.twin.lldp)
        return restart_lldpd(name, namespace(state.cluster, name), directory, since)
    switch = state.switch(name)
    if daemon == "sshd":
        return identify(process, start_sshd(directory, [switch], state.station, _run, wait_pid)[0], SSHD, since)
    modules = ZEBRA_MODULES.get(switch.rehearses, ())
    pid = start_daemon(daemon, switch.namespace, Path(switch.run_dir), _run, modules)
    if switch.rehearses:
        boot_config(switch.namespace, Path(switch.run_dir), _run)  # its saved frr.conf, every daemon its own lines
    return identify(process, pid, FRR_BIN / daemon, since)


def _build(plan: ClusterPlan, directory: Path, base: LabState) -> LabState:
    """Namespaces, cables, FRR per switch, sshd; each daemon recorded (PID, start, executable) as soon as it runs;
    the caller removes everything if any step fails."""
    fabric = plan.fabric
    assert fabric is not None
    since = start_ticks(os.getpid()) or 0  # every daemon starts after this command did
    processes: list[TwinProcess] = []
    for ns in base.namespaces:
        _run("ip", "netns", "add", ns)
        _run("ip", "-n", ns, "link", "set", "lo", "up")
    _cable(plan)
    cable_oob(plan, {d: namespace(plan.name, d) for d in oob_devices(plan)}, _run)
    twin = {*storage_devices(plan), *storage_hosts(plan), *(n.hostname for n in plan.nodes if any(i.switch for i in n.interfaces))}
    cable_storage(plan, {d: namespace(plan.name, d) for d in twin}, _run)
    switches: list[LabSwitch] = []
    picked: set[int] = set()  # the sshd ports picked so far: none is bound until every sshd starts
    files = render_configs(plan)
    for switch in fabric.switches:
        ns = namespace(plan.name, switch.name)
        forwarding = ("net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1", "net.ipv4.fib_multipath_hash_policy=1")
        _run("ip", "netns", "exec", ns, "sysctl", "-qw", *forwarding)
        run_dir = directory / "frr" / switch.name
        rehearses = switch.nos if switch.nos in IN_FRR else ""
        switches.append(LabSwitch(switch.name, ns, _port(picked), str(run_dir), rehearses=rehearses))
        config = ""
        if (vrfs := files.get(f"switches/{switch.name}/vrfs.ip")) is not None:  # a shared spine: its VRF devices, as its host would make them
            batch = directory / f"{switch.name}.vrfs.ip"
            batch.write_text(vrfs, encoding="utf-8")
            _run("ip", "-n", ns, "-batch", str(batch))  # fabric.render.nos.frr.render_vrf_devices; needs CONFIG_NET_VRF
        if rehearses:  # what swss would program from config_db, then the switch's own frr.conf
            program_addresses(ns, files[f"switches/{switch.name}/config_db.json"], _run)
            config = files[f"switches/{switch.name}/frr.conf"]
        started = start_frr(switch.name, ns, run_dir, _run, config=config, modules=ZEBRA_MODULES.get(rehearses, ()))
        processes += [identify(f"{switch.name}/{d}", pid, FRR_BIN / d, since) for d, pid in zip(FRR_DAEMONS, started, strict=True)]
        save_state(replace(base, switches=tuple(switches), processes=tuple(processes)), directory)
    l2 = [LabSwitch(name, namespace(plan.name, name), _port(picked), str(directory / "nvue" / name), nos) for name, nos in _l2_switches(plan).items()]
    startups = l2_startups(files, [s.name for s in l2])
    for switch in l2:
        boot_l2(switch.name, switch.namespace, Path(switch.run_dir), startups[switch.name], _run)
    for device, interfaces in lldp_interfaces(plan).items():  # LLDP on every compute cable, for verify --cabling (fabric.twin.lldp)
        processes.append(start_lldpd(device, namespace(plan.name, device), interfaces, directory, since))
        save_state(replace(base, switches=tuple(switches), processes=tuple(processes)), directory)
    client_key, known_hosts = prepare_keys(directory, switches + l2, _run)
    ssh_pids = start_sshd(directory, switches + l2, station(plan), _run, wait_pid)
    processes += [identify(f"{s.name}/sshd", pid, SSHD, since) for s, pid in zip(switches + l2, ssh_pids, strict=True)]
    return replace(
        base,
        switches=tuple(switches),
        client_key=client_key,
        known_hosts=known_hosts,
        processes=tuple(processes),
        station=station(plan),
        l2_switches=tuple(l2),
    )


def _port(picked: set[int]) -> int:
    """A free port for one more sshd of this twin, none it picked already (``fabric.twin.ports.free_port``)."""
    port = free_port(avoid=picked)
    picked.add(port)
    return port


def _l2_switches(plan: ClusterPlan) -> dict[str, str]:
    """The storage / in-band and OOB switches (name → NOS): the twin's L2 switches."""
    found = {s.name: s.nos for net in plan.storage for s in net.switches}
    return found | ({s.name: s.nos for s in plan.oob.switches} if plan.oob is not None else {})


def station(plan: ClusterPlan) -> str:
    """The management station's address: the OOB plane's gateway ("" without one: logins are not checked)."""
    oob = next((p for p in plan.planes if p.name == "oob"), None)
    return (oob.gateway or "") if oob is not None else ""


def _check_reachable(directory: Path) -> None:
    """The FRR daemons run as user frr: every parent of the state directory must be searchable by others."""
    for parent in (directory, *directory.parents):
        if not parent.stat().st_mode & 0o001:
            msg = f"the frr user cannot reach {directory}: {parent} is not searchable by others; choose a state directory outside it"
            raise LabError(msg)


def _cable(plan: ClusterPlan) -> None:
    """One veth per cable, created straight inside the two namespaces (switch ports at the fabric MTU, node ports at
    the plane's); hosts get their /31 and a route to the fabric (on a multi-plane fabric, to the port's plane only)."""
    fabric = plan.fabric
    assert fabric is not None
    compute = plan.plane("compute")
    blocks = fabric_plane_cidrs(plan)  # a multi-plane fabric: each host port routes only its own plane's block
    tables: dict[str, list[str]] = {}  # node -> its compute ports given a table so far
    routed: set[tuple[str, str]] = set()  # (node, block): several rails on one block route it through the first (no per-rail routing)
    for link in fabric.links:
        a, b = namespace(plan.name, link.a_device), namespace(plan.name, link.b_device)
        a_mtu = str(fabric.mtu)  # a switch port: the fabric MTU, host-facing ports too
        b_mtu = a_mtu if link.kind == "fabric" else str(compute.mtu or HOST_MTU_DEFAULT)
        _run("ip", "-n", a, "link", "add", link.a_port, "mtu", a_mtu, "type", "veth", "peer", "name", link.b_port, "netns", b, "mtu", b_mtu)
        _run("ip", "-n", a, "link", "set", link.a_port, "up")
        _run("ip", "-n", b, "link", "set", link.b_port, "up")
        if link.kind == "host" and link.b_address and link.a_address:
            _run("ip", "-n", b, "addr", "add", f"{link.b_address}/31", "dev", link.b_port)
            route = blocks.get(plane_of(link.a_device) or 0, compute.cidr)
            if route and (link.b_device, route) not in routed:
                routed.add((link.b_device, route))
                _run("ip", "-n", b, "route", "add", route, "via", link.a_address, "dev", link.b_port)
            if route and blocks and compute.cidr:  # as roles/network_planes: this address's own table, the other planes unreachable
                mine = tables.setdefault(link.b_device, [])
                table = str(PLANE_TABLE + len(mine))
                mine.append(link.b_port)
                _run("ip", "-n", b, "rule", "add", "from", link.b_address, "table", table, "priority", table)
                _run("ip", "-n", b, "route", "add", route, "via", link.a_address, "dev", link.b_port, "table", table)
                _run("ip", "-n", b, "route", "add", "unreachable", compute.cidr, "table", table)


def _netns() -> set[str]:
    return {line.split()[0] for line in _run("ip", "netns", "list", check=False).stdout.splitlines() if line.strip()}


def _own_daemons(directory: Path) -> dict[str, re.Pattern[str]]:
    """Each executable the twin runs as a daemon → the config file under ``directory`` it is started with."""
    root = re.escape(str(directory))
    frr = re.compile(rf"{root}/frr/(?P<switch>[^/\s]+)/frr\.conf")
    ssh = re.compile(rf"{root}/ssh/sshd_(?P<switch>[^/\s]+)\.conf")
    return {exe: ssh if daemon == "sshd" else frr for exe, daemon in twin_executables().items()}


def _named(directory: Path) -> list[int]:
    """The PIDs a refusal names: the twin's daemons with config files under ``directory``, whenever they started."""
    return sorted(p.pid for p in started_from(-1, _own_daemons(directory.resolve())))


def lab_down(cluster: str, directory: Path, namespaces: Iterable[str] = ()) -> Teardown:
    """Stop every process the twin started and delete exactly its namespaces, even when ``lab.json`` is lost or corrupt.

    The processes are the recorded ones whose PID, start time and executable all still match, and those that run one of
    the twin's daemons with its config file under ``directory`` and started after the marker's tick (``fabric.twin.state``);
    a recorded PID that now names another process is left alone and reported. The namespaces are the recorded ones and
    ``namespaces`` (from the plan), never every namespace that starts with ``<cluster>-``.

    Raises:
        InputError: ``directory`` is not a directory the twin created; nothing is stopped or removed.

    Returns:
        What was removed and what was left alone, for the report.
    """
    if not os.path.lexists(directory):
        return Teardown([], [f"no state directory {directory}: nothing to stop"])
    marker = owned(directory, lambda: _named(directory))
    directory = directory.resolve()
    left: list[str] = []
    try:
        state = load_state(directory)
    except LabError as exc:
        state = None  # find the twin from its daemons and the plan instead
        left.append(f"lab.json ignored: {exc}")
    if state is not None and state.token != marker.token:
        state = None
        left.append(f"lab.json ignored: it was not written for {directory} (its token is not the marker's)")
    recorded = state.processes if state is not None and state.boot == boot_id() else ()
    wanted = set(namespaces) | set(state.namespaces if state is not None and state.cluster == cluster else ())
    found = started_from(marker.since, _own_daemons(directory)) if marker.boot == boot_id() else []
    inside = lldpd_in(wanted & _netns(), -1)  # every lldpd in the twin's namespaces: a recorded one must be among them
    found += [p for p in inside if p.start >= marker.since] if marker.boot == boot_id() else []  # its command line is rewritten
    removed: list[str] = []
    for process in {(p.pid, p.start): p for p in (*recorded, *found)}.values():
        if process.name.endswith("/lldpd") and (process.pid, process.start) not in {(p.pid, p.start) for p in inside}:
            left.append(f"process {process.pid} ({process.name}) left alone: no lldpd of that identity runs in the twin's namespaces")
        elif stop(process):
            removed.append(f"process {process.pid} ({process.name})")
        elif why := mismatch(process):
            left.append(why)
    for ns in sorted(wanted & _netns()):
        _run("ip", "netns", "delete", ns, check=False)
        removed.append(f"namespace {ns}")
    (directory / "lab.json").unlink(missing_ok=True)
    return Teardown(removed, left)


def lab_status(directory: Path) -> dict[str, object]:
    """Which recorded processes are alive (the dead ones named) and which namespaces exist."""
    state = load_state(directory)
    if state is None:
        return {"up": False}
    existing = _netns()
    named = state.processes
    dead = [p.name for p in named if not is_current(p)]  # gone, or its PID now names another process
    missing = sorted(set(state.namespaces) - existing)
    status: dict[str, object] = {
        "up": not dead and not missing,
        "processes": f"{len(named) - len(dead)}/{len(named)} running",
        "namespaces": f"{len(state.namespaces) - len(missing)}/{len(state.namespaces)} present",
        "switches": {s.name: f"ssh 127.0.0.1:{s.ssh_port}" for s in state.switches + state.l2_switches},
    }
    if dead:
        status["dead"] = dead
        status["heal"] = "'python -m fabric lab up' restarts exactly these"
    if missing:
        status["missing_namespaces"] = missing
    return status
