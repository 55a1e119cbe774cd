"""LLDP in the twin: one real lldpd per compute switch and per cabled node, in its namespace, on its compute ports,
so ``verify --cabling`` reads the twin's cabling back the way it reads a real cluster's (``fabric.apply.cabling``).

Each lldpd runs in the foreground (``-d``) with its own control socket and configuration file under the state
directory (``lldp/<device>.sock``, ``lldp/<device>.conf``): the system name is the device's, the port id is the
interface name (``configure lldp portidsubtype ifname``, lldpcli(8): a switch's port id is its port, as the plan names
it) and it sends every second (``tx-interval 1``), so a rewired twin shows its new neighbours within seconds. Each is
recorded (``<device>/lldpd``: PID, start, executable) as soon as it runs. lldpd rewrites its command line
(``lldpd: monitor.``), so when the record is lost, ``lab down`` finds an lldpd as the one running lldpd's executable
inside one of the twin's own namespaces (``/proc/<pid>/ns/net`` is that namespace's inode) and started after the
twin's marker.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

from fabric.apply.cabling.collect import Replies, parse_reply
from fabric.errors import LabError
from fabric.plan.types import ClusterPlan
from fabric.twin.procs import PID_MAX, TwinProcess, executable, identify, start_ticks

LLDPD = Path("/usr/sbin/lldpd")
LLDPCLI = Path("/usr/sbin/lldpcli")
START_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 10
SOCKET_MAX = 100  # sun_path is 108 bytes on Linux (unix(7)); keep a margin for lldpd's own ".lock" next to it


def lldp_interfaces(plan: ClusterPlan) -> dict[str, str]:
    """Each device with a compute cable → the interfaces its lldpd runs on (``-I``, lldpd(8): a comma list, ``*`` and
    ``!`` patterns): a switch on every port but its management one (a cable moved to a port the plan leaves empty is
    seen from the switch too), a node on its compute ports only (its storage and in-band ports share the L2 stand-ins'
    bridges, where lldpd would hear the other nodes)."""
    switches = {s.name for s in plan.fabric.switches} if plan.fabric else set[str]()
    ports: dict[str, list[str]] = {}
    for link in plan.fabric.links if plan.fabric else ():
        ports.setdefault(link.a_device, []).append(link.a_port)
        ports.setdefault(link.b_device, []).append(link.b_port)
    return {device: "*,!eth0" if device in switches else ",".join(names) for device, names in ports.items()}


def socket_of(directory: Path, device: str) -> Path:
    """The lldpd control socket of ``device``."""
    return directory / "lldp" / f"{device}.sock"


def start_lldpd(device: str, ns: str, interfaces: str, directory: Path, not_before: int) -> TwinProcess:
    """lldpd for ``device`` in namespace ``ns`` on ``interfaces``, recorded by identity once its control socket answers.

    Raises:
        LabError: the socket path is too long, or lldpd does not start within ``START_TIMEOUT_S``.
    """
    run_dir = directory / "lldp"
    run_dir.mkdir(parents=True, exist_ok=True)
    sock = socket_of(directory, device)
    if len(str(sock)) > SOCKET_MAX:
        msg = f"{sock}: lldpd's control socket path is over {SOCKET_MAX} characters (unix(7)); choose a shorter state directory"
        raise LabError(msg)
    for stale in (sock, sock.with_name(sock.name + ".lock")):
        stale.unlink(missing_ok=True)
    (run_dir / f"{device}.ports").write_text(interfaces, encoding="utf-8")  # what a restart listens on
    conf = run_dir / f"{device}.conf"
    conf.write_text(f"configure system hostname {device}\nconfigure lldp portidsubtype ifname\nconfigure lldp tx-interval 1\n", encoding="utf-8")
    log = (run_dir / f"{device}.log").open("ab")
    argv = ["ip", "netns", "exec", ns, str(LLDPD), "-d", "-I", interfaces, "-u", str(sock), "-O", str(conf)]
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)  # noqa: S603 - fixed argv, no shell
    log.close()
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if child.poll() is not None:
            msg = f"{device}: lldpd exited ({child.returncode}); see {run_dir / f'{device}.log'}"
            raise LabError(msg)
        if sock.exists() and _read(sock).returncode == 0:
            return identify(f"{device}/lldpd", child.pid, LLDPD, not_before)  # ip netns exec execs lldpd: the same PID
        time.sleep(0.02)  # a readiness poll: lldpd answers within tens of ms, and each of 8 starts waited a whole 0.1 s
    msg = f"{device}: lldpd's socket {sock} did not answer within {START_TIMEOUT_S:g} s; see its log next to it"
    raise LabError(msg)


def restart_lldpd(device: str, ns: str, directory: Path, not_before: int) -> TwinProcess:
    """Start ``device``'s lldpd again on the ports it was first started on (``lab up`` healing a twin)."""
    interfaces = (directory / "lldp" / f"{device}.ports").read_text(encoding="utf-8")
    return start_lldpd(device, ns, interfaces, directory, not_before)


def _read(sock: Path) -> subprocess.CompletedProcess[str]:
    argv = [str(LLDPCLI), "-u", str(sock), "-f", "json", "show", "neighbors"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=READ_TIMEOUT_S, check=False)  # noqa: S603 - fixed argv, no shell


def twin_replies(directory: Path, processes: Iterable[TwinProcess]) -> Replies:
    """Every recorded lldpd's neighbours (``lldpcli -f json show neighbors`` on its socket), through the same parser and
    bounds as a device's reply; an lldpd that does not answer is recorded as not read."""
    replies = Replies()
    for process in processes:
        device, daemon = process.name.split("/", 1)
        if daemon != "lldpd":
            continue
        result = _read(socket_of(directory, device))
        if result.returncode != 0:
            replies.unread[device] = f"lldpcli failed ({result.returncode}): {result.stderr.strip()[:200]}"
            continue
        replies.add(device, parse_reply(result.stdout, device, "lldpctl.json", f"twin {device}: lldpcli show neighbors"))
    return replies


def lldpd_in(namespaces: Iterable[str], since: int) -> list[TwinProcess]:
    """Every lldpd running inside one of ``namespaces`` (``/run/netns/<name>``) and started at or after tick ``since``:
    the twin's own when its record is lost."""
    inodes: dict[int, str] = {}
    for ns in namespaces:
        try:
            inodes[os.stat(f"/run/netns/{ns}").st_ino] = ns
        except OSError:
            continue
    wanted = os.path.realpath(LLDPD)
    found: list[TwinProcess] = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or not 1 < int(proc.name) <= PID_MAX:
            continue
        pid = int(proc.name)
        start = start_ticks(pid)
        if executable(pid) != wanted or start is None or start < since:
            continue
        try:
            ns = inodes.get(os.stat(f"/proc/{pid}/ns/net").st_ino)
        except OSError:
            continue
        if ns is not None:
            found.append(TwinProcess(f"{ns}/lldpd", pid, start, wanted))
    return found
