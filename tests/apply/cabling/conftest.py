"""A rail-optimized twin-sized plan: 4 nodes with 2 rails each, 4 leaves (2 per scalable unit, one per rail), 2 spines."""

from __future__ import annotations

import pytest
import yaml

from fabric.apply.cabling.compare import Planned, planned_cables
from fabric.apply.cabling.parse import Seen
from fabric.model import ClusterSpec
from fabric.plan import ClusterPlan, plan_cluster
from tests.conftest import ROOT


def rails_plan(name: str = "rails") -> ClusterPlan:
    """The lab definition with two compute ports a node (eth1 rail 1, eth3 rail 2) on a rail-optimized fabric."""
    data = yaml.safe_load((ROOT / "inventories" / "lab" / "cluster.yaml").read_text(encoding="utf-8"))
    data["name"] = name
    data["planes"]["compute"]["max_ports_per_node"] = 2
    data["fabric"] |= {"topology": "rail-optimized", "su_size": 2}
    data["nodes"][0]["ports"]["compute"] = {"count": 2, "speed_gbps": 100, "names": ["eth1", "eth3"]}
    return plan_cluster(ClusterSpec.model_validate(data))


def replies(cables: list[Planned]) -> list[Seen]:
    """What LLDP on both ends of every cable reports when the cabling is the plan."""
    return [s for c in cables for s in (Seen(c.a.device, c.a.port, c.b.device, c.b.port), Seen(c.b.device, c.b.port, c.a.device, c.a.port))]


@pytest.fixture(scope="module")
def rails() -> ClusterPlan:
    return rails_plan()


@pytest.fixture(scope="module")
def compute(rails: ClusterPlan) -> list[Planned]:
    return planned_cables(rails, ("compute",))
