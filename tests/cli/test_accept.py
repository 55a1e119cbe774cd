"""``accept localise``: reads each pair's ib_write_bw result, writes the follow-up pairs that split the suspects, and
on the next run names the one slow cable; exit 0 when nothing is slow, 1 when something is, 2 on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from fabric.cli import main
from fabric.model import ClusterSpec
from fabric.plan import plan_cluster
from fabric.plan.acceptance import follow_up, plan_acceptance
from fabric.plan.acceptance_localise import localise
from tests.conftest import ROOT

HEADER = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"


def _definition(tmp_path: Path) -> Path:
    """The lab with one node per leaf: 4 leaves, 2 spines."""
    data = yaml.safe_load((ROOT / "inventories/lab/cluster.yaml").read_text(encoding="utf-8"))
    data["fabric"]["host_ports_per_leaf"] = 1
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _results(directory: Path, gbps: dict[str, float]) -> None:
    directory.mkdir(exist_ok=True)
    for name, value in gbps.items():
        (directory / f"{name}.txt").write_text(
            f"{HEADER} 65536      227456         0.00               {value:.2f}             0.758234\n", encoding="utf-8"
        )


def test_a_slow_cable_is_named_after_the_follow_up_round(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    definition = _definition(tmp_path)
    plan = plan_cluster(ClusterSpec.model_validate(yaml.safe_load(definition.read_text(encoding="utf-8"))))
    acceptance = plan_acceptance(plan)
    assert acceptance is not None
    bad = acceptance.pairs[0].links[0]
    speed = lambda pairs: {p.name: 40.0 if bad in p.crossed else 390.0 for p in pairs}  # noqa: E731
    results = tmp_path / "out"
    _results(results, speed(acceptance.pairs))
    assert main(["accept", "localise", str(definition), str(results), "-o", str(tmp_path / "next"), "--json"]) == 1
    first = json.loads(capsys.readouterr().out)
    assert first["named"] == []
    assert first["follow_up"]
    written = json.loads((tmp_path / "next/acceptance/plan.json").read_text(encoding="utf-8"))
    assert [t["name"] for t in written["tests"]] == first["follow_up"]
    round_one = localise(acceptance.pairs, speed(acceptance.pairs))
    _results(results, speed(follow_up(plan, acceptance, round_one.suspects, round_one.proven)))
    assert main(["accept", "localise", str(definition), str(results)]) == 1
    out = capsys.readouterr().out
    assert f"cable {bad}: the only suspect of a slow pair" in out


def test_no_slow_pair_exits_0_and_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    definition = _definition(tmp_path)
    plan = plan_cluster(ClusterSpec.model_validate(yaml.safe_load(definition.read_text(encoding="utf-8"))))
    acceptance = plan_acceptance(plan)
    assert acceptance is not None
    _results(tmp_path / "ok", {p.name: 390.0 for p in acceptance.pairs})
    assert main(["accept", "localise", str(definition), str(tmp_path / "ok")]) == 0
    assert "4 pairs measured, 0 slow" in capsys.readouterr().out
    assert main(["accept", "localise", str(definition), str(tmp_path / "absent")]) == 2
    assert "no such results directory" in capsys.readouterr().err
    (tmp_path / "ok" / f"{acceptance.pairs[0].name}.txt").write_text("Couldn't connect to node3:18515\n", encoding="utf-8")
    assert main(["accept", "localise", str(definition), str(tmp_path / "ok")]) == 2
    assert "no ib_write_bw result line" in capsys.readouterr().err
