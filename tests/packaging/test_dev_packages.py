"""./dev's package step, on stand-ins for apt, dpkg and systemctl (the real ones would change this machine): the
daemons a package brings are not started while it installs (a policy-rc.d answering 101 is in place during apt-get and
gone after), and the units of every package it newly installed, dependencies included, are left disabled; units of
packages that were there before are not touched. The demo asks for the twin's packages only."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.conftest import ROOT

STUBS = {
    # apt-get: records whether the policy answered 101 at install time, then "installs" frr and its dependency
    "apt-get": """#!/bin/bash
[[ $1 == update* ]] && exit 0
"$POLICY_RC_D" frr start; echo "policy=$?" >> "$LOG"
echo "apt-get $*" >> "$LOG"
printf 'frr\\nlibyang2\\n' >> "$STATE/installed"
""",
    "dpkg-query": """#!/bin/bash
cat "$STATE/installed"
""",
    "dpkg": """#!/bin/bash
case $2 in
  frr) printf '/usr/lib/systemd/system/frr.service\\n/usr/bin/vtysh\\n' ;;
  libyang2) printf '/usr/lib/x86_64-linux-gnu/libyang.so.2\\n' ;;
  openssh-server) printf '/lib/systemd/system/ssh.service\\n' ;;
esac
""",
    "systemctl": """#!/bin/bash
echo "systemctl $*" >> "$LOG"
[[ $1 == is-enabled ]] && exit 0
exit 0
""",
    "id": "#!/bin/bash\necho 0\n",
}


def run_install(tmp_path: Path, *packages: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    bin_dir, state = tmp_path / "bin", tmp_path / "state"
    bin_dir.mkdir()
    state.mkdir()
    for name, body in STUBS.items():
        (bin_dir / name).write_text(body, encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    (state / "installed").write_text("openssh-server\n", encoding="utf-8")  # there before: its ssh.service is not ours
    log, policy = tmp_path / "log", tmp_path / "policy-rc.d"
    log.write_text("", encoding="utf-8")
    function = subprocess.run(["sed", "-n", "/^install_packages() {/,/^}/p", str(ROOT / "dev")], capture_output=True, text=True, check=True).stdout
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "LOG": str(log), "STATE": str(state), "POLICY_RC_D": str(policy), "HOME": str(tmp_path)}
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", f"{function}\ninstall_packages {' '.join(packages)}"],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert not policy.exists(), "the policy-rc.d it put in place is gone"
    return done, log.read_text(encoding="utf-8").splitlines()


def test_no_daemon_starts_and_new_units_are_left_disabled(tmp_path: Path) -> None:
    done, log = run_install(tmp_path, "frr")
    assert done.returncode == 0, done.stderr
    assert "policy=101" in log, "invoke-rc.d is told not to start anything while apt-get runs"
    assert "systemctl disable --quiet frr.service" in log
    assert not [line for line in log if "ssh.service" in line], "a unit of a package that was already there is not ours"
    assert "frr.service (from a package it installed) left disabled" in done.stderr


def test_nothing_to_install_touches_nothing(tmp_path: Path) -> None:
    done, log = run_install(tmp_path)
    assert done.returncode == 0, done.stderr
    assert log == []


def test_the_demo_asks_for_the_twin_only() -> None:
    demo = subprocess.run(["sed", "-n", "/^demo_packages() {/,/^}/p", str(ROOT / "dev")], capture_output=True, text=True, check=True).stdout
    named = sorted(line.split("need+=(")[1].split(")")[0] for line in demo.splitlines() if "need+=(" in line)
    assert named == ["frr", "iputils-ping", "lldpd", "openssh-server", "python3-venv"]  # lldpd: verify --cabling on the twin
    assert os.access(ROOT / "dev", os.X_OK)
