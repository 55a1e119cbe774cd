"""Slurm accepts the exported topology: Debian's slurmctld, started on loopback with a generated minimal slurm.conf
that includes our nodes.conf and topology.conf, reports our switches through ``scontrol show topology``."""

from __future__ import annotations

import contextlib
import getpass
import itertools
import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabric.catalog.node_model import MAX_MEMORY_GB
from fabric.export import export_slurm
from fabric.model import load_cluster, parse_cluster
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


@contextlib.contextmanager
def _controller(files: dict[str, str], tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """slurmctld running on ``files`` (nodes.conf, topology.conf, gres.conf) in ``tmp_path``: its slurm.conf and env."""
    for relative, text in files.items():
        if relative == "slurm/topology-block.conf":
            continue  # topology/block needs Slurm 23.11; Debian 12 ships 22.05 (checked structurally below)
        # slurmd would be reached on the in-band plane; here every node points at loopback so nothing leaves the host
        (tmp_path / Path(relative).name).write_text(re.sub(r"NodeAddr=\S+", "NodeAddr=127.0.0.1", text), encoding="utf-8")
    (tmp_path / "state").mkdir()
    (tmp_path / "spool").mkdir()
    conf = tmp_path / "slurm.conf"  # slurmctld reads topology.conf and gres.conf from slurm.conf's directory
    conf.write_text(_slurm_conf(tmp_path), encoding="utf-8")
    env = {**os.environ, "SLURM_CONF": str(conf)}
    ctld = subprocess.Popen([SLURMCTLD, "-D", "-i"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        yield conf, env
    finally:
        ctld.terminate()
        try:
            ctld.wait(timeout=15)
        except subprocess.TimeoutExpired:
            ctld.kill()
            ctld.wait(timeout=5)


ACCEPTED = {
    "onprem-roce": ROOT / "inventories/onprem-roce/cluster.yaml",
    "onprem-ib": ROOT / "inventories/onprem-ib/cluster.yaml",
    "lab": ROOT / "inventories/lab/cluster.yaml",
    "three-tier": ROOT / "tests/data/plan/three-tier/cluster.yaml",  # pods under super-spines
    "nvl72": ROOT / "tests/data/export/nvl72.yaml",  # CPU and memory on the node lines, NVLink domains
}


@pytest.mark.slow
@pytest.mark.parametrize("example", sorted(ACCEPTED))
def test_slurmctld_accepts_the_exported_topology(example: str, tmp_path: Path) -> None:
    files = export_slurm(plan_cluster(load_cluster(ACCEPTED[example])))
    with _controller(files, tmp_path) as (conf, env):
        topology = _show_topology(conf, env, time.monotonic() + 30)
    ours = re.findall(r"^SwitchName=(\S+) (\S+)$", files["slurm/topology.conf"], re.MULTILINE)
    seen: dict[str, str] = dict(re.findall(r"SwitchName=(\S+) Level=\d+ LinkSpeed=\d+ (.*)", topology))
    assert set(seen) == {name for name, _ in ours}
    for name, members in ours:  # each leaf's nodes and each upper switch's children, as Slurm read them
        assert members in seen[name].split(), f"{name}: scontrol shows {seen[name]!r}, topology.conf has {members!r}"


def test_rail_optimized_units_are_the_leaves_and_the_spine_tier_sits_above() -> None:
    text = export_slurm(plan_cluster(load_cluster(ROOT / "inventories/onprem-roce/cluster.yaml")))["slurm/topology.conf"]
    lines = [line for line in text.splitlines() if line.startswith("SwitchName=")]
    assert lines == ["SwitchName=su01 Nodes=gpu[001-032]", "SwitchName=su02 Nodes=gpu[033-064]", "SwitchName=spines Switches=su[01-02]"]


def test_node_lines_carry_the_profiles_cpus_and_memory() -> None:
    text = export_slurm(plan_cluster(load_cluster(ROOT / "inventories/onprem-roce/cluster.yaml")))["slurm/nodes.conf"]
    line = next(line for line in text.splitlines() if line.startswith("NodeName=gpu001 "))
    # dgx-h100: 2 x 56 cores, 2 TiB installed; RealMemory 95% of it in MiB so slurmd's MemTotal is not "Low RealMemory"
    assert "Sockets=2 CoresPerSocket=56 RealMemory=1992294 Gres=gpu:8" in line
    storage = export_slurm(plan_cluster(load_cluster(ROOT / "inventories/lab/cluster.yaml")))["slurm/nodes.conf"]
    assert "Sockets=" not in storage  # lab-node gives no CPUs: nothing is invented


def _expand(hostlist_expr: str) -> list[str]:
    match = re.fullmatch(r"(\w+?)\[(\d+)-(\d+)\]", hostlist_expr)
    assert match is not None, hostlist_expr
    width = len(match.group(2))
    return [f"{match.group(1)}{n:0{width}d}" for n in range(int(match.group(2)), int(match.group(3)) + 1)]


def test_nvlink_domains_become_blocks_in_topology_block_form() -> None:
    plan = plan_cluster(load_cluster(ROOT / "tests/data/export/nvl72.yaml"))
    text = export_slurm(plan)["slurm/topology-block.conf"]
    blocks = dict(re.findall(r"^BlockName=(\S+) Nodes=(\S+)$", text, re.MULTILINE))
    sizes = [int(n) for n in re.findall(r"^BlockSizes=(\S+)$", text, re.MULTILINE)[0].split(",")]
    members = {name: _expand(nodes) for name, nodes in blocks.items()}
    gpu_nodes = [n.hostname for n in plan.nodes if n.role == "gpu"]
    assert sorted(h for hosts in members.values() for h in hosts) == gpu_nodes  # each GPU node in exactly one block
    assert members == {"gpu-nvl01": gpu_nodes[:18], "gpu-nvl02": gpu_nodes[18:]}  # one 18-tray NVL72 rack each
    # topology.conf(5): every block holds at least the base size; each further size is a power of two times the prior
    assert all(len(hosts) >= sizes[0] for hosts in members.values())
    assert all(b % a == 0 and (b // a) & (b // a - 1) == 0 and b > a for a, b in itertools.pairwise(sizes))
    assert sizes == [18, 36]
    assert "slurm/topology-block.conf" not in export_slurm(plan_cluster(load_cluster(ROOT / "inventories/onprem-roce/cluster.yaml")))


def test_three_tiers_put_each_pod_above_its_units_and_the_super_spines_above_the_pods() -> None:
    text = export_slurm(plan_cluster(load_cluster(ROOT / "tests/data/plan/three-tier/cluster.yaml")))["slurm/topology.conf"]
    lines = [line for line in text.splitlines() if line.startswith("SwitchName=")]
    assert lines == [
        "SwitchName=su01 Nodes=gpu[01-04]",
        "SwitchName=su02 Nodes=gpu[05-08]",
        "SwitchName=pod01 Switches=su01",
        "SwitchName=pod02 Switches=su02",
        "SwitchName=superspines Switches=pod[01-02]",
    ]


@pytest.mark.slow
def test_slurmctld_takes_the_realmemory_of_the_largest_memory_a_profile_may_declare(tmp_path: Path) -> None:
    """Issue 30: the bound on memory_gb keeps RealMemory a number Slurm reads back as written."""
    text = (ROOT / "tests/data/export/nvl72.yaml").read_text(encoding="utf-8").replace("memory_gb: 960", f"memory_gb: {MAX_MEMORY_GB}")
    files = export_slurm(plan_cluster(parse_cluster(text)[0]))
    assert " RealMemory=63753420 " in files["slurm/nodes.conf"]
    assert SCONTROL is not None
    with _controller(files, tmp_path) as (conf, env):
        _show_topology(conf, env, time.monotonic() + 30)  # the controller is up and has read nodes.conf
        node = subprocess.run([SCONTROL, "show", "node", "gb001"], capture_output=True, text=True, env=env, check=False, timeout=20)
    assert "RealMemory=63753420 " in node.stdout, node.stdout + node.stderr
