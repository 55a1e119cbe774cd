"""``export acceptance``: the Slurm job runs every pair's server and client, round after round; pins.csv carries every
pair's routes; the fabric_check vars make the role's bandwidth runs exactly the planned pairs of a round; the command
prints the pair and cable counts, and a cloud cluster gets nothing."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path

import pytest
import yaml

from fabric.cli import main
from fabric.export.acceptance import export_acceptance
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.plan.acceptance import plan_acceptance
from plugins.filter.gpufabric_checks import bandwidth_runs
from tests.conftest import ROOT

ROCE = ROOT / "inventories/onprem-roce/cluster.yaml"
THREE_TIER = ROOT / "inventories/three-tier/cluster.yaml"


def test_the_slurm_job_serves_then_connects_every_pair_round_by_round() -> None:
    plan = plan_cluster(load_cluster(ROOT / "tests/data/plan/superpod-h100/cluster.yaml"))  # InfiniBand, two rounds
    files = export_acceptance(plan)
    acceptance = plan_acceptance(plan)
    assert acceptance is not None
    assert acceptance.rounds == 2
    script = files["acceptance/acceptance.sbatch"]
    assert script.startswith("#!/bin/bash\n")
    for pair in acceptance.pairs:
        assert re.search(rf"-w {pair.server.node} ib_write_bw -d {pair.server.hca} -p \d+ -b .*> \"\$OUT/{pair.name}.server.txt\"", script)
        assert re.search(
            rf"-w {pair.client.node} ib_write_bw -d {pair.client.hca} -p \d+ -b .* {pair.server.node} > \"\$OUT/{pair.name}.txt\"", script
        )
    assert "-x" not in script, "InfiniBand needs no RoCE GID index"
    assert "$PIN_HOOK install" not in script
    assert script.count("\nwait\n") == acceptance.rounds
    assert files["acceptance/pins.csv"] == "round,pair,device,destination,port\n", "the subnet manager routes InfiniBand: no pins"


def test_pins_csv_lists_every_route_of_every_pair() -> None:
    plan = plan_cluster(load_cluster(THREE_TIER))
    files = export_acceptance(plan)
    acceptance = plan_acceptance(plan)
    assert acceptance is not None
    rows = files["acceptance/pins.csv"].splitlines()[1:]
    assert len(rows) == sum(len(p.pins) for p in acceptance.pairs) == 8 * len(acceptance.pairs)  # 4 hops, both ways
    assert '[ -z "$PIN_HOOK" ] || $PIN_HOOK install 1' in files["acceptance/acceptance.sbatch"]
    data = json.loads(files["acceptance/plan.json"])
    assert (data["pairs"], data["links"], data["lower_bound"]) == (16, 64, 16)
    assert data["summary"].startswith("16 pairs cover 64 of 64 fabric cables")


def test_the_fabric_check_vars_make_the_roles_runs_the_planned_pairs() -> None:
    plan = plan_cluster(load_cluster(ROCE))
    files = export_acceptance(plan)
    pairs = yaml.safe_load(files["acceptance/fabric_check.yml"])["fabric_check_acceptance_pairs"]
    acceptance = plan_acceptance(plan)
    assert acceptance is not None
    assert len(pairs) == len(acceptance.pairs)
    interfaces = {n.hostname: [asdict(i) for i in n.interfaces] for n in plan.nodes}
    hosts = sorted(interfaces)
    gids = {h: {i["name"]: 3 for i in interfaces[h]} for h in hosts}
    runs = {h: bandwidth_runs(interfaces[h], hosts, h, gid_index=gids[h], pairs=pairs, round_=1) for h in hosts}
    for pair in (p for p in pairs if p["round"] == 1):
        server = [r for r in runs[pair["server"]] if r["pair"] == pair["name"]]
        client = [r for r in runs[pair["client"]] if r["pair"] == pair["name"]]
        assert [(r["role"], r["peer"], r["interface"]) for r in server] == [("server", pair["client"], pair["server_interface"])]
        assert [(r["role"], r["peer"], r["interface"]) for r in client] == [("client", pair["server"], pair["client_interface"])]
        assert server[0]["args"][:4] == ["-d", server[0]["hca"], "-p", str(pair["port"])]
    # without pairs the role pairs hosts in sorted order, as before
    assert all("pair" not in r for r in bandwidth_runs(interfaces[hosts[0]], hosts, hosts[0], gid_index=gids[hosts[0]]))


def test_the_command_prints_pairs_against_cables_and_a_cloud_cluster_gets_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "acceptance", str(THREE_TIER), "-o", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "16 pairs cover 64 of 64 fabric cables (lower bound 16 pairs)" in out
    assert (tmp_path / "out/acceptance/acceptance.sbatch").is_file()
    assert main(["export", "acceptance", str(ROOT / "inventories/aws-p5/cluster.yaml"), "-o", str(tmp_path / "cloud")]) == 0
    assert "nothing to export" in capsys.readouterr().out
