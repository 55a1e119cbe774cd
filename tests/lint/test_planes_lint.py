"""lint across compute planes: a cable or a config line that joins two planes is a finding; the rendered fabric is clean."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from fabric.cli import main
from fabric.lint.planes import lint_planes, plane_addresses
from fabric.model import load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from fabric.render import render_cabling, render_configs
from tests.conftest import ROOT

TWO_PLANE = ROOT / "inventories" / "two-plane" / "cluster.yaml"


@cache
def plan() -> ClusterPlan:
    return plan_cluster(load_cluster(TWO_PLANE))


@cache
def configs() -> dict[str, str | None]:
    files = render_configs(plan())
    assert plan().fabric is not None
    return {s.name: files[f"switches/{s.name}/frr.conf"] for s in plan().fabric.switches}  # type: ignore[union-attr]


def test_the_rendered_two_plane_fabric_is_clean() -> None:
    assert lint_planes(plan(), configs(), render_cabling(plan())) == []


def test_a_node_port_cabled_into_the_other_plane_is_found() -> None:
    cabling = render_cabling(plan())
    # gpu01's first cable: port 1 of its first card (plane 1) - swap in port 2 of the same card (plane 2)
    crossed = cabling.replace("p1-leaf-su01-r1,Ethernet0,gpu01,enp24s0f0np0", "p1-leaf-su01-r1,Ethernet0,gpu01,enp24s0f1np1", 1)
    assert crossed != cabling
    (finding,) = lint_planes(plan(), configs(), crossed)
    assert finding.device == "p1-leaf-su01-r1"
    assert "gpu01 enp24s0f1np1 in plane 2" in finding.actual


def test_a_leaf_cabled_to_the_other_planes_spine_is_found() -> None:
    cabling = render_cabling(plan())
    line = next(x for x in cabling.splitlines() if x.startswith("p1-leaf-su01-r1,") and ",p1-spine01," in x)
    crossed = cabling.replace(line, line.replace(",p1-spine01,", ",p2-spine01,"), 1)
    (finding,) = lint_planes(plan(), configs(), crossed)
    assert "p2-spine01" in finding.where
    assert "joins two compute planes" in finding.message


def test_a_bgp_neighbour_in_the_other_plane_is_found() -> None:
    owner = plane_addresses(plan())
    theirs = next(a for a, p in owner.items() if p == 2)
    text = configs()["p1-leaf-su01-r1"]
    assert text is not None
    edited = {**configs(), "p1-leaf-su01-r1": text + f" neighbor {theirs} peer-group FABRIC\n"}
    (finding,) = lint_planes(plan(), edited, render_cabling(plan()))
    assert finding.device == "p1-leaf-su01-r1"
    assert theirs in finding.actual
    assert "(plane 2)" in finding.actual


def test_a_one_plane_fabric_has_nothing_to_check() -> None:
    one = plan_cluster(load_cluster(ROOT / "inventories" / "onprem-roce" / "cluster.yaml"))
    assert lint_planes(one, {}, "device,port,peer_device,peer_port\np1-x,a,p2-y,b\n") == []


def test_the_lint_command_reports_a_crossed_cable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["render", str(TWO_PLANE), "-o", str(out)]) == 0
    assert main(["lint", str(TWO_PLANE), "--configs", str(out)]) == 0
    cabling = out / "cabling.csv"
    text = cabling.read_text(encoding="utf-8")
    cabling.chmod(0o644)
    cabling.write_text(text.replace("gpu01,enp24s0f0np0", "gpu01,enp24s0f1np1", 1), encoding="utf-8")
    capsys.readouterr()
    assert main(["lint", str(TWO_PLANE), "--configs", str(out)]) == 1
    assert "joins two compute planes" in capsys.readouterr().err
