"""The diagnosis: each planted fault named exactly, in the words a technician acts on, per rail; a cabling that is the
plan reports nothing; and the command line's exit codes (0 as planned, 1 faults, 2 a bad reply)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from fabric.apply.cabling.compare import End, Planned, Report, compare, plan_names, planned_cables
from fabric.apply.cabling.parse import UNKNOWN_PORT, Seen
from fabric.model import load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from tests.apply.cabling.conftest import FAULTS, cable, lldpctl_json, miswire, rails_definition, replies, unplug
from tests.conftest import ROOT


def diagnose(plan: ClusterPlan, cables: list[Planned], seen: list[Seen], replied: set[str] | None = None) -> Report:
    devices = {e.device for c in cables for e in (c.a, c.b)} if replied is None else replied
    return compare(cables, seen, devices, plan_names(plan), every=planned_cables(plan))


def said(report: Report) -> list[str]:
    return [f"{f.kind}: {f.text}" for f in report.faults]


def test_a_cabling_that_is_the_plan_reports_nothing(rails: ClusterPlan, compute: list[Planned]) -> None:
    report = diagnose(rails, compute, replies(compute))
    assert report.ok
    assert report.faults == ()
    assert report.planned == report.checked == report.matched == 16


def test_the_five_planted_faults_are_each_named_exactly(rails: ClusterPlan, compute: list[Planned]) -> None:
    report = diagnose(rails, compute, miswire(replies(compute)))
    assert sorted(said(report)) == sorted(FAULTS)
    assert report.matched == 9  # 16 cables, 7 of them touched
    fixes = {f.device: f.fix for f in report.faults}
    assert fixes["node1"] == "node1: exchange the cables in eth1 and eth3: eth1 goes to leaf-su01-r1 swp1, eth3 to leaf-su01-r2 swp1"
    assert fixes["node3"] == "move the cable of node3 eth1 from leaf-su02-r2 swp9 to leaf-su02-r1 swp1"


def test_the_switches_alone_still_show_every_fault(rails: ClusterPlan, compute: list[Planned]) -> None:
    switches = {s.name for s in rails.fabric.switches} if rails.fabric else set()
    seen = [s for s in miswire(replies(compute)) if s.device in switches]  # the nodes were not read
    expected = [f.replace("(no neighbour on either end)", "(no neighbour on leaf-su02-r2 swp2; node4 not read)") for f in FAULTS]
    assert sorted(said(diagnose(rails, compute, seen, switches))) == sorted(expected)


def test_two_nodes_exchanged_on_one_leaf_and_a_cable_moved_between_planned_ports(rails: ClusterPlan, compute: list[Planned]) -> None:
    seen = unplug(replies(compute), ("leaf-su01-r1", "swp1"), ("leaf-su01-r1", "swp2"))
    exchanged = seen + cable(("leaf-su01-r1", "swp1"), ("node2", "eth1")) + cable(("leaf-su01-r1", "swp2"), ("node1", "eth1"))
    assert said(diagnose(rails, compute, exchanged)) == [
        "swapped: leaf-su01-r1: swp1 and swp2 are swapped (node1 eth1 (rail 1) ↔ node2 eth1 (rail 1))"
    ]
    moved = seen + cable(("leaf-su01-r1", "swp1"), ("node2", "eth1"))  # node1's cable gone, node2's in its port
    assert said(diagnose(rails, compute, moved)) == [
        "moved: leaf-su01-r1 swp1 goes to node2 eth1 (rail 1), planned node1 eth1 (rail 1) (another node); node2 eth1 was planned on leaf-su01-r1 swp2"  # noqa: E501 - one reply or message, whole
    ]


def test_an_unexpected_neighbour_and_a_port_known_only_by_its_mac(rails: ClusterPlan, compute: list[Planned]) -> None:
    seen = [*replies(compute), Seen("leaf-su01-r1", "swp20", "rogue", "eth0")]
    assert said(diagnose(rails, compute, seen)) == ["unexpected: unexpected neighbour: leaf-su01-r1 swp20 – rogue eth0 is not in the plan"]
    by_mac = [
        Seen(s.device, s.port, s.peer, UNKNOWN_PORT) if s.device.startswith("leaf") and s.peer.startswith("node") else s for s in replies(compute)
    ]
    assert diagnose(rails, compute, by_mac).ok


def test_a_device_not_read_leaves_its_cables_unchecked_not_missing(rails: ClusterPlan, compute: list[Planned]) -> None:
    seen = [s for s in replies(compute) if s.device == "leaf-su01-r1"]
    report = diagnose(rails, compute, seen, {"leaf-su01-r1"})
    assert report.ok
    assert report.checked == 4
    assert "node1" in report.unread


def test_infiniband_hcas_and_port_numbers_map_to_the_plan() -> None:
    plan = plan_cluster(load_cluster(ROOT / "inventories" / "onprem-ib" / "cluster.yaml"))
    cables = planned_cables(plan, ("compute",))
    first = next(c for c in cables if c.a.port == "IB1/1/1" and c.b.device == "dgx01")
    hca = next(i.hca for n in plan.nodes for i in n.interfaces if n.hostname == "dgx01" and i.name == first.b.port)
    seen = [Seen(first.a.device, "1", "dgx01", str(hca)), Seen("dgx01", str(hca), first.a.device, "1")]  # as ibnetdiscover names them
    report = compare(cables, seen, {first.a.device, "dgx01"}, plan_names(plan))
    assert report.matched >= 1
    assert not [f for f in report.faults if "dgx01" in f.text and first.a.device in f.text and "IB1/1/1" in f.text]


def run(definition: Path, replies_dir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [
        sys.executable,
        "-m",
        "fabric",
        "verify",
        str(definition),
        "--cabling",
        "--from",
        str(replies_dir),
        "--state",
        str(replies_dir / ".none"),
        *extra,
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, cwd=ROOT)


def write(directory: Path, seen: list[Seen]) -> None:
    directory.mkdir()
    for device in sorted({s.device for s in seen}):
        (directory / f"{device}.lldpctl.json").write_text(lldpctl_json([s for s in seen if s.device == device]), encoding="utf-8")


def test_the_command_line_exit_codes_text_json_and_fix_list(tmp_path: Path, compute: list[Planned]) -> None:
    definition = tmp_path / "cluster.yaml"
    definition.write_text(yaml.safe_dump(rails_definition()), encoding="utf-8")
    write(tmp_path / "good", replies(compute))
    clean = run(definition, tmp_path / "good")
    assert clean.returncode == 0, clean.stderr
    assert "cabling: 16/16 checked cables as planned (16 planned); as planned" in clean.stdout
    write(tmp_path / "bad", miswire(replies(compute)))
    text = run(definition, tmp_path / "bad")
    assert text.returncode == 1, text.stderr
    assert "swapped: node1: eth1 and eth3 are swapped (rail 1 ↔ rail 2)" in text.stdout
    assert "fix list:" in text.stdout
    assert "move the cable of node3 eth1 from leaf-su02-r2 swp9 to leaf-su02-r1 swp1" in text.stdout
    data = json.loads(run(definition, tmp_path / "bad", "--json").stdout)
    assert sorted(f"{f['kind']}: {f['problem']}" for f in data["faults"]) == sorted(FAULTS)
    assert data["ok"] is False
    (tmp_path / "bad" / "node1.lldpctl.json").write_text('{"lldp": {"interface": "x"}}', encoding="utf-8")
    hostile = run(definition, tmp_path / "bad")
    assert hostile.returncode == 2
    assert "node1.lldpctl.json" in hostile.stderr
    assert "node1" in hostile.stderr


def test_a_sonic_leaf_seen_by_its_port_alias_is_its_planned_port() -> None:
    plan = plan_cluster(load_cluster(ROOT / "inventories" / "onprem-roce" / "cluster.yaml"))
    cables = planned_cables(plan, ("compute",))
    first = next(c for c in cables if c.a == End("leaf-su01-r1", "Ethernet0"))
    seen = [Seen(first.b.device, first.b.port, "leaf-su01-r1", "etp1a")]  # SONiC's lldpmgrd advertises the alias
    report = compare(cables, seen, {first.b.device}, plan_names(plan))
    assert report.matched == 1  # the node's other seven rails were not in the reply: missing, not this one
    assert not [f for f in report.faults if "leaf-su01-r1" in f.text]
    bare = compare(cables, seen, {first.b.device}, plan_names(plan, switch_aliases={}))
    assert bare.matched == 0
    assert [f for f in bare.faults if "leaf-su01-r1 etp1a" in f.text]  # without the aliases: a cable in a port the plan lacks


def test_a_dgx_rail_swap_is_said_by_hca_and_rail_from_the_sonic_leaves_alone() -> None:
    plan = plan_cluster(load_cluster(ROOT / "inventories" / "onprem-roce" / "cluster.yaml"))
    cables = planned_cables(plan, ("compute",))
    seen = [Seen(c.a.device, c.a.port, c.b.device, c.b.port) for c in cables]  # show lldp table on every leaf
    seen = [s for s in seen if not (s.device in {"leaf-su01-r2", "leaf-su01-r4"} and s.port == "Ethernet64")]
    seen += [Seen("leaf-su01-r2", "Ethernet64", "gpu017", "enp94s0np0"), Seen("leaf-su01-r4", "Ethernet64", "gpu017", "enp64s0np0")]
    leaves = {c.a.device for c in cables}
    report = compare(cables, seen, leaves, plan_names(plan), every=planned_cables(plan))
    assert [f"{f.kind}: {f.text}" for f in report.faults] == ["swapped: gpu017: mlx5_3 and mlx5_5 are swapped (rail 2 ↔ rail 4)"]
