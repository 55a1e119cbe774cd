"""Racks reach the workload exports where the definition has them (OOB placement: rack): a Kueue level and label between
the nodes' leaf group and the host, and a Slurm node feature; nowhere else, and never across two groups."""

from __future__ import annotations

import re

import yaml

from fabric.export import export_k8s, export_slurm
from fabric.export.k8s.topology import RACK_LABEL, SU_LABEL, _add_racks
from fabric.export.racks import node_racks
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from tests.conftest import ROOT

IB = ROOT / "inventories/onprem-ib/cluster.yaml"


def test_racks_follow_the_oob_rack_switches_nodes_per_rack_at_a_time() -> None:
    plan = plan_cluster(load_cluster(IB))
    assert plan.oob is not None
    per_rack = load_cluster(IB).planes.oob.network.nodes_per_rack  # type: ignore[union-attr]
    racks = node_racks(plan)
    gpus = sorted(n.hostname for n in plan.nodes if n.role == "gpu")
    in_units = sorted(n.hostname for n in plan.nodes if n.scalable_unit is not None)
    assert sorted(racks) == in_units  # nodes outside the units sit in the management rack: no rack name
    assert set(gpus) <= set(racks)
    assert [racks[h] for h in gpus[: per_rack + 1]] == ["su01-r01"] * per_rack + ["su01-r02"]
    bmc_switch = {link.b_device: link.a_device for link in plan.oob.links if link.kind == "bmc"}
    assert all(bmc_switch[h] == f"oob-su{int(r[2:4])}-r{int(r[6:])}" for h, r in racks.items())


def test_kueue_gets_a_rack_level_below_the_scalable_unit_and_slurm_a_rack_feature() -> None:
    plan = plan_cluster(load_cluster(IB))
    racks = {h: r for h, r in node_racks(plan).items() if next(n for n in plan.nodes if n.hostname == h).role == "gpu"}
    k8s = export_k8s(plan)
    topology = next(d for d in yaml.safe_load_all(k8s["k8s/kueue-topology.yaml"]) if d and d["kind"] == "Topology")
    levels = [level["nodeLabel"] for level in topology["spec"]["levels"]]
    assert levels[-3:] == [SU_LABEL, RACK_LABEL, "kubernetes.io/hostname"]
    nodes = {d["metadata"]["name"]: d["metadata"]["labels"] for d in yaml.safe_load_all(k8s["k8s/node-labels.yaml"]) if d}
    assert {h: labels[RACK_LABEL] for h, labels in nodes.items()} == racks
    lines = dict(re.findall(r"^NodeName=(\S+) .* Feature=(\S+) ", export_slurm(plan)["slurm/nodes.conf"], re.MULTILINE))
    assert {h: features.split(",")[-1] for h, features in lines.items()} == racks


def test_no_rack_anywhere_without_rack_placement() -> None:
    plan = plan_cluster(load_cluster(ROOT / "inventories/onprem-roce/cluster.yaml"))
    assert node_racks(plan) == {}
    assert RACK_LABEL not in export_k8s(plan)["k8s/kueue-topology.yaml"]


def test_a_rack_across_two_groups_is_no_level() -> None:
    labels = {"a": {SU_LABEL: "su01"}, "b": {SU_LABEL: "su02"}}
    _add_racks(labels, {"a": "su01-r01", "b": "su01-r01"})  # one rack, two units: Kueue's levels would not nest
    assert labels == {"a": {SU_LABEL: "su01"}, "b": {SU_LABEL: "su02"}}
    _add_racks(labels, {"a": "su01-r01"})  # a node without a rack: no level either
    assert RACK_LABEL not in labels["b"]
    _add_racks(labels, {"a": "su01-r01", "b": "su02-r01"})
    assert labels["b"][RACK_LABEL] == "su02-r01"
