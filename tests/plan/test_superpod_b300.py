"""The NVIDIA DGX SuperPOD B300 compute-fabric tables: Spectrum-X twin-planar Ethernet planned row by row; the XDR
InfiniBand variant (Quantum-X800 Q3400) checked against its own arithmetic and refused by the planner, with the reason.

Spectrum-X (SN5600, two planes). Source: "NVIDIA SuperPOD DGX B300 Systems, Spectrum-4 Ethernet and DC Busbar Power
Reference Architecture", "DGX SuperPOD Architecture", Table 3 "Larger DGX SuperPOD component counts",
https://docs.nvidia.com/dgx-superpod/reference-architecture/scalable-infrastructure-b300/latest/dgx-superpod-architecture.html
Heading: "SU Count | Node Count | GPU Count | Leaf | Spine | Cable Count Node-Leaf | Leaf-Spine"; rows 1/64/512/16/8/
512/512 up to 16/1024/8192/256/128/8192/8192. "Network Fabrics" (same RA, network-fabrics.html): "Each group of 64 nodes
is rail-aligned"; "The Spectrum-X based compute fabric features a twin-planar design ... Each GPU has 2x 400GbE
connectivity through two different planes". The definition is ``tests/data/plan/superpod-b300/cluster.yaml``.

What the table does not say: the switch model and NOS of the rows (SN5600 and Cumulus Linux are ours: the RA names
Spectrum-4), and what one "cable" is. Its cable counts are one per GPU (64 nodes x 8 GPUs = 512 node-leaf) while each
GPU has two 400GbE links, one per plane: 1,024 node-leaf links per SU. The plan counts links, one per 400G port, and
the table's figures are exactly half of them on both tiers; the test asserts that. Our reading, which the RA does not
state: the table counts 800G cables of two 400G links each (one per GPU's SuperNIC cage, one per 800G switch cage). The per-plane
split (8 leaves, 4 spines per plane per SU) is the arithmetic of 16 and 8 over two planes; the RA's figure shows the two
planes, not their counts.

XDR InfiniBand (Q3400). Source: "NVIDIA DGX SuperPOD ... DGX B300 ... XDR" RA, "DGX SuperPOD Architecture", Table 3
"Example Compute Fabric Components for DGX SuperPOD Counts",
https://docs.nvidia.com/dgx-superpod/reference-architecture/scalable-infrastructure-b300-xdr/latest/dgx-superpod-architecture.html
"This reference architecture is focused on 8 SU units with 576 DGX nodes"; rows SU / nodes / GPUs / leaf / spine /
node-leaf / leaf-spine: 1/72/576/8/4/576/576, 2/144/1152/16/8/1152/1152, 4/288/2304/32/18/2304/2304,
8/576/4608/64/36/4608/4608, 18/1296/9216/144/72/10368/10368. The 18-SU row contradicts its own arithmetic: 1,296 DGX B300
of 8 GPUs are 10,368 GPUs, not 9,216 (9,216 is 1,152 nodes, 16 SUs), and its own node-leaf cables, one per GPU as on
every other row, are 10,368. The test follows the arithmetic (10,368). The planner cannot plan this design: the Q3400's
only NOS is NVOS, which gpufabric does not render, and the model refuses a tier asking for it before planning
(``fabric/catalog/switch_refused.py``), so the XDR rows are checked against the catalog's Q3400 (144 x 800G) instead.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, NamedTuple

import pytest
import yaml
from pydantic import ValidationError

from fabric.catalog.hardware import HARDWARE
from fabric.catalog.switches import SWITCH_MODELS
from fabric.model import ClusterSpec
from fabric.plan import plan_cluster
from fabric.plan.types import FabricPlan
from tests.conftest import DATA

SUPERPOD_B300 = DATA / "plan" / "superpod-b300" / "cluster.yaml"


class Row(NamedTuple):
    """One row of an RA's Table 3, as printed."""

    sus: int
    nodes: int
    gpus: int
    leaf: int
    spine: int
    node_leaf: int
    leaf_spine: int


SPECTRUM_X = [
    Row(1, 64, 512, 16, 8, 512, 512),
    Row(2, 128, 1024, 32, 16, 1024, 1024),
    Row(4, 256, 2048, 64, 32, 2048, 2048),
    Row(8, 512, 4096, 128, 64, 4096, 4096),
    Row(16, 1024, 8192, 256, 128, 8192, 8192),
]

XDR = [
    Row(1, 72, 576, 8, 4, 576, 576),
    Row(2, 144, 1152, 16, 8, 1152, 1152),
    Row(4, 288, 2304, 32, 18, 2304, 2304),
    Row(8, 576, 4608, 64, 36, 4608, 4608),
    Row(18, 1296, 9216, 144, 72, 10368, 10368),  # 9216 as printed: 1296 x 8 = 10368 (see the module docstring)
]


def superpod_b300(scalable_units: int) -> ClusterSpec:
    """The Spectrum-X definition at ``scalable_units`` SUs of 64 DGX B300."""
    data: dict[str, Any] = yaml.safe_load(SUPERPOD_B300.read_text(encoding="utf-8"))
    data["nodes"][0]["count"] = 64 * scalable_units
    return ClusterSpec.model_validate(data)


def links(fabric: FabricPlan) -> Counter[tuple[str, str]]:
    """Links counted by (plane, tiers joined): plane from the switch's ``p<k>-`` name."""
    tier = {switch.name: switch.tier for switch in fabric.switches}
    counted: Counter[tuple[str, str]] = Counter()
    for link in fabric.links:
        planes = {d.split("-", 1)[0] for d in (link.a_device, link.b_device) if d in tier}
        assert len(planes) == 1, f"{link.a_device} - {link.b_device} joins two planes"
        ends = "+".join(sorted(tier[d] for d in (link.a_device, link.b_device) if d in tier))
        counted[(planes.pop(), {"leaf": "node-leaf", "leaf+spine": "leaf-spine"}[ends])] += 1
    return counted


@pytest.mark.parametrize("row", SPECTRUM_X, ids=[f"{row.sus}su" for row in SPECTRUM_X])
def test_dgx_superpod_b300_spectrum_x_table_row(row: Row) -> None:
    plan = plan_cluster(superpod_b300(row.sus))
    fabric = plan.fabric
    assert fabric is not None
    assert (len(plan.nodes), sum(node.gpus for node in plan.nodes)) == (row.nodes, row.gpus)
    assert (len(fabric.leaves), len(fabric.spines), len(fabric.super_spines)) == (row.leaf, row.spine, 0)
    # Two planes of half the switches each, no cable between them (links() asserts it per link).
    for tier, count in (("leaf", row.leaf), ("spine", row.spine)):
        per_plane = Counter(s.name.split("-", 1)[0] for s in fabric.switches if s.tier == tier)
        assert per_plane == {"p1": count // 2, "p2": count // 2}
    counted = links(fabric)
    half = {"p1": 0, "p2": 0}
    for (plane, _), n in counted.items():
        half[plane] += n
    assert half["p1"] == half["p2"]
    node_leaf = counted[("p1", "node-leaf")] + counted[("p2", "node-leaf")]
    leaf_spine = counted[("p1", "leaf-spine")] + counted[("p2", "leaf-spine")]
    # "2x 400GbE ... through two different planes": two 400G links per GPU; the table counts one cable per GPU.
    assert (node_leaf, leaf_spine) == (2 * row.node_leaf, 2 * row.leaf_spine) == (2 * row.gpus, 2 * row.gpus)
    assert {link.speed_gbps for link in fabric.links} == {400}
    assert fabric.tiers[0].oversubscription == "1:1"


def test_each_gpus_two_ports_go_to_two_planes_on_the_same_rail() -> None:
    """Profile entries 2N and 2N+1 are GPU N's ports 1 and 2 (one ConnectX-8, ``ports_per_nic: 2``), so
    ``plane_split: port`` sends them to plane 1 and plane 2, rail N + 1 of each."""
    assert HARDWARE["dgx-b300-eth"].ports["compute"].ports_per_nic == 2
    fabric = plan_cluster(superpod_b300(1)).fabric
    assert fabric is not None
    # dgx-b300-eth's compute names, in profile order
    profile_names = [f"enp{gpu}s0f{port}np{port}" for gpu in range(8) for port in (0, 1)]
    seen: dict[str, str] = {}
    for link in fabric.links:
        if link.kind == "host" and link.b_device == "dgx0001":
            seen[link.b_port] = link.a_device
    assert sorted(seen) == sorted(profile_names)
    for gpu in range(8):
        one, two = seen[profile_names[2 * gpu]], seen[profile_names[2 * gpu + 1]]
        assert (one, two) == (f"p1-leaf-su01-r{gpu + 1}", f"p2-leaf-su01-r{gpu + 1}")


def test_dgx_superpod_b300_xdr_table_follows_its_arithmetic_but_for_the_18_su_gpu_count() -> None:
    q3400 = SWITCH_MODELS["q3400"]
    radix = q3400.radix(800)
    assert (q3400.link_layer, radix) == ("infiniband", 144)
    assert radix is not None
    for row in XDR:
        # 72 DGX B300 per SU ("8 SU units with 576 DGX nodes"), 8 XDR ports each (dgx-b300: one ConnectX-8 per GPU).
        assert row.nodes == 72 * row.sus
        assert row.node_leaf == 8 * row.nodes
        # Rail-optimized: 8 leaves per SU, each with 72 hosts down and 72 uplinks (1:1) of its 144 ports.
        assert row.leaf == 8 * row.sus
        assert row.node_leaf == row.leaf * 72 == row.leaf_spine
        # Each leaf spreads its 72 uplinks evenly (4.5 per spine at 4 SUs would not be whole: 18 spines, not 16).
        assert 72 % row.spine == 0 or row.spine % 72 == 0
        assert row.leaf_spine <= row.spine * radix
        # GPUs: 8 per node. Every row but the 18-SU one prints it.
        assert (row.gpus == 8 * row.nodes) is (row.sus != 18)
    assert XDR[-1].gpus == 9216
    assert 8 * XDR[-1].nodes == 10368 == XDR[-1].node_leaf


def test_the_xdr_design_is_refused_before_planning_with_the_reason() -> None:
    data: dict[str, Any] = yaml.safe_load(SUPERPOD_B300.read_text(encoding="utf-8"))
    data["planes"]["compute"] = {"transport": "infiniband", "cidr": "10.200.0.0/16", "mtu": 4092}
    data["fabric"] = {
        "topology": "rail-optimized",
        "su_size": 72,
        "leaf": {"model": "q3400", "nos": "nvos"},
        "spine": {"model": "q3400", "nos": "nvos"},
    }
    data["infiniband"] = {"subnet_manager": {"kind": "ufm", "nodes": [{"host": "dgx0001", "priority": 15}]}}
    data["nodes"][0].update(count=72, hardware="dgx-b300")
    with pytest.raises(ValidationError) as caught:
        ClusterSpec.model_validate(data)  # the definition itself is refused: no plan is built
    errors = caught.value.errors()
    assert [".".join(map(str, e["loc"])) for e in errors] == ["fabric.leaf.nos", "fabric.spine.nos"]
    assert all("nos 'nvos' is not rendered" in e["msg"] and "MLNX-OS model (qm9700, qm8700)" in e["msg"] for e in errors)
