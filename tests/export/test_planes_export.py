"""Exports of a multi-plane fabric: each plane's rails stand apart in Kubernetes, telemetry and NCCL; Slurm sees one place."""

from __future__ import annotations

import ipaddress
from functools import cache
from typing import Any

import yaml

from fabric.export import export_nccl
from fabric.export.k8s import export_network_operator, rail_ports
from fabric.export.slurm import topology_conf
from fabric.export.telemetry.rails import rail_devices, rail_rules
from fabric.export.telemetry.scrape import scrape_config
from fabric.model import load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from fabric.plan.compute.planes import plane_of
from tests.conftest import ROOT


@cache
def plan() -> ClusterPlan:
    return plan_cluster(load_cluster(ROOT / "inventories" / "two-plane" / "cluster.yaml"))


def documents(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def test_each_planes_rail_is_its_own_resource_network_and_pool() -> None:
    files = export_network_operator(plan())
    names = [d["metadata"]["name"] for d in documents(files["k8s/networks.yaml"])]
    assert names[:3] == ["p1-rail1", "p1-rail2", "p1-rail3"]
    assert len(names) == 16
    pools = documents(files["k8s/ip-pools.yaml"])
    blocks = {"p1": ipaddress.IPv4Network("10.100.0.0/17"), "p2": ipaddress.IPv4Network("10.100.128.0/17")}
    for pool in pools:
        plane = pool["metadata"]["name"].split("-")[2]  # two-plane-p1-rail1
        assert pool["spec"]["cidr"] == str(blocks[plane])
        assert pool["spec"]["routes"] == [{"dst": str(blocks[plane])}]  # never the other plane's block
        for allocation in pool["spec"]["staticAllocations"]:
            assert ipaddress.IPv4Network(allocation["prefix"]).subnet_of(blocks[plane])
        nodes = [a["nodeName"] for a in pool["spec"]["staticAllocations"]]
        assert len(nodes) == len(set(nodes)) == 16  # one port per node per plane rail
    assert all(len({plane_of(p.switch) for _, p in ports}) == 1 for ports in rail_ports(plan()).values())


def test_telemetry_counts_rails_per_plane_and_labels_the_plane() -> None:
    rails = rail_devices(plan())
    assert len(rails) == 16
    assert all(len(hcas) == 1 for hcas in rails.values())
    rules = [r for r in rail_rules(plan()) if "record" in r]
    assert {(r["labels"]["plane"], r["labels"]["rail"]) for r in rules} == {(f"p{k}", str(n)) for k in (1, 2) for n in range(1, 9)}  # type: ignore[index]
    jobs = yaml.safe_load(scrape_config(plan()))["scrape_configs"]
    switch_labels = [t["labels"] for j in jobs for t in j.get("static_configs", []) if "tier" in t.get("labels", {})]
    assert {(lab["tier"], lab["plane"]) for lab in switch_labels} == {("leaf", "p1"), ("leaf", "p2"), ("spine", "p1"), ("spine", "p2")}


def test_nccl_lists_every_planes_hcas() -> None:
    text = export_nccl(plan())["nccl/gpu.env"]
    hca = next(line for line in text.splitlines() if line.startswith("NCCL_IB_HCA="))
    listed = {item.split(":")[0] for item in hca.removeprefix("NCCL_IB_HCA==").split(",")}
    assert listed == {f"mlx5_{n}" for n in range(16)}
    assert "# compute planes (never joined): p1=mlx5_0,mlx5_2," in text
    assert "NCCL_CROSS_NIC=0" in text  # a ring stays on one NIC index, so on one plane, on every node


def test_slurm_sees_each_node_in_one_place_across_planes() -> None:
    text = topology_conf(plan())
    switches = [line for line in text.splitlines() if line.startswith("SwitchName=")]
    assert switches == ["SwitchName=su01 Nodes=gpu[01-16]"]
