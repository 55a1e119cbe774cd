"""roles/nccl_env's own Jinja on a multi-plane node, without a container: the preflight takes the inventory's
NCCL_IB_HCA with its rail and plane fields, the block it writes is export nccl's variables line for line, and the
read-back names a line above the block that gives NCCL the HCAs without their planes (tests/roles/test_nccl_env.py
boots nodes for the single-plane file)."""

from __future__ import annotations

import base64
from typing import Any

from fabric.export import export_nccl
from fabric.lint.nccl import parse_env
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from tests.conftest import ROOT
from tests.roles.role_logic import load, render, task
from tests.roles.scenario import host_vars, site

READ_BACK = "Verify | NCCL gets every planned value (the first line of a key is the one it applies)"


def variables() -> dict[str, Any]:
    host = host_vars(site("two-plane"), "gpu01")
    return {**load(ROOT / "roles" / "nccl_env" / "defaults" / "main.yml"), **host}  # the role has no vars/


def planned() -> dict[str, str]:
    return parse_env(export_nccl(plan_cluster(load_cluster(site("two-plane"))))["nccl/gpu.env"])


def test_the_inventory_carries_export_nccls_multi_plane_settings() -> None:
    env = variables()["gpufabric_nccl_env"]
    assert env == planned()
    assert env["NCCL_IB_HCA"].startswith("=mlx5_0:1:1:1,mlx5_1:1:1:2,")


def test_the_preflight_takes_the_rail_and_plane_fields() -> None:
    preflight = task("nccl_env", "main.yml", "Preflight | NCCL variables")
    checks = [render("{{ " + that + " }}", variables()) for that in preflight["ansible.builtin.assert"]["that"]]
    assert checks == [True] * len(checks)


def block_lines() -> list[str]:
    configure = task("nccl_env", "main.yml", "Configure | the group's NCCL settings")
    return str(render(configure["ansible.builtin.blockinfile"]["block"], variables())).splitlines()


def test_the_block_is_export_nccls_file_line_for_line() -> None:
    assert block_lines() == [f"{k}={v}" for k, v in planned().items()]


def mismatch(conf: str) -> list[str]:
    verify = task("nccl_env", "main.yml", READ_BACK)
    content = base64.b64encode(conf.encode()).decode()
    found = render(verify["vars"]["_mismatch"], {**variables(), "__nccl_env_file": {"content": content}})
    return list(found)


def test_the_read_back_names_hcas_set_above_the_block_without_their_planes() -> None:
    block = "\n".join(["# BEGIN gpufabric nccl_env", *block_lines(), "# END gpufabric nccl_env"]) + "\n"
    assert mismatch(block + "NCCL_IB_HCA=mlx5\n") == []  # below the block: NCCL applies the block's line first
    plain = "NCCL_IB_HCA==" + ",".join(f"mlx5_{n}:1" for n in range(16))
    [problem] = mismatch(plain + "\n" + block)
    assert problem.startswith(f"NCCL_IB_HCA={plain.split('=', 1)[1]} where the plan has =mlx5_0:1:1:1,")
