"""What runs in each twin switch: FRR's daemons on a compute switch, the NVUE stand-in's startup revision on an L2 one.

A compute switch starts with only the FRR base (hostname, logging, the FRR 8.4 nexthop workaround): everything else
reaches it through the push. An L2 switch (storage / in-band / OOB, Cumulus on the twin) boots its rendered config as
the startup revision (Cumulus ZTP's way) through ``fabric.twin.nvue_standin``, which then answers its SSH logins; a push
changes it from there.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from fabric.errors import LabError
from fabric.twin.sshd import PYTHON, TWIN_NVUE

FRR_DAEMONS = ("zebra", "bgpd", "staticd", "bfdd")
FRR_BIN = Path("/usr/lib/frr")
L2_NOS = "cumulus"  # the NOS whose command surface the twin's L2 switches stand in for (fabric.twin.nvue_standin)

Run = Callable[..., object]


def start_frr(name: str, ns: str, run_dir: Path, run: Run) -> list[int]:
    """zebra, bgpd, staticd, bfdd in the namespace, all reading one integrated frr.conf with only the base lines."""
    (run_dir / "run").mkdir(parents=True, exist_ok=True)
    base = (
        f"frr defaults datacenter\nhostname {name}\nlog file {run_dir}/frr.log\nservice integrated-vtysh-config\n"
        "! FRR 8.4 keeps only one ECMP next hop after a link flap with kernel nexthop groups (FRR #12239)\n"
        "no zebra nexthop kernel enable\n!\n"
    )
    (run_dir / "frr.conf").write_text(base, encoding="utf-8")
    (run_dir / "vtysh.conf").write_text(f"service integrated-vtysh-config\nhostname {name}\n", encoding="utf-8")
    (run_dir / "frr.log").touch()
    shutil.chown(run_dir, "frr", "frr")
    for path in run_dir.rglob("*"):
        shutil.chown(path, "frr", "frr")
    return [start_daemon(daemon, ns, run_dir, run) for daemon in FRR_DAEMONS]


def start_daemon(daemon: str, ns: str, run_dir: Path, run: Run) -> int:
    """One FRR daemon in the switch's namespace, reading the switch's frr.conf (the base, or what was last saved)."""
    extra = ["-s", "90000000"] if daemon == "zebra" else ["--bfdctl", f"{run_dir}/run/bfdd.sock"] if daemon == "bfdd" else []
    pid_file = run_dir / "run" / f"{daemon}.pid"
    pid_file.unlink(missing_ok=True)
    run(
        "ip", "netns", "exec", ns, str(FRR_BIN / daemon), "-d", "-f", str(run_dir / "frr.conf"), "-i", str(pid_file),
        "-z", str(run_dir / "run" / "zserv.api"), "--vty_socket", str(run_dir / "run"), "-P", "0", *extra,
    )  # fmt: skip
    return wait_pid(pid_file)


def wait_pid(pid_file: Path, timeout_s: float = 10.0) -> int:
    """The PID a daemon wrote to ``pid_file``, waiting up to ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if pid_file.exists() and (text := pid_file.read_text(encoding="utf-8").strip()):
            return int(text)
        time.sleep(0.05)
    msg = f"{pid_file} did not appear within {timeout_s:g} s; see the daemon's log next to it"
    raise LabError(msg)


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
