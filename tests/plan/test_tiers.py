"""Three-tier fabrics: pods of leaves and spines joined by super-spine planes.

The published design reproduced here is Meta's 24K-GPU RoCE cluster, as "The Llama 3 Herd of Models" (arXiv:2407.21783,
section 3.3.1, "Network topology") describes it: a three-layer Clos network; pods of 3,072 GPUs (192 racks of 16 GPUs)
with full bisection bandwidth; eight pods joined by aggregation switches whose connectivity is oversubscribed 1:7. The
SIGCOMM 2024 paper "RDMA over Ethernet for Distributed AI Training at Meta Scale" (Gangidi et al.) calls the tiers RTSW,
CTSW and ATSW. Its switches (Minipack2 ToRs, Arista 7800 chassis) are not in the catalog, so the test builds the same GPU
counts, pod size, pod count and per-tier ratios from SN5600s; what it checks is the design's published figures.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fabric.errors import InputError
from fabric.export.k8s.topology import BLOCK_LABEL, HOST_LABEL, POD_LABEL, SU_LABEL, node_labels, topology_levels
from fabric.export.slurm import topology_conf
from fabric.model import ClusterSpec
from fabric.plan import check_and_plan, plan_cluster
from fabric.plan.serialize import plan_to_json
from fabric.plan.types import ClusterPlan, FabricPlan, PodsPlan
from tests.conftest import DATA, check_golden

THREE_TIER = DATA / "plan" / "three-tier" / "cluster.yaml"


def three_tier(nodes: int = 8, **super_spine: Any) -> ClusterSpec:
    data = yaml.safe_load(THREE_TIER.read_text(encoding="utf-8"))
    data["fabric"]["super_spine"].update(super_spine)
    data["nodes"][0]["count"] = nodes
    return ClusterSpec.model_validate(data)


def fabric_of(plan: ClusterPlan) -> tuple[FabricPlan, PodsPlan]:
    assert plan.fabric is not None
    assert plan.fabric.pods is not None
    return plan.fabric, plan.fabric.pods


def errors(spec: ClusterSpec) -> list[str]:
    with pytest.raises(InputError) as caught:
        plan_cluster(spec)
    return [f"{f.dotted_path}: {f.message}" for f in caught.value.errors]


def test_three_tier_plan_matches_golden(update_golden: bool) -> None:
    check_golden(THREE_TIER.parent / "golden" / "plan.json", plan_to_json(plan_cluster(three_tier())), update_golden)


def test_pods_spines_and_super_spines_are_cabled_plane_by_plane() -> None:
    fabric, pods = fabric_of(plan_cluster(three_tier()))
    assert (pods.pods, pods.leaves_per_pod, pods.spines_per_pod, pods.super_spines_per_plane) == (2, 4, 2, 1)
    assert [s.name for s in fabric.spines] == ["pod01-spine01", "pod01-spine02", "pod02-spine01", "pod02-spine02"]
    assert [s.name for s in fabric.super_spines] == ["superspine01-01", "superspine02-01"]
    top = [
        (link.a_device, link.a_port, link.b_device, link.b_port, link.speed_gbps) for link in fabric.links if link.b_device.startswith("superspine")
    ]
    # spine k of every pod reaches plane k only; pod P takes super-spine ports (P - 1) * parallel + ...
    assert top[:4] == [
        ("pod01-spine01", "swp5", "superspine01-01", "swp1", 800),
        ("pod01-spine01", "swp6", "superspine01-01", "swp2", 800),
        ("pod01-spine01", "swp7", "superspine01-01", "swp3", 800),
        ("pod01-spine01", "swp8", "superspine01-01", "swp4", 800),
    ]
    assert ("pod02-spine02", "swp5", "superspine02-01", "swp5", 800) in top
    # leaves reach only the spines of their own pod
    for link in fabric.links:
        if link.kind == "fabric" and link.a_device.startswith("leaf"):
            leaf = next(s for s in fabric.leaves if s.name == link.a_device)
            spine = next(s for s in fabric.spines if s.name == link.b_device)
            assert pods.pod_of(leaf) == pods.pod_of(spine)


def test_asns_follow_rfc7938_one_per_leaf_one_per_pod_one_for_the_super_spines() -> None:
    fabric, _ = fabric_of(plan_cluster(three_tier()))
    assert {s.asn for s in fabric.super_spines} == {65000}
    assert [s.asn for s in fabric.spines] == [65001, 65001, 65002, 65002]
    assert [s.asn for s in fabric.leaves] == list(range(65101, 65109))


def test_oversubscription_and_bisection_per_tier_both_directions() -> None:
    fabric, _ = fabric_of(plan_cluster(three_tier()))
    leaf, spine, top = fabric.tiers
    assert (leaf.tier, leaf.downlink_gbps, leaf.uplink_gbps, leaf.oversubscription) == ("leaf", 1600, 1600, "1:1")
    assert (spine.tier, spine.downlink_gbps, spine.uplink_gbps, spine.oversubscription) == ("spine", 3200, 3200, "1:1")
    assert (top.tier, top.switches, top.ports_used_per_switch) == ("superspine", 2, 8)
    # 32 host ports x 400G = 12.8 Tb/s; half of it crosses the cut one way, all of it counting both directions
    assert (fabric.bisection_gbps, fabric.bisection_both_directions_gbps) == (6_400, 12_800)
    spec = three_tier(oversubscription="2:1")
    fabric, pods = fabric_of(plan_cluster(spec))
    assert (pods.spine_uplinks, fabric.tiers[1].oversubscription) == (2, "2:1")
    assert (fabric.bisection_gbps, fabric.bisection_both_directions_gbps, fabric.oversubscription) == (3_200, 6_400, "2:1")


def test_adding_a_pod_renumbers_nothing_that_exists() -> None:
    small, large = plan_cluster(three_tier(8)), plan_cluster(three_tier(12))
    (before, pods_before), (after, pods_after) = fabric_of(small), fabric_of(large)
    assert (pods_before.pods, pods_after.pods) == (2, 3)
    assert set(before.switches) < set(after.switches)
    assert set(before.links) < set(after.links)
    assert set(small.nodes) <= set(large.nodes)
    assert pods_before.super_spines == pods_after.super_spines


def test_pods_beyond_the_planned_build_out_are_refused_with_the_fix() -> None:
    assert errors(three_tier(20)) == [
        "fabric.super_spine.pods: the nodes fill 20 leaves = 5 pods of 4, more than the 4 the super-spines are built for; "
        "set pods: 5 or more (this re-cables the super-spines), or remove nodes"
    ]


def test_a_pod_must_hold_whole_scalable_units() -> None:
    assert errors(three_tier(leaves_per_pod=6)) == [
        "fabric.super_spine.leaves_per_pod: 6 leaves per pod split a scalable unit's 4 rail leaves; a rail-optimized pod "
        "holds whole units: use a multiple of 4"
    ]


def test_past_what_three_tiers_can_build_is_refused_with_the_numbers() -> None:
    assert errors(three_tier(pods=65)) == [
        "fabric.super_spine.model: three tiers of these switches take at most 64 pods (sn5600: 64 ports at 800 Gb/s, one link "
        "from each pod spine of its plane) x 4 leaves x 4 host ports = 1,024 host ports, but the super-spines must take 65 pods "
        "(8 leaves today). "
        "Use a higher-radix super-spine or spine, more oversubscription (fabric.oversubscription 1:1, "
        "super_spine.oversubscription 1:1), or split the cluster"
    ]


def test_a_single_super_spine_is_a_warning_naming_the_risk() -> None:
    spec = three_tier()
    data = spec.model_dump(mode="json", exclude_none=True)
    data["fabric"]["uplinks_per_leaf"] = 1
    data["fabric"]["oversubscription"] = "2:1"
    data["fabric"]["super_spine"]["oversubscription"] = "4:1"
    findings, plan = check_and_plan(ClusterSpec.model_validate(data))
    assert plan is not None
    warnings = [f.message for f in findings if f.severity == "warning"]
    assert any(w.startswith("a single super-spine (superspine01-01) carries all traffic between the 2 pods") for w in warnings), warnings
    assert any(w.startswith("each pod has a single spine") for w in warnings), warnings


def test_pod_asns_that_run_into_the_leaf_asns_are_an_error() -> None:
    _, plan = check_and_plan(three_tier(pod_asn_base=65100))
    assert plan is None
    assert "overlap the leaf ASNs 65101..65108" in " ".join(errors(three_tier(pod_asn_base=65100)))


def meta_24k() -> ClusterSpec:
    """Meta's 24K-GPU RoCE cluster (Llama 3 paper, section 3.3.1): 8 pods of 3,072 GPUs, 1:1 in a pod, 1:7 above."""
    data = yaml.safe_load(THREE_TIER.read_text(encoding="utf-8"))
    data["planes"]["compute"] = {"transport": "roce", "cidr": "10.0.0.0/12", "mtu": 9000}
    data["fabric"] = {
        "topology": "rail-optimized",
        "leaf": {"model": "sn5600", "nos": "sonic"},
        "spine": {"model": "sn5600", "nos": "sonic"},
        # 384 nodes x 8 GPUs = 3,072 GPUs per pod: 6 scalable units of 64 nodes, 8 rail leaves each.
        "super_spine": {"model": "sn5600", "nos": "sonic", "leaves_per_pod": 48, "oversubscription": "7:1"},
        "su_size": 64,
        "spines": 32,
        "oversubscription": "1:1",
        "underlay": {"p2p_pool": "10.240.0.0/14", "leaf_asn_base": 4200000001, "leaf_loopback_offset": 1024},
        "management": {"mgmt_pool": "10.18.240.0/20", "mgmt_leaf_offset": 1024},
    }
    data["nodes"] = [{"group": "gpu", "role": "gpu", "count": 3072, "hostname": "gt{index:04d}", "hardware": "dgx-h100"}]
    return ClusterSpec.model_validate(data)


@pytest.mark.slow
def test_meta_24k_gpu_three_layer_clos_reproduces_the_published_figures() -> None:
    plan = plan_cluster(meta_24k())
    fabric, pods = fabric_of(plan)
    assert sum(n.gpus for n in plan.nodes) == 24_576
    assert pods.pods == 8
    assert pods.leaves_per_pod * fabric.host_ports_per_leaf == 3_072  # GPUs (one 400G NIC each) per pod
    leaf, spine, _ = fabric.tiers
    assert leaf.oversubscription == "1:1"  # full bisection inside a pod
    # 1:7 above the pods; whole cables round it to 96 x 400G down over 14 x 400G up
    assert (pods.spine_downlinks, pods.spine_uplinks, spine.oversubscription) == (96, 14, "6.85714:1")
    hosts = 24_576 * 400
    assert fabric.bisection_both_directions_gbps == 8 * 32 * 14 * 400 >= hosts // 7
    assert fabric.bisection_gbps == fabric.bisection_both_directions_gbps // 2
    assert (len(fabric.leaves), len(fabric.spines), len(fabric.super_spines)) == (384, 256, 32)


def test_schedulers_see_the_pods_between_the_scalable_units_and_the_super_spines() -> None:
    plan = plan_cluster(three_tier(12))
    lines = [line for line in topology_conf(plan).splitlines() if line.startswith("SwitchName")]
    assert lines == [
        "SwitchName=su01 Nodes=gpu[01-04]",
        "SwitchName=su02 Nodes=gpu[05-08]",
        "SwitchName=su03 Nodes=gpu[09-12]",
        "SwitchName=pod01 Switches=su01",
        "SwitchName=pod02 Switches=su02",
        "SwitchName=pod03 Switches=su03",
        "SwitchName=superspines Switches=pod[01-03]",
    ]
    labels = node_labels(plan)
    assert labels["gpu05"] == {BLOCK_LABEL: "three-tier", POD_LABEL: "pod02", SU_LABEL: "su02"}
    assert topology_levels(labels) == [BLOCK_LABEL, POD_LABEL, SU_LABEL, HOST_LABEL]


def test_sonic_sn5600_spines_mix_leaf_and_super_spine_speeds() -> None:
    """Dynamic port breakout (the SN5600's platform.json modes): negative control, main refused "one SKU, one port speed"."""
    data = three_tier().model_dump(mode="json", exclude_none=True)
    data["fabric"]["spine"] = {"model": "sn5600", "nos": "sonic"}
    data["fabric"]["super_spine"]["uplink_speed_gbps"] = 400
    findings, plan = check_and_plan(ClusterSpec.model_validate(data))
    assert [f.message for f in findings if f.severity == "error"] == []
    assert plan is not None


def test_pod_spines_that_reach_the_leaves_management_offset_are_an_error_with_the_fix() -> None:
    data = three_tier(pods=64).model_dump(mode="json", exclude_none=True)
    data["fabric"]["management"] = {"mgmt_leaf_offset": 100}
    findings, plan = check_and_plan(ClusterSpec.model_validate(data))
    assert plan is None
    assert [f.message for f in findings if f.severity == "error"] == [
        "pod spines take mgmt_pool[2..129] for 64 pods, reaching the leaves at mgmt_leaf_offset 100; set mgmt_leaf_offset "
        "to 256 or more (and a mgmt_pool that holds it)"
    ]


@st.composite
def three_tier_data(draw: st.DrawFn) -> dict[str, Any]:
    data = yaml.safe_load(THREE_TIER.read_text(encoding="utf-8"))
    data["fabric"]["topology"] = draw(st.sampled_from(["rail-optimized", "fat-tree"]))
    data["fabric"]["su_size"] = draw(st.sampled_from([2, 4, 8]))
    data["fabric"]["uplinks_per_leaf"] = draw(st.sampled_from([2, 4]))
    data["fabric"]["host_ports_per_leaf"] = 4 if data["fabric"]["topology"] == "fat-tree" else None
    data["fabric"] = {k: v for k, v in data["fabric"].items() if v is not None}
    data["fabric"]["super_spine"] = {"model": "sn5600", "nos": "cumulus", "oversubscription": draw(st.sampled_from(["1:1", "2:1", "3:1"]))}
    data["fabric"]["underlay"] = {"addressing": draw(st.sampled_from(["p2p-31", "unnumbered"]))}
    data["nodes"][0]["count"] = draw(st.integers(1, 40))
    return data


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(three_tier_data())
def test_every_switch_port_carries_one_cable_and_every_leaf_reaches_every_spine_of_its_pod(data: dict[str, Any]) -> None:
    findings, plan = check_and_plan(ClusterSpec.model_validate(data))
    assume(plan is not None)
    assert plan is not None
    fabric, pods = fabric_of(plan)
    ends = [(ln.a_device, ln.a_port) for ln in fabric.links] + [(ln.b_device, ln.b_port) for ln in fabric.links if ln.kind == "fabric"]
    assert len(ends) == len(set(ends))
    by_name = {s.name: s for s in fabric.switches}
    reached: dict[str, set[str]] = {}
    for ln in fabric.links:
        if ln.kind == "fabric" and by_name[ln.a_device].tier == "leaf":
            reached.setdefault(ln.a_device, set()).add(ln.b_device)
            assert pods.pod_of(by_name[ln.a_device]) == pods.pod_of(by_name[ln.b_device])
    for leaf in fabric.leaves:
        pod = pods.pod_of(leaf)
        assert reached[leaf.name] == {s.name for s in fabric.spines if pods.pod_of(s) == pod}
    assert len(fabric.super_spines) == pods.spines_per_pod * pods.super_spines_per_plane
    assert not [f for f in findings if f.severity == "error"]
