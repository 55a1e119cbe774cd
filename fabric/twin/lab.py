"""The local twin of an on-prem fabric: one network namespace per switch running FRR, one per node, veth links exactly as
the cabling plan says, and one sshd per switch on 127.0.0.1 (its own port) through which netmiko reaches that switch's
vtysh, past the switch's management ACL (``fabric.twin.sshd``, ``fabric.twin.login_gate``).

The twin starts with no fabric configuration: only the FRR base (hostname, logging, the FRR 8.4 nexthop workaround).
Everything else reaches the switches through the push. Traffic stays inside the twin's namespaces and on loopback.
``down`` stops every process it started, by PID (and, when the state file is lost or corrupt, every process whose
command line names the twin's directory), and deletes exactly the twin's namespaces (``<cluster>-<device>`` from the
state and the plan, never a prefix match); ``up`` cleans up a previous twin first. The state file is written
atomically (temporary file, fsync, rename).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import TypeAdapter

from fabric.errors import LabError
from fabric.plan.types import ClusterPlan
from fabric.render import render_configs
from fabric.twin.oob import cable_oob, oob_devices
from fabric.twin.procs import is_alive, processes_under, read_text, started_here, stop
from fabric.twin.sshd import SSHD, prepare_keys, start_sshd
from fabric.twin.storage import cable_storage, storage_devices, storage_hosts
from fabric.twin.switches import FRR_BIN, FRR_DAEMONS, L2_NOS, boot_l2, l2_startups, start_daemon, start_frr, wait_pid

HOST_MTU_DEFAULT = 9000
COMMAND_TIMEOUT_S = 30
__all__ = ["LabState", "LabSwitch", "is_alive", "lab_down", "lab_heal", "lab_namespaces", "lab_status", "lab_up", "load_state"]


@dataclass(frozen=True, slots=True)
class LabSwitch:
    """How to reach one twin switch."""

    name: str
    namespace: str
    ssh_port: int
    run_dir: str
    nos: str = "frr"  # "frr": FRR's vtysh; "cumulus": an L2 switch behind the NVUE stand-in (fabric.twin.nvue_standin)


@dataclass(frozen=True, slots=True)
class LabState:
    """What ``up`` created and ``down`` removes; saved as ``lab.json`` in the state directory."""

    cluster: str
    directory: str
    namespaces: tuple[str, ...]
    pids: tuple[int, ...]
    switches: tuple[LabSwitch, ...]
    client_key: str
    known_hosts: str
    processes: tuple[tuple[str, int], ...] = ()  # ("leaf01/bgpd", pid): what ``status`` names when one dies
    station: str = ""  # the management station's address, which each switch's management ACL is checked for
    l2_switches: tuple[LabSwitch, ...] = ()  # the storage / in-band / OOB switches (NVUE stand-in), pushed like the others

    def switch(self, name: str) -> LabSwitch:
        """The twin switch called ``name`` (compute or L2)."""
        return next(s for s in self.switches + self.l2_switches if s.name == name)


_STATE: TypeAdapter[LabState] = TypeAdapter(LabState)


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
    missing = [str(p) for p in (FRR_BIN / "zebra", SSHD) if not p.exists()] + [t for t in ("ip", "ssh-keygen") if shutil.which(t) is None]
    if missing:
        msg = f"missing {', '.join(missing)}; ./dev installs frr and openssh-server when run as root"
        raise LabError(msg)


def lab_up(plan: ClusterPlan, directory: Path) -> LabState:
    """Build the twin of ``plan`` under ``directory`` (absolute path), after removing any previous twin there.

    Raises:
        LabError: not root, tools missing, the plan has no on-prem fabric or a switch is not FRR, or a command failed.
    """
    _preflight()
    fabric = plan.fabric
    if fabric is None or any(s.nos != "frr" for s in fabric.switches):
        msg = f"cluster '{plan.name}': the twin runs FRR switches only; set fabric.leaf/spine nos: frr (model lab-vswitch)"
        raise LabError(msg)
    other = sorted(f"{name} ({nos})" for name, nos in _l2_switches(plan).items() if nos != L2_NOS)
    if other:
        msg = f"cluster '{plan.name}': the twin stands in for {L2_NOS} storage/OOB switches only, not {', '.join(other)}; set their nos: {L2_NOS}"
        raise LabError(msg)
    directory = directory.resolve()
    namespaces = lab_namespaces(plan)
    healed = lab_heal(plan, directory)
    if healed is not None:
        return healed[0]
    lab_down(plan.name, directory, namespaces)
    directory.mkdir(parents=True, exist_ok=True)
    _check_reachable(directory)
    taken = sorted(set(namespaces) & _netns())
    if taken:
        msg = f"namespaces {', '.join(taken)} exist and belong to no twin under {directory}; run 'lab down' with that twin's state"
        raise LabError(msg)
    _save(LabState(plan.name, str(directory), namespaces, (), (), "", ""), directory)  # a crash from here on is cleaned up
    try:
        state = _build(plan, directory, namespaces)
    except BaseException:
        lab_down(plan.name, directory, namespaces)  # never leave half a twin behind
        raise
    _save(state, directory)
    return state


def lab_heal(plan: ClusterPlan, directory: Path) -> tuple[LabState, list[str]] | None:
    """Restart what died in the twin of ``plan`` under ``directory`` (only those daemons, in their exact namespaces,
    from the switch's saved config); the healed state and what was restarted. None when there is no such twin to heal
    (no or a corrupt state, another cluster, other namespaces than the plan's, or one of them gone): build it anew.

    Raises:
        LabError: something died and this is not root or tools are missing, or a daemon does not start again.
    """
    directory = directory.resolve()
    try:
        state = load_state(directory)
    except LabError:
        return None
    wanted = lab_namespaces(plan)
    if state is None or state.cluster != plan.name or set(state.namespaces) != set(wanted) or not set(wanted) <= _netns():
        return None
    if not state.processes or not state.client_key:
        return None  # a twin whose build never finished
    restarted: list[str] = []
    processes: list[tuple[str, int]] = []
    if not all(is_alive(pid) for _, pid in state.processes):
        _preflight()
    for name, pid in state.processes:
        if not is_alive(pid):
            pid = _restart(state, name, directory)  # noqa: PLW2901 - the process's new PID
            restarted.append(name)
        processes.append((name, pid))
    healed = replace(state, processes=tuple(processes), pids=tuple(pid for _, pid in processes))
    if restarted:
        _save(healed, directory)
    return healed, restarted


def _restart(state: LabState, process: str, directory: Path) -> int:
    """Start one recorded process again ("leaf01/bgpd", "leaf01/sshd"); its new PID."""
    name, daemon = process.split("/")
    switch = state.switch(name)
    if daemon == "sshd":
        return start_sshd(directory, [switch], state.station, _run, wait_pid)[0]
    return start_daemon(daemon, switch.namespace, Path(switch.run_dir), _run)


def _build(plan: ClusterPlan, directory: Path, namespaces: tuple[str, ...]) -> LabState:
    """Namespaces, cables, FRR per switch, sshd; the caller removes everything if any step fails."""
    fabric = plan.fabric
    assert fabric is not None
    processes: list[tuple[str, int]] = []
    for ns in namespaces:
        _run("ip", "netns", "add", ns)
        _run("ip", "-n", ns, "link", "set", "lo", "up")
    _cable(plan)
    cable_oob(plan, {d: namespace(plan.name, d) for d in oob_devices(plan)}, _run)
    twin = {*storage_devices(plan), *storage_hosts(plan), *(n.hostname for n in plan.nodes if any(i.switch for i in n.interfaces))}
    cable_storage(plan, {d: namespace(plan.name, d) for d in twin}, _run)
    switches: list[LabSwitch] = []
    for switch in fabric.switches:
        ns = namespace(plan.name, switch.name)
        forwarding = ("net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1", "net.ipv4.fib_multipath_hash_policy=1")
        _run("ip", "netns", "exec", ns, "sysctl", "-qw", *forwarding)
        run_dir = directory / "frr" / switch.name
        started = start_frr(switch.name, ns, run_dir, _run)
        processes += [(f"{switch.name}/{daemon}", pid) for daemon, pid in zip(FRR_DAEMONS, started, strict=True)]
        switches.append(LabSwitch(switch.name, ns, _free_port(), str(run_dir)))
    l2 = [LabSwitch(name, namespace(plan.name, name), _free_port(), str(directory / "nvue" / name), nos) for name, nos in _l2_switches(plan).items()]
    startups = l2_startups(render_configs(plan), [s.name for s in l2])
    for switch in l2:
        boot_l2(switch.name, switch.namespace, Path(switch.run_dir), startups[switch.name], _run)
    client_key, known_hosts = prepare_keys(directory, switches + l2, _run)
    ssh_pids = start_sshd(directory, switches + l2, station(plan), _run, wait_pid)
    processes += [(f"{s.name}/sshd", pid) for s, pid in zip(switches + l2, ssh_pids, strict=True)]
    pids = tuple(pid for _, pid in processes)
    return LabState(plan.name, str(directory), namespaces, pids, tuple(switches), client_key, known_hosts, tuple(processes), station(plan), tuple(l2))


def _l2_switches(plan: ClusterPlan) -> dict[str, str]:
    """The storage / in-band and OOB switches (name → NOS): the twin's L2 switches."""
    found = {s.name: s.nos for net in plan.storage for s in net.switches}
    return found | ({s.name: s.nos for s in plan.oob.switches} if plan.oob is not None else {})


def station(plan: ClusterPlan) -> str:
    """The management station's address: the OOB plane's gateway ("" without one: logins are not checked)."""
    oob = next((p for p in plan.planes if p.name == "oob"), None)
    return (oob.gateway or "") if oob is not None else ""


def _free_port() -> int:
    """A TCP port free on 127.0.0.1 now (each twin records its own, so twins never collide)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _check_reachable(directory: Path) -> None:
    """The FRR daemons run as user frr: every parent of the state directory must be searchable by others."""
    for parent in (directory, *directory.parents):
        if not parent.stat().st_mode & 0o001:
            msg = f"the frr user cannot reach {directory}: {parent} is not searchable by others; choose a state directory outside it"
            raise LabError(msg)


def _cable(plan: ClusterPlan) -> None:
    """One veth per cable, created straight inside the two namespaces (switch ports at the fabric MTU, node ports at
    the plane's); hosts get their /31 and a route to the fabric."""
    fabric = plan.fabric
    assert fabric is not None
    compute = plan.plane("compute")
    for link in fabric.links:
        a, b = namespace(plan.name, link.a_device), namespace(plan.name, link.b_device)
        a_mtu = str(fabric.mtu)  # a switch port: the fabric MTU, host-facing ports too
        b_mtu = a_mtu if link.kind == "fabric" else str(compute.mtu or HOST_MTU_DEFAULT)
        _run("ip", "-n", a, "link", "add", link.a_port, "mtu", a_mtu, "type", "veth", "peer", "name", link.b_port, "netns", b, "mtu", b_mtu)
        _run("ip", "-n", a, "link", "set", link.a_port, "up")
        _run("ip", "-n", b, "link", "set", link.b_port, "up")
        if link.kind == "host" and link.b_address and link.a_address:
            _run("ip", "-n", b, "addr", "add", f"{link.b_address}/31", "dev", link.b_port)
            if compute.cidr:
                _run("ip", "-n", b, "route", "add", compute.cidr, "via", link.a_address, "dev", link.b_port)


def _save(state: LabState, directory: Path) -> None:
    """Write ``lab.json`` atomically: a reader sees the old state or the new one, never half of one."""
    path = directory / "lab.json"
    tmp = directory / f".lab.json.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, _STATE.dump_json(state, indent=1) + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    tmp.replace(path)


def load_state(directory: Path) -> LabState | None:
    """The recorded twin under ``directory``, if any.

    Raises:
        LabError: ``lab.json`` is unreadable or corrupt (``lab down`` still works: it finds the twin without it).
    """
    path = directory.resolve() / "lab.json"
    if not path.exists():
        return None
    try:
        return _STATE.validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        msg = f"{path} is corrupt ({str(exc).splitlines()[0]}); run 'python -m fabric lab down' and 'lab up' again"
        raise LabError(msg) from exc


def _netns() -> set[str]:
    return {line.split()[0] for line in _run("ip", "netns", "list", check=False).stdout.splitlines() if line.strip()}


def lab_down(cluster: str, directory: Path, namespaces: Iterable[str] = ()) -> list[str]:
    """Stop every process of the twin and delete exactly its namespaces, even when ``lab.json`` is lost or corrupt.

    The processes are the recorded PIDs, the PID files under ``directory`` and every process whose command line names
    ``directory`` (each checked to run from the twin's files before it is stopped). The namespaces are the recorded
    ones and ``namespaces`` (from the plan) — never every namespace that starts with ``<cluster>-``.

    Returns:
        What was removed, for the report.
    """
    directory = directory.resolve()
    try:
        state = load_state(directory)
    except LabError:
        state = None  # corrupt: find the twin from its processes and the plan instead
    pids = set(state.pids if state else ())
    pids |= {int(p.read_text(encoding="utf-8")) for p in directory.glob("**/*.pid") if read_text(p).strip().isdigit()}
    pids |= processes_under(directory)
    removed = [f"process {pid}" for pid in sorted(pids) if started_here(pid, directory) and stop(pid)]
    wanted = set(state.namespaces if state else ()) | set(namespaces)
    if state is not None and state.cluster != cluster:
        wanted = set(namespaces)  # a state of another cluster in this directory: only this plan's namespaces
    for ns in sorted(wanted & _netns()):
        _run("ip", "netns", "delete", ns, check=False)
        removed.append(f"namespace {ns}")
    (directory / "lab.json").unlink(missing_ok=True)
    return removed


def lab_status(directory: Path) -> dict[str, object]:
    """Which recorded processes are alive (the dead ones named) and which namespaces exist."""
    state = load_state(directory)
    if state is None:
        return {"up": False}
    existing = _netns()
    named = state.processes or tuple((f"pid {pid}", pid) for pid in state.pids)
    dead = [name for name, pid in named if not is_alive(pid)]
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
