"""The twin's SSH access: one sshd per switch on 127.0.0.1 (its own port); the login gate
(``fabric.twin.login_gate``, its ``AuthorizedKeysCommand``) applies the switch's management ACL, and each login's
``ForceCommand`` is that switch's vtysh; keys made for the twin.

One sshd per switch: a single sshd holds at most 16 listen sockets (OpenSSH ``MAX_LISTEN_SOCKS``), so one daemon for
every switch stops at 16 switches.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

SSHD = Path("/usr/sbin/sshd")
PYTHON = Path("/usr/bin/python3")  # sshd runs an AuthorizedKeysCommand only from a root-owned path; the gate needs the stdlib only
LOGIN_GATE = Path(__file__).with_name("login_gate.py")
TWIN_NVUE = Path(__file__).with_name("nvue_standin.py")  # the L2 switches' command surface (NVUE stand-in)
COMMON = (
    "PermitRootLogin prohibit-password",
    "AllowUsers root",
    "StrictModes no",
    "PasswordAuthentication no",
    "KbdInteractiveAuthentication no",
    "UsePAM no",
    "PrintMotd no",
    "PrintLastLog no",
    "AllowTcpForwarding no",
    "X11Forwarding no",
    "MaxStartups 50:30:100",
    # sshd runs the ForceCommand through the user's shell, and Debian's bash reads ~/.bashrc when started by sshd at
    # shell level 1 (bash(1), INVOCATION; a hung pyenv rehash there hangs every login): start it at level 2 instead
    "SetEnv SHLVL=1",
)


class _Switch(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def ssh_port(self) -> int: ...
    @property
    def run_dir(self) -> str: ...
    @property
    def nos(self) -> str: ...


Run = Callable[..., object]
WaitPid = Callable[..., int]  # fabric.twin.switches.wait_pid: (pid_file, *, log=, log_from=) -> PID


def log_size(log: Path) -> int:
    """Where the next line of ``log`` starts (0 when there is none yet): what ``wait_pid(log_from=)`` reads from."""
    try:
        return log.stat().st_size
    except OSError:
        return 0


def prepare_keys(directory: Path, switches: Sequence[_Switch], run: Run) -> tuple[str, str]:
    """Host and client keys (made once per twin directory), authorized_keys and known_hosts; (client key, known_hosts)."""
    ssh = directory / "ssh"
    ssh.mkdir(parents=True, exist_ok=True)
    host_key, client_key = ssh / "hostkey_ed25519", ssh / "client_ed25519"
    for key in (host_key, client_key):
        if not key.exists():
            run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key))
    shutil.copy(client_key.with_suffix(".pub"), ssh / "authorized_keys")
    host_pub = host_key.with_suffix(".pub").read_text(encoding="utf-8").split()
    known_hosts = ssh / "known_hosts"
    known_hosts.write_text("".join(f"[127.0.0.1]:{s.ssh_port} {host_pub[0]} {host_pub[1]}\n" for s in switches), encoding="utf-8")
    return str(client_key), str(known_hosts)


def sshd_config(directory: Path, switch: _Switch, station: str) -> Path:
    """Write the sshd config of ``switch`` (``station``: the management station's address the ACL is checked for)."""
    ssh = directory / "ssh"
    config = ssh / f"sshd_{switch.name}.conf"
    gate = f"{PYTHON} -I {LOGIN_GATE} {switch.namespace} {switch.run_dir} {station or '-'} {ssh / 'authorized_keys'}"
    lines = [
        f"ListenAddress 127.0.0.1:{switch.ssh_port}",
        f"PidFile {ssh / f'sshd_{switch.name}.pid'}",
        f"HostKey {ssh / 'hostkey_ed25519'}",
        "AuthorizedKeysFile none",
        f"AuthorizedKeysCommand {gate}",
        "AuthorizedKeysCommandUser root",
        *COMMON,
        f"ForceCommand /usr/sbin/ip netns exec {switch.namespace} {_shell(switch)}",
    ]
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return config


def _shell(switch: _Switch) -> str:
    """What a login to the switch runs: FRR's vtysh, or the NVUE stand-in of an L2 switch."""
    if switch.nos == "frr":
        return f"/usr/bin/vtysh --vty_socket {switch.run_dir}/run --config_dir {switch.run_dir}"
    return f"{PYTHON} -I {TWIN_NVUE} {switch.run_dir} {switch.name}"


def start_sshd(directory: Path, switches: Sequence[_Switch], station: str, run: Run, wait_pid: WaitPid) -> list[int]:
    """Start one sshd per switch (the first config is checked with ``sshd -t``); their PIDs, in order. A failed start
    is named with the end of that sshd's log (``fabric.twin.switches.wait_pid``)."""
    ssh = directory / "ssh"
    Path("/run/sshd").mkdir(exist_ok=True)
    configs = [sshd_config(directory, s, station) for s in switches]
    for s in switches:
        (ssh / f"sshd_{s.name}.pid").unlink(missing_ok=True)
    # each start is judged by its own lines: what an earlier sshd logged (why it died) stays, but cannot end this wait
    since = {s.name: log_size(ssh / f"sshd_{s.name}.log") for s in switches}
    run(str(SSHD), "-t", "-f", str(configs[0]))
    for s, config in zip(switches, configs, strict=True):
        run(str(SSHD), "-f", str(config), "-E", str(ssh / f"sshd_{s.name}.log"))
    return [wait_pid(ssh / f"sshd_{s.name}.pid", log=ssh / f"sshd_{s.name}.log", log_from=since[s.name]) for s in switches]
