"""Every row of the NVIDIA DGX SuperPOD B200 component table, planned from one definition.

Source: NVIDIA DGX SuperPOD reference architecture featuring DGX B200 (RA-11334), "DGX SuperPOD Architecture",
https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-b200/latest/dgx-superpod-architecture.html
The table's heading: "SU Count | Node Count | GPU Count | InfiniBand Switch Count (Leaf, Spine, Core) | Cable Count
(Node-Leaf, Leaf-Spine, Spine-Core)"; the page says "DGX SuperPOD can scale to much larger configurations up to and
beyond 64 SU with 2000+ DGX B200 nodes". Rows of 2, 4 and 8 SUs have no core ("–"): two tiers. From 16 SUs a core tier
joins the spines: three tiers, which the definition asks for with ``fabric.super_spine`` (core = super-spine).

The definition (``tests/data/plan/superpod-b200/cluster.yaml``) is the RA's: DGX B200 nodes (8 x 400G NDR compute
ports), 32 per scalable unit, rail-optimized, QM9700 (64 x NDR) at every tier, nothing else set but the management
addressing 1,280 switches need. The table gives only counts; how the cores group the spines is ours: pods of 4 SUs
(32 leaves, 32 spines, one cable from each leaf to each spine of its pod: 32 + 32 of a spine's 64 ports, so 1:1), and
spine k of every pod cabled to the cores of plane k. Any pod with as many spines as leaves gives the RA's counts.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, NamedTuple

import pytest
import yaml

from fabric.errors import InputError
from fabric.model import ClusterSpec, load_cluster
from fabric.plan import plan_cluster
from fabric.plan.types import FabricPlan
from tests.conftest import DATA

SUPERPOD_B200 = DATA / "plan" / "superpod-b200" / "cluster.yaml"


class Row(NamedTuple):
    """One row of the RA table; None where the table has a dash (no core tier)."""

    sus: int
    nodes: int
    gpus: int
    leaf: int
    spine: int
    core: int | None
    node_leaf: int
    leaf_spine: int
    spine_core: int | None


ROWS = [
    Row(2, 64, 512, 16, 8, None, 512, 512, None),
    Row(4, 128, 1024, 32, 16, None, 1024, 1024, None),
    Row(8, 256, 2048, 64, 32, None, 2048, 2048, None),
    Row(16, 512, 4096, 128, 128, 64, 4096, 4096, 4096),
    Row(32, 1024, 8192, 256, 256, 128, 8192, 8192, 8192),
    Row(64, 2048, 16384, 512, 512, 256, 16384, 16384, 16384),
]


def superpod_b200(scalable_units: int, *, core: bool) -> ClusterSpec:
    """The definition at ``scalable_units`` SUs, with the core tier (``fabric.super_spine``) or without it."""
    data: dict[str, Any] = yaml.safe_load(SUPERPOD_B200.read_text(encoding="utf-8"))
    data["nodes"][0]["count"] = 32 * scalable_units
    if not core:
        del data["fabric"]["super_spine"]
    return ClusterSpec.model_validate(data)


def cables(fabric: FabricPlan) -> Counter[str]:
    """Cables counted by the tiers they join, as the RA's table does (node-leaf, leaf-spine, spine-core)."""
    tier = {switch.name: switch.tier for switch in fabric.switches}
    names = {"leaf": "node-leaf", "leaf+spine": "leaf-spine", "spine+superspine": "spine-core"}
    counted: Counter[str] = Counter()
    for link in fabric.links:
        ends = "+".join(sorted(tier[d] for d in (link.a_device, link.b_device) if d in tier))
        counted[names[ends]] += 1
    return counted


@pytest.mark.parametrize("row", ROWS, ids=[f"{row.sus}su" for row in ROWS])
def test_dgx_superpod_b200_table_row(row: Row) -> None:
    plan = plan_cluster(superpod_b200(row.sus, core=row.core is not None))
    fabric = plan.fabric
    assert fabric is not None
    assert (len(plan.nodes), sum(node.gpus for node in plan.nodes)) == (row.nodes, row.gpus)
    assert (len(fabric.leaves), len(fabric.spines), len(fabric.super_spines) or None) == (row.leaf, row.spine, row.core)
    counted = cables(fabric)
    assert (counted["node-leaf"], counted["leaf-spine"], counted["spine-core"] or None) == (row.node_leaf, row.leaf_spine, row.spine_core)
    assert sum(counted.values()) == len(fabric.links), "every cable is one of the table's three kinds"
    # Equal cable counts at NDR on every tier: non-blocking (1:1) from the nodes up, as the table's figures imply.
    assert {link.speed_gbps for link in fabric.links} == {400}
    assert fabric.tiers[0].oversubscription == "1:1"
    if row.core is not None:
        assert fabric.tiers[1].oversubscription == "1:1"


def test_the_16_su_design_groups_4_sus_per_pod_with_cores_in_32_planes() -> None:
    fabric = plan_cluster(load_cluster(SUPERPOD_B200)).fabric
    assert fabric is not None
    pods = fabric.pods
    assert pods is not None
    # 4 pods of 32 leaves and 32 spines; spine k of each pod reaches the 2 cores of plane k over 16 cables each.
    assert (pods.pods, pods.leaves_per_pod, pods.spines_per_pod) == (4, 32, 32)
    assert (pods.spine_downlinks, pods.spine_uplinks, pods.super_spines_per_plane, pods.parallel_links) == (32, 32, 2, 16)
    assert [t.oversubscription for t in fabric.tiers] == ["1:1", "1:1", "n/a"]
    # Each core takes 4 pods x 16 cables = all 64 of its ports; 64 of them take no fifth pod.
    assert (fabric.tiers[2].ports_used_per_switch, pods.max_pods) == (64, 4)


def test_dgx_superpod_b200_at_16_sus_on_two_tiers_is_refused_with_the_numbers() -> None:
    with pytest.raises(InputError) as caught:
        plan_cluster(superpod_b200(16, core=False))
    assert [f"{f.dotted_path}: {f.message}" for f in caught.value.errors] == [
        "fabric.spine.model: 4096 leaf uplinks need 64 spines of radix 64, but a leaf has only 32 uplinks to spread over them; "
        "a two-tier fabric this large needs a higher-radix spine or fewer nodes"
    ]
