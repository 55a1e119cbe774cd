"""NCCL on a multi-plane fabric (fabric.plan.nccl): each design's facts, the exported file's text, lint's findings on a
hand-edited file, and what is refused with the reason. Sources of each setting: the comments in fabric/plan/nccl.py and
docs/definition/planes.md ("NCCL on several planes")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from fabric.cli import main
from fabric.errors import InputError
from fabric.export import export_nccl
from fabric.lint.nccl import lint_nccl, parse_env
from fabric.model import ClusterSpec, load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from fabric.plan.nccl import nccl_env, nccl_groups
from fabric.plan.serialize import plan_to_json
from tests.conftest import ROOT

TWO_PLANE = ROOT / "inventories" / "two-plane" / "cluster.yaml"
PROFILE = "hgx-h200-8x2x200"


def definition(**fabric: Any) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(TWO_PLANE.read_text(encoding="utf-8"))
    data["fabric"].update(fabric)
    return data


def plan_of(data: dict[str, Any]) -> ClusterPlan:
    return plan_cluster(ClusterSpec.model_validate(data))


def env_of(data: dict[str, Any]) -> dict[str, str]:
    plan = plan_of(data)
    (group,) = nccl_groups(plan)
    return nccl_env(plan, group)


def entries(env: dict[str, str]) -> list[str]:
    return env["NCCL_IB_HCA"].removeprefix("=").split(",")


def single_plane() -> dict[str, Any]:
    """The same nodes on one plane: 16 single ports, 16 rails."""
    data = definition(planes=1)
    data["hardware"][PROFILE]["ports"]["compute"].pop("ports_per_nic")
    return data


def test_port_split_tags_each_port_with_its_nics_rail_and_its_plane() -> None:
    env = env_of(definition())
    # NIC n's port 1 is rail n+1 of plane 1, its port 2 rail n+1 of plane 2: one rail id per NIC, one plane per port
    assert entries(env)[:4] == ["mlx5_0:1:1:1", "mlx5_1:1:1:2", "mlx5_2:1:2:1", "mlx5_3:1:2:2"]
    assert len(entries(env)) == 16
    assert env["NCCL_CROSS_NIC"] == "0"
    assert "NCCL_IB_MERGE_NICS" not in env  # NCCL's default (1) is as right as 0: not set, not linted
    assert "NCCL_NET_PLUGIN" not in env  # the Spectrum-X plugin needs HPC-X, which no role installs


def test_nic_split_puts_whole_nics_on_one_plane_and_numbers_rails_per_plane() -> None:
    data = definition(plane_split="nic")
    data["hardware"][PROFILE]["ports"]["compute"]["ports_per_nic"] = 1  # 16 single-port NICs, NIC n on plane n % 2 + 1
    env = env_of(data)
    assert entries(env)[:4] == ["mlx5_0:1:1:1", "mlx5_1:1:1:2", "mlx5_2:1:2:1", "mlx5_3:1:2:2"]
    planes = {e.split(":")[0]: e.rsplit(":", 1)[1] for e in entries(env)}
    assert {h for h, p in planes.items() if p == "1"} == {f"mlx5_{n}" for n in range(0, 16, 2)}
    assert env["NCCL_CROSS_NIC"] == "0"


def test_a_multi_plane_fat_tree_gets_no_rail_id_but_still_its_plane_and_cross_nic_0() -> None:
    data = definition(topology="fat-tree")
    env = env_of(data)
    assert entries(env)[:2] == ["mlx5_0:1::1", "mlx5_1:1::2"]  # an empty rail field keeps the plane in its position
    assert env["NCCL_CROSS_NIC"] == "0"  # NCCL's default 2 may pair ports of two planes, which no route joins


def test_one_plane_keeps_the_plain_form() -> None:
    env = env_of(single_plane())
    assert entries(env)[:2] == ["mlx5_0:1", "mlx5_1:1"]
    assert env["NCCL_CROSS_NIC"] == "0"  # rail-optimized, as before
    fat_tree = single_plane()
    fat_tree["fabric"]["topology"] = "fat-tree"
    assert "NCCL_CROSS_NIC" not in env_of(fat_tree)  # one plane, no rails: NCCL's own default, as before


def test_spectrum_x_swplb_is_the_port_split_form() -> None:
    data = definition(spectrum_x={"nic_type": "1023", "multiplane_mode": "swplb"})
    assert env_of(data) == env_of(definition())
    assert plan_of(data).spectrum_x_multiplane == "swplb"


def test_spectrum_x_hwplb_is_refused_naming_the_field_and_the_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = definition(spectrum_x={"nic_type": "1023", "multiplane_mode": "hwplb"})
    plan = plan_of(data)  # planning itself is fine: the Network Operator export still takes hwplb
    with pytest.raises(InputError) as caught:
        nccl_groups(plan)
    (finding,) = caught.value.findings
    assert finding.dotted_path == "fabric.spectrum_x.multiplane_mode"
    assert "NIC LAG" in finding.message
    assert finding.message.endswith("use multiplane_mode: swplb")
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert main(["export", "nccl", str(path), "-o", str(tmp_path / "out")]) == 2
    assert f"{path}: error: fabric.spectrum_x.multiplane_mode: hwplb bonds" in " ".join(capsys.readouterr().err.split())
    assert not (tmp_path / "out").exists()  # nothing written
    one = definition(planes=1, spectrum_x={"nic_type": "1023", "multiplane_mode": "hwplb"})
    one["hardware"][PROFILE]["ports"]["compute"].pop("ports_per_nic")
    assert plan_of(one).spectrum_x_multiplane is None  # one plane is multiplaneMode none: nothing to refuse
    assert nccl_groups(plan_of(one))


def test_spectrum_x_multiplane_with_whole_nics_per_plane_is_refused_in_the_definition() -> None:
    data = definition(plane_split="nic", spectrum_x={"nic_type": "1023"})
    data["hardware"][PROFILE]["ports"]["compute"]["ports_per_nic"] = 1
    with pytest.raises(ValidationError) as caught:
        ClusterSpec.model_validate(data)
    assert "splits each SuperNIC's ports across the planes" in str(caught.value)
    assert "use plane_split: port" in str(caught.value)


def test_the_mode_stays_out_of_plan_json() -> None:
    plain = plan_to_json(plan_of(definition()))
    assert plan_to_json(plan_of(definition(spectrum_x={"nic_type": "1023"}))) == plain
    assert "spectrum_x_multiplane" not in plain


def test_the_exported_file_says_what_the_fields_are_and_which_releases_read_them() -> None:
    text = export_nccl(plan_cluster(load_cluster(TWO_PLANE)))["nccl/gpu.env"]
    lines = text.splitlines()
    assert lines[3].startswith("# compute planes (never joined): p1=mlx5_0,mlx5_2,")
    assert lines[4] == (
        "# NCCL_IB_HCA <hca>:<port>:<rail>:<plane>: NCCL >= 2.30.7 never joins two planes and keeps a ring on one rail; "
        "older releases read <hca>:<port> and ignore the rest"
    )
    assert "NCCL_IB_HCA==mlx5_0:1:1:1,mlx5_1:1:1:2,mlx5_2:1:2:1," in text
    single = export_nccl(plan_cluster(load_cluster(ROOT / "inventories" / "onprem-roce" / "cluster.yaml")))["nccl/gpu.env"]
    assert "<rail>" not in single
    assert "NCCL_IB_HCA==mlx5_0:1,mlx5_3:1," in single


def lint(text: str) -> list[str]:
    return [str(f) for f in lint_nccl(plan_cluster(load_cluster(TWO_PLANE)), {"gpu": text})]


def exported() -> str:
    return export_nccl(plan_cluster(load_cluster(TWO_PLANE)))["nccl/gpu.env"]


def test_lint_takes_the_exported_file_and_the_older_form_without_fields() -> None:
    assert lint(exported()) == []
    older = exported().replace(parse_env(exported())["NCCL_IB_HCA"], "=" + ",".join(f"mlx5_{n}:1" for n in range(16)))
    assert "mlx5_15:1\n" in older
    assert lint(older) == []  # no rail or plane: NCCL before 2.30.7 reads it the same, and it contradicts nothing


def test_lint_names_a_plane_field_that_contradicts_the_planes_and_the_fix() -> None:
    swapped = exported().replace("mlx5_0:1:1:1,mlx5_1:1:1:2,", "mlx5_0:1:1:2,mlx5_1:1:1:1,")
    assert lint(swapped) == [
        "nccl/gpu.env: NCCL_IB_HCA: NCCL_IB_HCA must give each HCA its own rail and plane (<hca>:<port>:<rail>:<plane>), "
        "or none; fix the entries named (expected mlx5_0:1:1:1,mlx5_1:1:1:2, found mlx5_0:1:1:2,mlx5_1:1:1:1)"
    ]
    wrong_rail = exported().replace("mlx5_5:1:3:2", "mlx5_5:1:4:2")
    assert [f.actual for f in lint_nccl(plan_cluster(load_cluster(TWO_PLANE)), {"gpu": wrong_rail})] == ["mlx5_5:1:4:2"]


@pytest.mark.parametrize(("line", "found"), [("NCCL_CROSS_NIC=2", "2"), ("NCCL_CROSS_NIC=1", "1"), ("", "unset (NCCL's default 2)")])
def test_lint_names_a_cross_nic_that_lets_a_ring_cross_planes(line: str, found: str) -> None:
    text = exported().replace("NCCL_CROSS_NIC=0", line)
    (finding,) = lint_nccl(plan_cluster(load_cluster(TWO_PLANE)), {"gpu": text})
    assert (finding.where, finding.expected, finding.actual) == ("NCCL_CROSS_NIC", "0", found)
    assert "set NCCL_CROSS_NIC=0" in finding.message


def test_lint_leaves_cross_nic_alone_on_one_plane() -> None:
    plan = plan_cluster(load_cluster(ROOT / "inventories" / "onprem-roce" / "cluster.yaml"))
    text = export_nccl(plan)["nccl/gpu.env"].replace("NCCL_CROSS_NIC=0", "NCCL_CROSS_NIC=2")
    assert lint_nccl(plan, {"gpu": text}) == []  # unchanged single-plane behaviour
