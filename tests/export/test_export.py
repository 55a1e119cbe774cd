"""Fabric to workload: golden exports for every example, the NCCL values the contract implies, and the linter
catching an NCCL file that disagrees with the contract."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fabric.export import export_k8s, export_nccl, export_slurm
from fabric.export.slurm import hostlist
from fabric.export.telemetry import export_telemetry
from fabric.lint.nccl import lint_nccl, parse_env
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.plan.types import ClusterPlan
from tests.conftest import DATA, EXAMPLES, ROOT, check_golden


def plan_of(name: str) -> ClusterPlan:
    return plan_cluster(load_cluster(ROOT / "inventories" / name / "cluster.yaml"))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.parent.name)
def test_exports_match_golden(example: Path, update_golden: bool) -> None:
    plan = plan_cluster(load_cluster(example))
    files = {**export_k8s(plan), **export_nccl(plan), **export_slurm(plan), **export_telemetry(plan)}
    golden = DATA / example.parent.name / "golden" / "export"
    for relative, text in files.items():
        check_golden(golden / relative, text, update_golden)
    if not update_golden:  # no stale golden file outlives what the exporters write
        on_disk = {str(p.relative_to(golden)) for p in golden.rglob("*") if p.is_file()} if golden.exists() else set()
        assert on_disk == set(files)


def test_roce_nccl_env_follows_the_contract_and_the_rails() -> None:
    plan = plan_of("onprem-roce")
    env = parse_env(export_nccl(plan)["nccl/gpu.env"])
    node = plan.nodes[0]
    rails = sorted((i.rail or 0, i.hca) for i in node.interfaces if i.plane == "compute")
    assert env["NCCL_IB_HCA"] == "=" + ",".join(f"{hca}:1" for _, hca in rails)
    assert int(env["NCCL_IB_TC"]) >> 2 == plan.roce.dscp == 26  # ToS 106 = DSCP 26 << 2 | ECT(0)
    assert env["NCCL_IB_GID_INDEX"] == "3"
    assert env["NCCL_CROSS_NIC"] == "0"  # rail-optimized
    assert env["NCCL_SOCKET_IFNAME"] == "=" + next(i.name for i in node.interfaces if i.plane == "inband")
    assert "NCCL_IB_SL" not in env


def test_infiniband_nccl_env_sets_the_service_level_and_no_roce_settings() -> None:
    env = parse_env(export_nccl(plan_of("onprem-ib"))["nccl/gpu.env"])
    assert env["NCCL_IB_SL"] == "0"
    assert "NCCL_IB_TC" not in env
    assert "NCCL_IB_GID_INDEX" not in env


def test_an_explicit_tos_is_what_nccl_gets(tmp_path: Path) -> None:
    definition = tmp_path / "cluster.yaml"
    text = (ROOT / "inventories/onprem-roce/cluster.yaml").read_text(encoding="utf-8")
    definition.write_text(text.replace("  dscp: 26\n", "  dscp: 26\n  tos: 105\n", 1), encoding="utf-8")
    plan = plan_cluster(load_cluster(definition))
    assert parse_env(export_nccl(plan)["nccl/gpu.env"])["NCCL_IB_TC"] == "105"
    assert lint_nccl(plan, {"gpu": export_nccl(plan)["nccl/gpu.env"]}) == []


def test_lint_is_clean_on_what_export_writes() -> None:
    for name in ("onprem-roce", "onprem-ib"):
        plan = plan_of(name)
        assert lint_nccl(plan, {k[5:-4]: v for k, v in export_nccl(plan).items()}) == []


def test_lint_catches_a_traffic_class_that_is_not_the_dscp() -> None:
    plan = plan_of("onprem-roce")
    text = export_nccl(plan)["nccl/gpu.env"].replace("NCCL_IB_TC=106", "NCCL_IB_TC=96")
    assert [str(f) for f in lint_nccl(plan, {"gpu": text})] == [
        "nccl/gpu.env: NCCL_IB_TC: NCCL_IB_TC must carry the RoCE DSCP in its upper six bits (ToS = DSCP << 2) (expected 106 (DSCP 26), found 96)"
    ]


def test_lint_catches_a_gid_index_that_is_not_the_roce_v2_one() -> None:
    plan = plan_of("onprem-roce")
    text = export_nccl(plan)["nccl/gpu.env"]
    assert [f.actual for f in lint_nccl(plan, {"gpu": text.replace("NCCL_IB_GID_INDEX=3", "NCCL_IB_GID_INDEX=1")})] == ["1"]
    assert lint_nccl(plan, {"gpu": text.replace("NCCL_IB_GID_INDEX=3\n", "")}) == []  # unset: NCCL picks the RoCE v2 GID


def test_lint_catches_hcas_out_of_rail_order() -> None:
    plan = plan_of("onprem-roce")
    text = export_nccl(plan)["nccl/gpu.env"].replace("=mlx5_0:1,mlx5_3:1,", "=mlx5_3:1,mlx5_0:1,")
    findings = lint_nccl(plan, {"gpu": text})
    assert [(f.where, f.actual.split(",")[:2]) for f in findings] == [("NCCL_IB_HCA", ["mlx5_3", "mlx5_0"])]


def test_lint_cli_reads_the_exported_nccl_file_and_exits_1_on_a_finding(tmp_path: Path) -> None:
    definition = ROOT / "inventories/onprem-roce/cluster.yaml"

    def fabric(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "fabric", *args], capture_output=True, text=True, cwd=ROOT, check=False)

    assert fabric("render", str(definition), "-o", str(tmp_path)).returncode == 0
    assert fabric("export", "nccl", str(definition), "-o", str(tmp_path)).returncode == 0
    assert fabric("lint", str(definition), "--configs", str(tmp_path)).returncode == 0
    env = tmp_path / "nccl" / "gpu.env"
    env.write_text(env.read_text(encoding="utf-8").replace("NCCL_IB_TC=106", "NCCL_IB_TC=104\nNCCL_IB_TC=40"), encoding="utf-8")
    result = fabric("lint", str(definition), "--configs", str(tmp_path))
    assert result.returncode == 1
    assert "nccl/gpu.env: NCCL_IB_TC:" in result.stderr
    assert "found 40" in result.stderr


def test_export_of_an_invalid_definition_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "fabric", "export", "slurm", str(bad), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 2
    assert not (tmp_path / "out").exists()


def test_cloud_nccl_env_is_the_providers_fabric_settings() -> None:
    aws = parse_env(export_nccl(plan_of("aws-p5"))["nccl/gpu.env"])
    assert aws == {"FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1", "RDMAV_FORK_SAFE": "1"}
    azure = parse_env(export_nccl(plan_of("azure-ndv5"))["nccl/gpu.env"])
    assert azure["NCCL_TOPO_FILE"] == "/opt/microsoft/ndv5-topo.xml"
    assert parse_env(export_nccl(plan_of("gcp-a3mega"))["nccl/gpu.env"])["NCCL_FASTRAK_CTRL_DEV"] == "enp0s12"  # tests/export/test_nccl_cloud.py


def test_hostlist_compresses_runs_per_prefix_and_width() -> None:
    assert hostlist(["dgx10", "dgx09", "dgx11", "p5-01", "p5-03", "node1"]) == "dgx[09-11],node1,p5-[01,03]"
