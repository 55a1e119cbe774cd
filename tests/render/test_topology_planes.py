"""A multi-plane fabric's diagrams are drawn plane by plane, never all planes at once (then thrown away)."""

from __future__ import annotations

import pytest

from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.plan.compute.planes import plane_of
from fabric.plan.types import ClusterPlan, FabricPlan, Link
from fabric.render.diagrams import topology
from fabric.render.diagrams.topology_structure import Structure
from tests.conftest import ROOT


def test_each_plane_is_structured_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = plan_cluster(load_cluster(ROOT / "inventories" / "two-plane" / "cluster.yaml"))
    seen: list[set[int | None]] = []
    structure = topology.plane_structure

    def recorded(plan: ClusterPlan, fabric: FabricPlan, links: list[Link]) -> Structure:
        seen.append({plane_of(x.a_device) for x in links})
        return structure(plan, fabric, links)

    monkeypatch.setattr(topology, "plane_structure", recorded)
    svgs = topology.topology_svgs(plan)
    assert {"compute-p1", "compute-p2"} <= set(svgs)
    assert "compute" not in svgs
    # the whole fabric's structure was laid out and dropped before: on the 100k-GPU case about 2 s of a 20 s render
    assert seen == [{1}, {2}]
