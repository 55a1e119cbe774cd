"""What runs in each twin switch: FRR's daemons on a compute switch, the NVUE stand-in's startup revision on an L2 one.

A compute switch starts with only the FRR base (hostname, logging, the FRR 8.4 nexthop workaround): everything else
reaches it through the push. A SONiC compute switch boots its own rendered ``frr.conf`` instead, as a real one does
(``fabric.twin.rehearse``). An L2 switch (storage / in-band / OOB, Cumulus on the twin) boots its rendered config as
the startup revision (Cumulus ZTP's way) through ``fabric.twin.nvue_standin``, which then answers its SSH logins; a push
changes it from there.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from fabric.errors import LabError
from fabric.twin.sshd import PYTHON, TWIN_NVUE, log_size

FRR_DAEMONS = ("zebra", "bgpd", "staticd", "bfdd")
FRR_BIN = Path("/usr/lib/frr")
L2_NOS = "cumulus"  # the NOS whose command surface the twin's L2 switches stand in for (fabric.twin.nvue_standin)

Run = Callable[..., object]


def start_frr(name: str, ns: str, run_dir: Path, run: Run, *, config: str = "", modules: tuple[str, ...] = ()) -> list[int]:
    """zebra, bgpd, staticd, bfdd in the namespace, all reading one integrated frr.conf with only the base lines; zebra
    loads ``modules``. With ``config`` (a SONiC switch's rendered frr.conf), that is then booted into them (``boot_config``)
    and the base takes its ``frr defaults`` profile."""
    (run_dir / "run").mkdir(parents=True, exist_ok=True)
    defaults = next((line for line in config.splitlines() if line.startswith("frr defaults ")), "frr defaults datacenter")
    base = (
        f"{defaults}\nhostname {name}\nlog file {run_dir}/frr.log\nservice integrated-vtysh-config\n"
        "! FRR 8.4 keeps only one ECMP next hop after a link flap with kernel nexthop groups (FRR #12239)\n"
        "no zebra nexthop kernel enable\n!\n"
    )
    (run_dir / "frr.conf").write_text(base, encoding="utf-8")
    (run_dir / "vtysh.conf").write_text(f"service integrated-vtysh-config\nhostname {name}\n", encoding="utf-8")
    (run_dir / "frr.log").touch()
    shutil.chown(run_dir, "frr", "frr")
    for path in run_dir.rglob("*"):
        shutil.chown(path, "frr", "frr")
    pids = [start_daemon(daemon, ns, run_dir, run, modules) for daemon in FRR_DAEMONS]
    if config:
        (run_dir / "frr.conf").write_text(config, encoding="utf-8")
        boot_config(ns, run_dir, run)
    return pids


def boot_config(ns: str, run_dir: Path, run: Run) -> None:
    """Send the switch's frr.conf to its running daemons, each its own lines: ``vtysh -b``, the way FRR's init and
    SONiC's bgp container (split-unified) boot an integrated config (sonic-buildimage
    ``dockers/docker-fpm-frr/frr/supervisord/supervisord.conf.j2``: ``vtysh_b``; FRR user guide, "Integrated config
    file"). A daemon reading the whole file itself with ``-f`` stops at the first block it does not know: bgpd takes the
    ``exit`` closing bfdd's ``bfd`` block for its own and ignores every line after it, ``router bgp`` included."""
    shutil.chown(run_dir / "frr.conf", "frr", "frr")
    run("ip", "netns", "exec", ns, "/usr/bin/vtysh", "--vty_socket", f"{run_dir}/run", "--config_dir", str(run_dir), "-b")


def start_daemon(daemon: str, ns: str, run_dir: Path, run: Run, modules: tuple[str, ...] = ()) -> int:
    """One FRR daemon in the switch's namespace, reading the switch's frr.conf (the base, or what was last saved)."""
    loaded = [arg for module in modules for arg in ("-M", module)]
    extra = ["-s", "90000000", *loaded] if daemon == "zebra" else ["--bfdctl", f"{run_dir}/run/bfdd.sock"] if daemon == "bfdd" else []
    pid_file = run_dir / "run" / f"{daemon}.pid"
    pid_file.unlink(missing_ok=True)
    since = log_size(run_dir / "frr.log")
    run(
        "ip", "netns", "exec", ns, str(FRR_BIN / daemon), "-d", "-f", str(run_dir / "frr.conf"), "-i", str(pid_file),
        "-z", str(run_dir / "run" / "zserv.api"), "--vty_socket", str(run_dir / "run"), "-P", "0", *extra,
    )  # fmt: skip
    return wait_pid(pid_file, log=run_dir / "frr.log", log_from=since)


PID_WAIT_S = 30.0
"""How long a twin daemon gets to write its PID file. The wait ends as soon as it does (milliseconds on an idle
machine); the bound only matters on a busy one, where 10 s was too short: CI, 2026-11-27, load 5, "sshd_….pid did not
appear within 10 s" (docs/testing.md)."""

GAVE_UP = ("Cannot bind any address",)
"""What a daemon's log says when it exited without writing its PID file: OpenSSH 9.2's sshd, its every listen address
taken (sshd.c, server_listen: ``fatal("Cannot bind any address.")``; with ``-E`` the line has no "fatal:" prefix)."""


def wait_pid(pid_file: Path, timeout_s: float = PID_WAIT_S, log: Path | None = None, log_from: int = 0) -> int:
    """The PID a daemon wrote to ``pid_file``, as soon as it does, waiting up to ``timeout_s``. ``log``: the daemon's
    log from byte ``log_from`` on (what this start wrote: ``log_size`` before it), whose last lines the error quotes; a
    line there that says the daemon gave up (``GAVE_UP``) ends the wait."""
    deadline = time.monotonic() + timeout_s
    while True:
        if pid_file.exists() and (text := pid_file.read_text(encoding="utf-8").strip()):
            return int(text)
        tail = _tail(log, log_from)
        if any(word in line for line in tail for word in GAVE_UP):
            msg = f"{pid_file}: the daemon exited without it; {log} ends: {' | '.join(tail)}"
            raise LabError(msg)
        if time.monotonic() >= deadline:
            break
        time.sleep(0.005)  # a PID file appears within ms; 27 starts a twin each waited up to 50 ms more
    said = f"; {log} ends: {' | '.join(tail)}" if tail else f"; {log} is empty" if log is not None else "; see the daemon's log next to it"
    msg = f"{pid_file} did not appear within {timeout_s:g} s{said}"
    raise LabError(msg)


def _tail(log: Path | None, start: int = 0, lines: int = 5) -> list[str]:
    """The last ``lines`` non-empty lines of ``log`` from byte ``start`` on, read from its last 4 KiB only (a long-lived
    twin's log can be large, and this runs at every poll); none when there is no log or it cannot be read."""
    if log is None:
        return []
    try:
        with log.open("rb") as f:
            f.seek(max(start, f.seek(0, os.SEEK_END) - 4096))
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    return [line.strip() for line in text.splitlines() if line.strip()][-lines:]


def boot_l2(name: str, ns: str, run_dir: Path, startup: str, run: Run) -> None:
    """Write an L2 switch's startup revision (its rendered ``nv set`` lines) and apply it in its namespace."""
    run_dir.mkdir(parents=True, exist_ok=True)
    for stale in ("applied", "pending", "rollback"):
        (run_dir / f"{stale}.conf").unlink(missing_ok=True)
    (run_dir / "startup.conf").write_text(startup, encoding="utf-8")
    run("ip", "netns", "exec", ns, str(PYTHON), "-I", str(TWIN_NVUE), str(run_dir), name, "boot")


def l2_startups(files: Mapping[str, str], names: list[str]) -> dict[str, str]:
    """Switch → its startup revision: the ``nv set`` lines of its rendered ``nvue.sh``."""
    return {n: "".join(line + "\n" for line in files[f"switches/{n}/nvue.sh"].splitlines() if line.startswith("nv set ")) for n in names}
