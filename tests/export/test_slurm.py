"""Slurm accepts the exported topology: Debian's slurmctld, started on loopback with a generated minimal slurm.conf
that includes our nodes.conf and topology.conf, reports our switches through ``scontrol show topology``."""

from __future__ import annotations

import getpass
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from fabric.export import export_slurm
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from tests.conftest import ROOT

SLURMCTLD, SCONTROL = shutil.which("slurmctld") or "/usr/sbin/slurmctld", shutil.which("scontrol")
pytestmark = pytest.mark.skipif(not Path(SLURMCTLD).exists() or SCONTROL is None, reason="Debian's slurmctld is not installed (./dev setup)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _slurm_conf(state: Path) -> str:
    """A minimal controller: loopback, own state, no munge (auth/none ships with Debian's slurm-wlm 22.05)."""
    host = socket.gethostname().split(".")[0]
    return "\n".join(
        [
            "ClusterName=gpufabrictest",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "AuthType=auth/none",
            "CredType=cred/none",
            f"SlurmUser={getpass.getuser()}",
            f"StateSaveLocation={state / 'state'}",
            f"SlurmdSpoolDir={state / 'spool'}",
            f"SlurmctldPidFile={state / 'slurmctld.pid'}",
            f"SlurmctldLogFile={state / 'slurmctld.log'}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "MpiDefault=none",
            "TopologyPlugin=topology/tree",
            "GresTypes=gpu",
            "SelectType=select/cons_tres",
            f"include {state / 'nodes.conf'}",
            "PartitionName=all Nodes=ALL Default=YES",
            "",
        ]
    )


def _show_topology(conf: Path, env: dict[str, str], deadline: float) -> str:
    assert SCONTROL is not None
    while True:
        result = subprocess.run([SCONTROL, "show", "topology"], capture_output=True, text=True, env=env, check=False, timeout=20)
        if result.returncode == 0 and "SwitchName=" in result.stdout:
            return result.stdout
        if time.monotonic() > deadline:
            log = (
                (conf.parent / "slurmctld.log").read_text(encoding="utf-8", errors="replace")[-3000:]
                if (conf.parent / "slurmctld.log").exists()
                else ""
            )
            pytest.fail(f"scontrol show topology never answered: {result.stderr}\n{log}")
        time.sleep(0.3)


@pytest.mark.slow
@pytest.mark.parametrize("example", ["onprem-roce", "onprem-ib", "lab"])
def test_slurmctld_accepts_the_exported_topology(example: str, tmp_path: Path) -> None:
    plan = plan_cluster(load_cluster(ROOT / "inventories" / example / "cluster.yaml"))
    files = export_slurm(plan)
    for relative, text in files.items():
        # slurmd would be reached on the in-band plane; here every node points at loopback so nothing leaves the host
        (tmp_path / Path(relative).name).write_text(re.sub(r"NodeAddr=\S+", "NodeAddr=127.0.0.1", text), encoding="utf-8")
    (tmp_path / "state").mkdir()
    (tmp_path / "spool").mkdir()
    conf = tmp_path / "slurm.conf"  # slurmctld reads topology.conf and gres.conf from slurm.conf's directory
    conf.write_text(_slurm_conf(tmp_path), encoding="utf-8")
    env = {**os.environ, "SLURM_CONF": str(conf)}
    ctld = subprocess.Popen([SLURMCTLD, "-D", "-i"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        topology = _show_topology(conf, env, time.monotonic() + 30)
    finally:
        ctld.terminate()
        try:
            ctld.wait(timeout=15)
        except subprocess.TimeoutExpired:
            ctld.kill()
            ctld.wait(timeout=5)
    ours = re.findall(r"^SwitchName=(\S+) (\S+)$", files["slurm/topology.conf"], re.MULTILINE)
    seen: dict[str, str] = dict(re.findall(r"SwitchName=(\S+) Level=\d+ LinkSpeed=\d+ (.*)", topology))
    assert set(seen) == {name for name, _ in ours}
    for name, members in ours:  # each leaf's nodes and each upper switch's children, as Slurm read them
        assert members in seen[name].split(), f"{name}: scontrol shows {seen[name]!r}, topology.conf has {members!r}"


def test_rail_optimized_units_are_the_leaves_and_the_spine_tier_sits_above() -> None:
    text = export_slurm(plan_cluster(load_cluster(ROOT / "inventories/onprem-roce/cluster.yaml")))["slurm/topology.conf"]
    lines = [line for line in text.splitlines() if line.startswith("SwitchName=")]
    assert lines == ["SwitchName=su01 Nodes=gpu[001-032]", "SwitchName=su02 Nodes=gpu[033-064]", "SwitchName=spines Switches=su[01-02]"]
