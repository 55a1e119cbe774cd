"""A rail-optimized twin-sized plan: 4 nodes with 2 rails each, 4 leaves (2 per scalable unit, one per rail), 2 spines."""

from __future__ import annotations

import json

import pytest
import yaml

from fabric.apply.cabling.compare import Planned, planned_cables
from fabric.apply.cabling.parse import Seen
from fabric.model import ClusterSpec
from fabric.plan import ClusterPlan, plan_cluster
from tests.conftest import ROOT


def rails_plan(name: str = "rails") -> ClusterPlan:
    """The lab definition with two compute ports a node (eth1 rail 1, eth3 rail 2) on a rail-optimized fabric."""
    return plan_cluster(ClusterSpec.model_validate(rails_definition(name)))


def replies(cables: list[Planned]) -> list[Seen]:
    """What LLDP on both ends of every cable reports when the cabling is the plan."""
    return [s for c in cables for s in (Seen(c.a.device, c.a.port, c.b.device, c.b.port), Seen(c.b.device, c.b.port, c.a.device, c.a.port))]


@pytest.fixture(scope="module")
def rails() -> ClusterPlan:
    return rails_plan()


@pytest.fixture(scope="module")
def compute(rails: ClusterPlan) -> list[Planned]:
    return planned_cables(rails, ("compute",))


def rails_definition(name: str = "rails") -> dict[str, object]:
    """The definition ``rails_plan`` plans, for the command line."""
    data = yaml.safe_load((ROOT / "inventories" / "lab" / "cluster.yaml").read_text(encoding="utf-8"))
    data["name"] = name
    data["planes"]["compute"]["max_ports_per_node"] = 2
    data["fabric"] |= {"topology": "rail-optimized", "su_size": 2}
    data["nodes"][0]["ports"]["compute"] = {"count": 2, "speed_gbps": 100, "names": ["eth1", "eth3"]}
    return data


def lldpctl_json(seen: list[Seen]) -> str:
    """One device's neighbours as ``lldpcli -f json0 show neighbors`` prints them (its shape: lldpcli(8))."""
    interfaces = [
        {"name": s.port, "via": "LLDP", "chassis": [{"id": [{"type": "mac", "value": "02:00:00:00:00:01"}], "name": [{"value": s.peer}]}],
         "port": [{"id": [{"type": "ifname", "value": s.peer_port}], "descr": [{"value": s.peer_port}]}]}
        for s in seen
    ]  # fmt: skip
    return json.dumps({"lldp": [{"interface": interfaces}]})


def cable(x: tuple[str, str], y: tuple[str, str]) -> list[Seen]:
    """A cable between two ends, as both ends' LLDP reports it."""
    return [Seen(x[0], x[1], y[0], y[1]), Seen(y[0], y[1], x[0], x[1])]


def unplug(seen: list[Seen], *ends: tuple[str, str]) -> list[Seen]:
    """``seen`` without the cables touching ``ends``."""
    return [s for s in seen if (s.device, s.port) not in ends and (s.peer, s.peer_port) not in ends]


def miswire(seen: list[Seen]) -> list[Seen]:
    """The five faults the twin test plants, on the rails plan: rails swapped on node1, node2's rail-1 cable in another
    port of its leaf, node4's rail-2 cable gone, leaf-su02-r1's uplinks swapped, node3's rail-1 cable on the rail-2 leaf."""
    out = unplug(
        seen,
        ("leaf-su01-r1", "swp1"), ("leaf-su01-r2", "swp1"), ("leaf-su01-r1", "swp2"), ("leaf-su02-r2", "swp2"),
        ("leaf-su02-r1", "swp3"), ("leaf-su02-r1", "swp4"), ("leaf-su02-r1", "swp1"),
    )  # fmt: skip
    out += cable(("leaf-su01-r1", "swp1"), ("node1", "eth3")) + cable(("leaf-su01-r2", "swp1"), ("node1", "eth1"))
    out += cable(("leaf-su01-r1", "swp9"), ("node2", "eth1"))
    out += cable(("leaf-su02-r1", "swp3"), ("spine02", "swp3")) + cable(("leaf-su02-r1", "swp4"), ("spine01", "swp3"))
    out += cable(("leaf-su02-r2", "swp9"), ("node3", "eth1"))
    return out


FAULTS = [
    "swapped: node1: eth1 and eth3 are swapped (rail 1 ↔ rail 2)",
    "swapped: leaf-su02-r1: swp3 and swp4 are swapped (spine01 swp3 ↔ spine02 swp3)",
    "moved: node2 eth1 (rail 1) goes to leaf-su01-r1 swp9, planned leaf-su01-r1 swp2 (another port of the same device)",
    "moved: node3 eth1 (rail 1) goes to leaf-su02-r2 swp9, planned leaf-su02-r1 swp1 (another switch: leaf-su02-r2 is rail 2, leaf-su02-r1 rail 1)",
    "missing: missing link: leaf-su02-r2 swp2 – node4 eth3 (rail 2) (no neighbour on either end)",
]
"""The diagnosis of ``miswire``, exactly."""
