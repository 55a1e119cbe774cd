"""Hardware the definition describes itself: custom node ports, uplinks at their own speed, and the safety of the plan.

The reference design is issue 18's: 32 servers with 8 H100 each and 2 x 400 Gb/s fabric ports, a leaf per 16 servers,
each leaf with 800 Gb/s uplinks to a pair of spines. Published figures: 2 leaves, 2 spines, 1.6 Tb/s of uplink per leaf,
8:1 oversubscription, and a bisection quoted as 3.2 Tb/s (both directions).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from fabric.errors import InputError
from fabric.model import ClusterSpec
from fabric.plan import check_and_plan, plan_cluster
from fabric.plan.serialize import plan_to_json
from tests.conftest import DATA, check_golden

REFERENCE = DATA / "plan" / "reference-2x400" / "cluster.yaml"


def reference(**fabric: Any) -> ClusterSpec:
    data = yaml.safe_load(REFERENCE.read_text(encoding="utf-8"))
    data["fabric"].update(fabric)
    data["fabric"] = {k: v for k, v in data["fabric"].items() if v is not None}
    return ClusterSpec.model_validate(data)


def errors(spec: ClusterSpec) -> list[str]:
    with pytest.raises(InputError) as caught:
        plan_cluster(spec)
    return [f"{f.dotted_path}: {f.message}" for f in caught.value.errors]


def test_reference_design_reproduces_the_published_numbers() -> None:
    fabric = plan_cluster(reference()).fabric
    assert fabric is not None
    leaf, spine = fabric.tiers
    assert (len(fabric.leaves), len(fabric.spines)) == (2, 2)
    assert (fabric.host_speed_gbps, fabric.uplink_speed_gbps, fabric.uplinks_per_leaf) == (400, 800, 2)
    assert (leaf.downlink_gbps, leaf.uplink_gbps, leaf.oversubscription) == (12_800, 1_600, "8:1")
    assert (spine.ports_used_per_switch, spine.downlink_gbps) == (2, 1_600)
    assert (fabric.bisection_gbps, fabric.bisection_both_directions_gbps) == (1_600, 3_200)
    hosts = [link for link in fabric.links if link.kind == "host"]
    uplinks = [link for link in fabric.links if link.kind == "fabric"]
    assert len(hosts) == 64
    assert {link.speed_gbps for link in hosts} == {400}
    # 16 servers x 2 ports fill 16 SN5600 cages as 2 x 400G breakouts; the uplinks take the next cages at 800G.
    assert [(h.a_device, h.a_port, h.b_device) for h in hosts[:2]] == [("leaf01", "swp1s0", "gpu01"), ("leaf01", "swp1s1", "gpu01")]
    assert {h.a_device for h in hosts[32:]} == {"leaf02"}
    assert [(u.a_device, u.a_port, u.b_device, u.b_port, u.speed_gbps) for u in uplinks] == [
        ("leaf01", "swp17", "spine01", "swp1", 800),
        ("leaf01", "swp18", "spine02", "swp1", 800),
        ("leaf02", "swp17", "spine01", "swp2", 800),
        ("leaf02", "swp18", "spine02", "swp2", 800),
    ]


def test_reference_design_refuses_a_one_to_one_target_with_the_numbers() -> None:
    assert errors(reference(oversubscription="1:1", uplinks_per_leaf=2)) == [
        "fabric.uplinks_per_leaf: 32 host ports x 400 Gb/s = 12.8 Tb/s down over 2 uplinks x 800 Gb/s = 1.6 Tb/s up is 8:1 "
        "oversubscribed, above the target 1:1; raise uplinks_per_leaf to 16 or relax the target"
    ]


def test_one_to_one_without_a_fixed_uplink_count_sizes_sixteen_800g_uplinks() -> None:
    fabric = plan_cluster(reference(oversubscription="1:1")).fabric
    assert fabric is not None
    assert (fabric.uplinks_per_leaf, fabric.tiers[0].uplink_gbps, fabric.tiers[0].oversubscription) == (16, 12_800, "1:1")


def test_a_custom_two_port_node_needs_no_catalog_profile() -> None:
    plan = plan_cluster(reference())
    node = plan.nodes[0]
    compute = [i for i in node.interfaces if i.plane == "compute"]
    assert (node.hardware, node.gpus) == ("custom", 8)
    assert [(i.name, i.hca, i.speed_gbps, i.switch_port) for i in compute] == [
        ("enp24s0np0", "mlx5_0", 400, "swp1s0"),
        ("enp154s0np0", "mlx5_1", 400, "swp1s1"),
    ]


def test_a_single_spine_the_planner_chose_is_a_warning_naming_the_risk() -> None:
    findings, plan = check_and_plan(reference(spines=None))
    assert plan is not None
    assert plan.fabric is not None
    assert len(plan.fabric.spines) == 1
    assert [(f.severity, f.dotted_path, f.message) for f in findings] == [
        (
            "warning",
            "fabric.spines",
            "the planner chose a single spine (spine01): it carries all traffic between the 2 leaves, so losing it (failure or "
            "upgrade) cuts every leaf off from every other; set spines: 2 or more (with uplinks_per_leaf a multiple of it), "
            "or set spines: 1 to accept this",
        )
    ]
    findings, _ = check_and_plan(reference(spines=1))
    assert not findings, "a single spine asked for is no surprise"


def test_a_spine_count_that_does_not_divide_the_uplinks_is_an_error_with_the_fix() -> None:
    assert errors(reference(spines=3, uplinks_per_leaf=4, oversubscription="4:1")) == [
        "fabric.spines: 3 spines do not divide each leaf's 4 uplinks (4 = 1 x 3 + 1): leaves would reach some spines over "
        "more links than others, and ECMP would load the spines unequally; use spines: one of [1, 2, 4], or uplinks_per_leaf: 6"
    ]


def test_uplinks_at_a_speed_the_spine_cannot_run_are_refused() -> None:
    spec = reference(spine={"model": "sn4600c", "nos": "cumulus"})
    assert errors(spec) == ["fabric.spine.model: sn4600c cannot run 800 Gb/s ports (it supports [100, 50, 25]); pick a model that does"]


def test_sonic_sn5600_leaves_mix_host_and_uplink_speeds_by_dynamic_port_breakout() -> None:
    """Issue 28: the SN5600's platform.json lists 1x800G, 2x400G and 4x200G for every cage, so one SONiC leaf runs
    400G host ports and 800G uplinks (negative control: main refused this with "SONiC runs one SKU, one port speed")."""
    fabric = plan_cluster(reference(leaf={"model": "sn5600", "nos": "sonic"}, spine={"model": "sn5600", "nos": "sonic"})).fabric
    assert fabric is not None
    assert (fabric.host_speed_gbps, fabric.uplink_speed_gbps) == (400, 800)


def test_sonic_leaves_without_platform_breakout_modes_cannot_mix_speeds() -> None:
    spec = reference(
        leaf={"model": "sn4700", "nos": "sonic"}, spine={"model": "sn4700", "nos": "sonic"}, uplink_speed_gbps=200, host_ports_per_leaf=16
    )
    assert errors(spec) == [
        "fabric.uplink_speed_gbps: SONiC runs one SKU, one port speed, on a sn4700 (the catalog has no platform.json breakout "
        "modes for it, which dynamic port breakout needs); sn4700 leaves cannot mix [200, 400] Gb/s. "
        "Drop uplink_speed_gbps or run the leaves under another NOS (e.g. cumulus)"
    ]


def test_reference_plan_matches_golden(update_golden: bool) -> None:
    check_golden(REFERENCE.parent / "golden" / "plan.json", plan_to_json(plan_cluster(reference())), update_golden)


def test_a_fat_tree_leaf_without_a_host_count_fills_its_cages_at_both_speeds() -> None:
    # SN5600, 64 cages at 8:1: 56 cages as 112 x 400G host ports (44.8 Tb/s) and 7 x 800G uplinks (5.6 Tb/s), 63 cages.
    fabric = plan_cluster(reference(host_ports_per_leaf=None, spines=1)).fabric
    assert fabric is not None
    assert (fabric.host_ports_per_leaf, fabric.uplinks_per_leaf, fabric.tiers[0].oversubscription) == (112, 7, "8:1")


def test_a_profile_of_the_definitions_own_plans_like_described_ports() -> None:
    data = yaml.safe_load(REFERENCE.read_text(encoding="utf-8"))
    group = data["nodes"][0]
    data["hardware"] = {"hgx-2x400": {"description": "8 x H100, 2 x 400G", "gpus": 8, "gpu_model": "H100-SXM5-80GB", "ports": group.pop("ports")}}
    for ports in data["hardware"]["hgx-2x400"]["ports"].values():
        ports.pop("count")
    group.pop("gpus")
    group["hardware"] = "hgx-2x400"
    own = plan_cluster(ClusterSpec.model_validate(data))
    described = plan_cluster(reference())
    assert own.nodes[0].hardware == "hgx-2x400"
    assert (own.nodes[0].gpus, own.nodes[0].interfaces) == (described.nodes[0].gpus, described.nodes[0].interfaces)
    assert own.fabric == described.fabric
