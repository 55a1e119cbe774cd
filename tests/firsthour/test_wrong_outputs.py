"""Issue 32, wrong outputs a newcomer met (audit newcomer.md F2, F7, F14): NCCL on a bonded in-band port, a GPU group
with no in-band port, and switch counts that leave tiers out."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.errors import InputError
from fabric.export import export_nccl, export_slurm
from fabric.inventory import onprem_host_vars
from fabric.lint.nccl import parse_env
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.reports.console import summary_line
from fabric.reports.html import build_report
from fabric.validate import validate_file
from tests.conftest import ROOT

# The flagship example's node with a second in-band port: attach mlag bonds both (bond-inband), as the storage ports.
TWO_INBAND = """
hardware:
  dgx-two-inband:
    description: DGX H100 with two in-band ports
    gpus: 8
    gpu_model: H100-SXM5-80GB
    ports:
      compute: {speed_gbps: 400, pci_buses: [24, 64, 79, 94, 154, 192, 206, 220],
                hcas: [mlx5_0, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_9, mlx5_10, mlx5_11]}
      storage: {speed_gbps: 200, names: [enp170s0f0np0, enp41s0f0np0], hcas: [mlx5_7, mlx5_1]}
      INBAND
      oob: {speed_gbps: 1, names: [bmc]}
"""


def _definition(tmp_path: Path, inband: str) -> Path:
    text = (ROOT / "inventories/onprem-roce/cluster.yaml").read_text(encoding="utf-8").replace("hardware: dgx-h100}", "hardware: dgx-two-inband}")
    path = tmp_path / "cluster.yaml"
    path.write_text(text + TWO_INBAND.replace("INBAND", inband), encoding="utf-8")
    return path


def test_nccl_socket_interface_is_the_bond_when_the_inband_ports_are_bonded(tmp_path: Path) -> None:
    plan = plan_cluster(load_cluster(_definition(tmp_path, "inband: {speed_gbps: 200, names: [eno1np0, eno2np1]}")))
    env = parse_env(export_nccl(plan)["nccl/gpu.env"])
    assert env["NCCL_SOCKET_IFNAME"] == "=bond-inband"  # not "=eno1np0", a bond member with no address
    host = onprem_host_vars(plan)["gpu001"]
    assert host["gpufabric_nccl_env"]["NCCL_SOCKET_IFNAME"] == "=bond-inband"  # what roles/nccl_env writes
    bond = next(b for b in host["gpufabric_bonds"] if b["name"] == "bond-inband")
    assert bond["members"] == ["eno1np0", "eno2np1"]
    assert bond["address"]
    assert host["ansible_host"] == bond["address"].split("/")[0]


def test_one_inband_port_stays_the_socket_interface() -> None:
    plan = plan_cluster(load_cluster(ROOT / "inventories/onprem-roce/cluster.yaml"))
    assert parse_env(export_nccl(plan)["nccl/gpu.env"])["NCCL_SOCKET_IFNAME"] == "=enp170s0f1np1"


def test_a_gpu_group_without_an_inband_port_is_refused_naming_the_group_and_the_fix(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        validate_file(_definition(tmp_path, ""))
    [finding] = caught.value.errors
    assert finding.dotted_path == "nodes[0].hardware"
    assert "group 'gpu'" in finding.message
    assert "no in-band port" in finding.message
    assert "add an inband entry to its ports" in finding.message


def test_every_example_gpu_node_has_an_address_nccl_and_slurm_can_use() -> None:
    for example in sorted((ROOT / "inventories").glob("*/cluster.yaml")):
        plan = plan_cluster(load_cluster(example))
        if plan.target != "onprem":
            continue
        nodes_conf = "".join(export_slurm(plan).values())
        for node in plan.nodes:
            if node.gpus:
                assert f"NodeName={node.hostname} NodeAddr=" in nodes_conf, (example, node.hostname)


def test_summary_and_report_count_every_tier() -> None:
    validated = validate_file(ROOT / "inventories/onprem-roce/cluster.yaml")
    plan = validated.plan
    assert plan.fabric is not None
    assert plan.oob is not None
    total = len(plan.fabric.switches) + sum(len(n.switches) for n in plan.storage) + len(plan.oob.switches)
    compute, storage, oob = len(plan.fabric.switches), sum(len(n.switches) for n in plan.storage), len(plan.oob.switches)
    assert summary_line(plan).endswith(f"{total} switches (compute {compute}, storage {storage}, oob {oob})")
    assert f"clean: {total} rendered switch configs" in build_report(plan, validated.warnings).html
