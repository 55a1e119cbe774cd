"""Shared spines (fabric.plane_spines: shared): one spine layer for every plane's leaves, sized for them all, ports
plane by plane, one ASN, no loopback outside the VRFs; what cannot be built is refused with the reason."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from fabric.errors import InputError
from fabric.model import ClusterSpec
from fabric.plan import plan_cluster
from fabric.plan.compute.planes import plane_fabric, plane_figures, plane_of
from fabric.plan.compute.shared_spines import refusals
from fabric.plan.types import FabricPlan
from tests.conftest import DATA, ROOT

SHARED = DATA / "render" / "frr-shared" / "cluster.yaml"


def spec(nodes: int = 4, **fabric: Any) -> ClusterSpec:
    data = yaml.safe_load(SHARED.read_text(encoding="utf-8"))
    data["nodes"][0]["count"] = nodes
    data["fabric"].update(fabric)
    data["fabric"] = {k: v for k, v in data["fabric"].items() if v is not None}
    return ClusterSpec.model_validate(data)


def fabric_of(definition: ClusterSpec) -> FabricPlan:
    plan = plan_cluster(definition)
    assert plan.fabric is not None
    return plan.fabric


def errors(definition: ClusterSpec) -> list[str]:
    with pytest.raises(InputError) as caught:
        plan_cluster(definition)
    return [f"{f.dotted_path}: {f.message}" for f in caught.value.errors]


def test_every_planes_leaves_uplink_to_the_same_spines_plane_by_plane() -> None:
    fabric = fabric_of(spec())
    assert [(s.name, s.asn, s.loopback) for s in fabric.spines] == [("spine01", 65100, None), ("spine02", 65100, None)]
    ups = [(x.a_device, x.b_device, x.b_port) for x in fabric.links if x.kind == "fabric" and x.b_device == "spine01"]
    assert ups == [
        ("p1-leaf01", "spine01", "swp1"),
        ("p1-leaf02", "spine01", "swp2"),
        ("p2-leaf01", "spine01", "swp3"),
        ("p2-leaf02", "spine01", "swp4"),
    ]
    ends = [(x.b_device, x.b_port) for x in fabric.links if x.kind == "fabric"]
    assert len(set(ends)) == len(ends)  # no spine port taken twice
    assert {plane_of(s.name) for s in fabric.leaves} == {1, 2}
    assert len({s.asn for s in fabric.leaves}) == 4  # leaves keep their own ASNs across planes


def test_the_spine_count_takes_every_planes_uplinks() -> None:
    # 16 nodes: per plane 8 leaves x 4 uplinks = 32, one 32-port spine alone; shared, both planes' 64 need two
    separate = fabric_of(spec(16, spines=None, uplinks_per_leaf=4, plane_spines="separate"))
    shared = fabric_of(spec(16, spines=None, uplinks_per_leaf=4))
    assert [s.name for s in separate.spines] == ["p1-spine01", "p2-spine01"]
    assert [s.name for s in shared.spines] == ["spine01", "spine02"]
    spine = next(t for t in shared.tiers if t.tier == "spine")
    assert (spine.switches, spine.ports_per_switch, spine.ports_used_per_switch, spine.downlink_gbps) == (2, 32, 32, 3200)


def figures(fabric: FabricPlan) -> list[tuple[int, int, int, int, str]]:
    return [(f.plane, f.host_gbps, f.uplink_gbps, f.bisection_gbps, f.oversubscription) for f in plane_figures(fabric)]


def test_per_plane_and_total_figures_match_separate_spines() -> None:
    shared, separate = fabric_of(spec(8)), fabric_of(spec(8, plane_spines="separate"))
    assert figures(shared) == figures(separate) == [(1, 800, 800, 400, "1:1"), (2, 800, 800, 400, "1:1")]
    assert shared.bisection_gbps == separate.bisection_gbps == 800
    assert shared.oversubscription == separate.oversubscription == "1:1"
    # each plane's own picture shows the shared spines, counted once
    alone = plane_fabric(shared, 2)
    assert [s.name for s in alone.spines] == ["spine01", "spine02"]
    assert [(t.tier, t.switches) for t in alone.tiers] == [("leaf", 4), ("spine", 2)]


def test_spines_without_the_ports_for_every_plane_are_refused() -> None:
    (message,) = errors(spec(64))  # 2 planes x 32 leaves x 2 uplinks = 128 > 2 spines x 32 ports
    assert message.startswith("fabric.plane_spines: shared spines of 32 ports cannot take the 128 leaf uplinks of 2 planes")
    (forced,) = errors(spec(16, spines=1, uplinks_per_leaf=4))  # one spine fits a plane (32), not both (64)
    assert "cannot take the 64 leaf uplinks" in forced


def test_what_shared_spines_cannot_be_is_refused_with_the_reason() -> None:
    mlnx = spec()
    assert mlnx.fabric is not None
    onyx = mlnx.model_copy(update={"fabric": mlnx.fabric.model_copy(update={"spine": mlnx.fabric.spine.model_copy(update={"nos": "mlnx-os"})})})
    (message,) = [f"{f.dotted_path}: {f.message}" for f in refusals(onyx)]
    assert message.startswith("fabric.spine.nos: shared spines need a VRF per plane, and the mlnx-os renderer gives a spine none yet")
    for nos in ("eos", "nxos"):
        data = yaml.safe_load((DATA / "render" / f"{nos}-shared" / "cluster.yaml").read_text(encoding="utf-8"))
        data["fabric"]["underlay"]["addressing"] = "unnumbered"
        (unnumbered,) = errors(ClusterSpec.model_validate(data))
        assert unnumbered.startswith(f"fabric.underlay.addressing: a shared {nos} spine's VRFs are rendered for /31 links only")
    three = spec(16, spines=None, uplinks_per_leaf=2, super_spine={"model": "lab-vswitch", "nos": "frr", "leaves_per_pod": 4, "pods": 2})
    assert any("shared spines are built on two tiers only" in m for m in errors(three))
    ib = yaml.safe_load((ROOT / "inventories" / "onprem-ib" / "cluster.yaml").read_text(encoding="utf-8"))
    ib["fabric"].update(planes=2, plane_split="nic", plane_spines="shared")
    assert any("InfiniBand planes cannot share spines: a switch belongs to one subnet" in m for m in errors(ClusterSpec.model_validate(ib)))


def test_the_plan_summary_counts_the_shared_spines_once_in_the_total() -> None:
    from rich.console import Console

    from fabric.reports.console import _print_planes  # pyright: ignore[reportPrivateUsage] - the plan table itself

    console = Console(record=True, width=150)
    _print_planes(console, fabric_of(spec()))
    text = console.export_text()
    assert "Compute planes (2, 2 shared spines, a VRF per plane;" in text
    assert [line.split("│")[2].strip() for line in text.splitlines() if line.startswith("│")] == ["2", "2", "6"]
