"""``export nccl`` on the clouds: the variables each provider documents for the group's instance type (sources in
``fabric/plan/cloud/nccl.py`` and docs/workload.md), and the linter holding the variables that carry the contract."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fabric.export import export_nccl
from fabric.lint.nccl import lint_nccl, parse_env
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.plan.types import ClusterPlan
from tests.conftest import ROOT


def plan_of(example: str) -> ClusterPlan:
    return plan_cluster(load_cluster(ROOT / "inventories" / example / "cluster.yaml"))


def exported(plan: ClusterPlan) -> dict[str, str]:
    return {k[5:-4]: v for k, v in export_nccl(plan).items()}


def test_a3_mega_gets_googles_tcpxo_settings_on_its_eight_gpu_nics() -> None:
    env = parse_env(export_nccl(plan_of("gcp-a3mega"))["nccl/gpu.env"])
    assert env["NCCL_FASTRAK_IFNAME"].split(",") == ["enp6s0", "enp7s0", "enp13s0", "enp14s0", "enp134s0", "enp135s0", "enp141s0", "enp142s0"]
    assert (env["NCCL_FASTRAK_CTRL_DEV"], env["NCCL_SOCKET_IFNAME"]) == ("enp0s12", "enp0s12")
    assert env["NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY"] == "/dev/aperture_devices"
    assert env["NCCL_TUNER_CONFIG_PATH"] == "/var/lib/tcpxo/lib64/a3plus_tuner_config.textproto"
    assert "NCCL_NET" not in env  # the FasTrak plugin is NCCL's only net plugin on these nodes
    assert "CUDA_VISIBLE_DEVICES" not in env  # the scheduler's to assign, not the fabric's


def test_a3_ultra_gets_gib_and_the_traffic_classes_of_googles_rdma_network() -> None:
    env = parse_env(export_nccl(plan_of("gcp-a3ultra"))["nccl/gpu.env"])
    assert env["NCCL_NET"] == "gIB"
    assert (env["NCCL_IB_TC"], env["NCCL_IB_FIFO_TC"], env["NCCL_IB_GID_INDEX"]) == ("52", "84", "3")
    assert env["NCCL_TUNER_CONFIG_PATH"] == "/usr/local/gib/configs/tuner_config_a3u.txtpb"
    assert sorted(export_nccl(plan_of("gcp-a3ultra"))) == ["nccl/gpu.env"]  # the login group has no GPU fabric


def test_every_cloud_examples_export_lints_clean() -> None:
    for example in ("aws-p5", "gcp-a3mega", "gcp-a3ultra", "azure-ndv5"):
        plan = plan_of(example)
        assert lint_nccl(plan, exported(plan)) == [], example


def test_lint_names_a_changed_contract_variable_and_leaves_tuning_alone() -> None:
    plan = plan_of("gcp-a3ultra")
    text = exported(plan)["gpu"]
    assert lint_nccl(plan, {"gpu": text.replace("NCCL_P2P_NET_CHUNKSIZE=131072", "NCCL_P2P_NET_CHUNKSIZE=262144")}) == []
    findings = lint_nccl(plan, {"gpu": text.replace("NCCL_NET=gIB\n", "").replace("NCCL_IB_FIFO_TC=84", "NCCL_IB_FIFO_TC=106")})
    assert [(f.where, f.expected, f.actual) for f in findings] == [("NCCL_NET", "gIB", "unset"), ("NCCL_IB_FIFO_TC", "84", "106")]

    mega = plan_of("gcp-a3mega")
    seven = exported(mega)["gpu"].replace(",enp142s0", "")
    [finding] = lint_nccl(mega, {"gpu": seven})
    assert (finding.where, finding.actual.count(",")) == ("NCCL_FASTRAK_IFNAME", 6)

    aws = plan_of("aws-p5")
    [provider] = lint_nccl(aws, {"gpu": exported(aws)["gpu"].replace("FI_PROVIDER=efa", "FI_PROVIDER=tcp")})
    assert str(provider) == "nccl/gpu.env: FI_PROVIDER: the efa stack needs the value its provider documents (expected efa, found tcp)"
    [login] = lint_nccl(aws, {"login": "FI_PROVIDER=efa\n"})
    assert (login.where, login.expected) == ("group", "one of ['gpu']")


def test_lint_cli_checks_a_cloud_clusters_nccl_file(tmp_path: Path) -> None:
    definition = ROOT / "inventories/gcp-a3ultra/cluster.yaml"

    def fabric(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "fabric", *args], capture_output=True, text=True, cwd=ROOT, check=False)

    assert fabric("export", "nccl", str(definition), "-o", str(tmp_path)).returncode == 0
    assert fabric("lint", str(definition), "--configs", str(tmp_path)).returncode == 0
    env = tmp_path / "nccl" / "gpu.env"
    env.write_text(env.read_text(encoding="utf-8").replace("NCCL_IB_TC=52", "NCCL_IB_TC=106"), encoding="utf-8")
    result = fabric("lint", str(definition), "--configs", str(tmp_path))
    assert result.returncode == 1
    assert "nccl/gpu.env: NCCL_IB_TC: the gib stack needs the value its provider documents (expected 52, found 106)" in result.stderr
