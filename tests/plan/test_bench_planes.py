"""The 100k-GPU multi-plane benchmark's definition (bench/bench_planes.py) validates and plans, at a reduced size.

Not timed: this keeps the benchmark from rotting (a renamed key, a profile that no longer splits, a pool the planner
outgrows) without paying for 12,544 nodes; the full size is measured by the benchmark itself (docs/benchmarks.md).
"""

from __future__ import annotations

import gc
import io
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from bench.bench_planes import NODES_100K, definition
from fabric.model import load_cluster
from fabric.plan.buffers import SwitchBuffers, resolved_roce
from fabric.plan.compute.facts import build_switch_facts
from fabric.plan.compute.planes import plane_of
from fabric.plan.compute.two_tier import HostAttachment
from fabric.plan.types import ClusterPlan, FabricPlan, Link
from fabric.reports.console import print_plan
from fabric.validate import validate_file


def planned(tmp_path: Path, nodes: int, planes: int) -> tuple[ClusterPlan, FabricPlan]:
    path = tmp_path / "cluster.yaml"
    path.write_text(definition(nodes, planes), encoding="utf-8")
    validated = validate_file(path)
    fabric = validated.plan.fabric
    assert fabric is not None
    return validated.plan, fabric


def test_the_full_case_is_100k_gpus_of_two_planes(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(definition(), encoding="utf-8")
    spec = load_cluster(path)  # the model alone: planning 12,544 nodes is the benchmark's job
    assert spec.fabric is not None
    assert spec.fabric.super_spine is not None
    assert (sum(g.count for g in spec.nodes), NODES_100K * 8, spec.fabric.planes) == (12544, 100352, 2)


def test_two_planes_plan_with_one_supernic_port_in_each(tmp_path: Path) -> None:
    plan, fabric = planned(tmp_path, 256, 2)
    # 256 nodes: 4 scalable units of 64, 8 rail leaves each, per plane; one pod of 32 leaves + 32 spines per plane
    counts = {tier: len(switches) for tier, switches in (("leaf", fabric.leaves), ("spine", fabric.spines), ("super", fabric.super_spines))}
    assert counts == {"leaf": 64, "spine": 64, "super": 64}
    assert {plane_of(s.name) for s in fabric.switches} == {1, 2}
    # plane_split: port (dgx-b300-eth's ports_per_nic 2): ConnectX-8 n's port 1 in plane 1, its port 2 in plane 2
    node = plan.nodes[0]
    compute = [i for i in node.interfaces if i.plane == "compute"]
    assert len(compute) == 16
    assert [plane_of(i.switch) for i in compute] == [1, 2] * 8
    assert all(plane_of(x.a_device) == plane_of(x.b_device) for x in fabric.links if x.kind == "fabric")


def test_four_planes_plan_with_whole_nics(tmp_path: Path) -> None:
    plan, fabric = planned(tmp_path, 256, 4)
    assert {plane_of(s.name) for s in fabric.switches} == {1, 2, 3, 4}
    compute = [i for i in plan.nodes[0].interfaces if i.plane == "compute"]
    # plane_split: nic: SuperNIC n (both ports) in plane n % 4 + 1
    assert [plane_of(i.switch) for i in compute] == [1, 1, 2, 2, 3, 3, 4, 4] * 2


def test_switch_facts_read_each_switchs_buffers_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """build_switch_facts indexes the buffers once: ``buffers_of`` per switch scans them all, O(switches²) at 100k GPUs."""
    plan, fabric = planned(tmp_path, 256, 2)
    lossless = {s.name: plan.buffers_of(s.name) for s in fabric.switches}
    calls: list[str] = []
    scan = ClusterPlan.buffers_of

    def counted(self: ClusterPlan, switch: str) -> SwitchBuffers | None:
        calls.append(switch)
        return scan(self, switch)

    monkeypatch.setattr(ClusterPlan, "buffers_of", counted)
    facts = build_switch_facts(plan)
    assert calls == []
    assert [f.roce for f in facts] == [resolved_roce(plan.roce, lossless[f.switch.name]) for f in facts]
    assert all(f.roce is not None for f in facts)


def test_plan_counts_every_planes_super_spine_cables(tmp_path: Path) -> None:
    """The summary counted one plane's spine-super-spine cables (its ``pods`` figures) and the rest as leaf-spine."""
    plan, _ = planned(tmp_path, 256, 2)
    console = Console(record=True, width=400, file=io.StringIO())
    print_plan(console, plan)
    text = console.export_text()
    # per plane: 32 leaves and 32 spines of 32 uplinks each
    assert "4096 node-leaf, 2048 leaf-spine, 2048 spine-super-spine at 800 Gb/s" in text


def test_switch_facts_are_built_without_a_cyclic_collection(tmp_path: Path) -> None:
    """The facts are some million objects at 100k GPUs, all alive until returned: in a render worker (the plan frozen,
    ``gc.freeze``) the collector ran full collections over them as they grew, about half the facts' time."""
    plan, fabric = planned(tmp_path, 256, 2)
    started: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.collect()
    gc.freeze()  # as a render worker has it (fabric.cli.render_workers)
    gc.callbacks.append(seen)
    try:
        facts = build_switch_facts(plan)
    finally:
        gc.callbacks.remove(seen)
        gc.unfreeze()
    assert len(facts) == len(fabric.switches)
    assert started == []
    assert gc.isenabled()


def test_each_plane_cable_is_built_once_with_its_plane_s_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The planes' switches are named ``p<k>-…`` before they are cabled: no cable or host attachment is built again to
    rename it (600,000 rebuilt objects, a fifth of the 100k-GPU plan)."""
    built = {Link: 0, HostAttachment: 0}
    for cls in built:
        init = cls.__init__

        def counted(self: object, *args: object, _init: Callable[..., None] = init, _cls: type = cls, **kwargs: object) -> None:
            built[_cls] += 1
            _init(self, *args, **kwargs)

        monkeypatch.setattr(cls, "__init__", counted)
    plan, fabric = planned(tmp_path, 256, 2)
    assert built[Link] == len(fabric.links)
    assert built[HostAttachment] == sum(1 for x in fabric.links if x.kind == "host") == 256 * 16
    assert all(plane_of(x.a_device) == plane_of(x.b_device) for x in fabric.links if x.kind == "fabric")
    assert {i.switch for n in plan.nodes for i in n.interfaces if i.plane == "compute"} == {s.name for s in fabric.leaves}
