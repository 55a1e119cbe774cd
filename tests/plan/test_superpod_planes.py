"""The DGX SuperPOD H100 reference architecture's in-band and OOB figures, and what we plan for the same build.

Source: "NVIDIA DGX SuperPOD: Next Generation Scalable Infrastructure for AI Leadership, Reference Architecture Featuring
NVIDIA DGX H100 Systems", RA-11333-001 V11, 2023-09-22 (the PDF's text; HTML edition at
https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-h100/latest/). Quoted, table rows read
across:

- Table 1, "DGX SuperPOD / 4 SU hardware components": "In-band management network | NVIDIA SN4600C switch | 64 port 100
  Gbps Ethernet switch providing high port density with high performance"; "Out-of-band (OOB) management network | NVIDIA
  SN2201 switch | 48 port 1 Gbps Ethernet switch leveraging copper ports to minimize complexity".
- Table 4, "Compute fabric component count" (network-fabrics.html): SU count 1 / 2 / 4, node count 31 / 63 / 127
  ("This is a 32 node per SU design, however a DGX system must be removed to accommodate for UFM connectivity"),
  InfiniBand leaf 8 / 16 / 32, spine 4 / 8 / 16.
- Appendix A, Table 7, "Major components of the 4 SU, 127-node DGX SuperPOD with SLURM": "Management Network: 8 In-band
  management, NVIDIA SN4600C switch with Cumulus Linux, 64 QSFP28 ports; 8 OOB management, NVIDIA SN2201 switch with
  Cumulus Linux, 48 RJ45 ports"; "Compute Fabric: 48 Fabric switches"; "Storage Fabric: 16 Fabric switches" (QM9700).
- Table 8, "Estimate of cables required for a 4 SU, 127-node DGX SuperPOD": In-Band Ethernet Cables "254, 200 Gbps QSFP56
  AOC, DGX H100 system", 8 management nodes, 4 uplink to core DC, 6 ISL cables, 8 NFS storage, 24 leaf-core cables; OOB
  Ethernet Cables (1 Gbps Cat5e) "127 DGX H100 systems, 64 InfiniBand Switches, 8 Management/UFM nodes, 8 In-band
  Ethernet switches, 2 UFM Back-to-Back, 108 PDUs" and "16, 100 Gbps, Two uplinks per OOB to in-band".

The RA states in-band and OOB switch counts for the 4-SU build only, with no port map and no count per SU. The definition
(``tests/data/plan/superpod-h100/cluster.yaml``) is that build read from Table 8 (docs/reference/superpod-counts.md): in-band
leaf pairs shared across SUs by port budget plus a core pair, two SN2201 per SU taking the management rack's gear on their
spare ports, two in-band ports per DGX; the test adds the RA's 108 PDUs, 27 per SU. ``FOUR_SUS`` holds, per row, the RA's
figure, its words and the plan's; where the two still differ docs/reference/superpod-counts.md says why. 1 and 2 SUs follow
the same rules (``PER_SU``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, NamedTuple

import pytest
import yaml

from fabric.catalog.switches import SWITCH_MODELS
from fabric.model import ClusterSpec
from fabric.plan import ClusterPlan, plan_cluster
from tests.conftest import DATA

SUPERPOD_H100 = DATA / "plan" / "superpod-h100" / "cluster.yaml"

# Table 4: (SUs, nodes, InfiniBand leaves, InfiniBand spines).
TABLE_4 = [(1, 31, 8, 4), (2, 63, 16, 8), (4, 127, 32, 16)]

# At 4 SUs: (the RA's figure, its words in Table 7 or 8, this plan's figure). docs/reference/superpod-counts.md explains
# each row whose figures differ.
FOUR_SUS = {
    "compute fabric switches": (48, "Compute Fabric: 48 Fabric switches", 48),
    "in-band switches": (8, "8 In-band management, NVIDIA SN4600C switch", 8),
    "OOB switches": (8, "8 OOB management, NVIDIA SN2201 switch", 8),
    "in-band cables to DGX systems": (254, "254, 200 Gbps QSFP56 AOC, DGX H100 system", 254),
    "in-band leaf-core cables": (24, "24 ... Leaf – Core cables", 24),
    "in-band ISL cables": (6, "6 ... ISL Cables", 8),
    "OOB cables to DGX BMCs": (127, "127 DGX H100 systems", 127),
    "OOB cables to InfiniBand switches": (64, "64 InfiniBand Switches", 48),
    "OOB cables to in-band switches": (8, "8 In-band Ethernet switches", 8),
    "OOB cables to PDUs": (108, "108 PDUs", 108),
    "OOB uplinks": (16, "16, 100 Gbps, Two uplinks per OOB to in-band", 16),
}


class Size(NamedTuple):
    """The same rules at every size: in-band ceil(SU slots / 58) leaf pairs + the core pair; OOB 2 SN2201 per SU."""

    sus: int
    nodes: int
    inband: int
    oob: int
    dgx_cables: int
    leaf_core: int
    isl: int


PER_SU = [Size(1, 31, 4, 2, 62, 8, 4), Size(2, 63, 6, 4, 126, 16, 6), Size(4, 127, 8, 8, 254, 24, 8)]

PDUS_PER_SU = 27
"""Table 8: 108 PDUs at 4 SUs, on OOB; 27 per SU (the RA gives no split: ours)."""


def ra_pdus(sus: int) -> list[dict[str, Any]]:
    """The RA's PDUs of ``sus`` SUs as OOB devices: per SU 14 on ``oob-su<s>-1`` and 13 on ``oob-su<s>-2`` from port 21,
    after the switch's 16 BMC slots and its 4 of the SU's 8 leaves."""
    pdus: list[dict[str, Any]] = []
    for su in range(1, sus + 1):
        for i in range(PDUS_PER_SU):
            switch, k = divmod(i, 14)
            n = (su - 1) * PDUS_PER_SU + i + 1
            pdus.append(
                {"name": f"pdu-su{su}-{i + 1:02d}", "kind": "pdu", "switch": f"oob-su{su}-{switch + 1}", "port": 21 + k, "address": f"10.103.250.{n}"}
            )
    return pdus


def superpod_h100(nodes: int) -> ClusterPlan:
    """The plan of the RA build with ``nodes`` DGX H100 systems (31, 63 or 127 for 1, 2 or 4 SUs)."""
    data: dict[str, Any] = yaml.safe_load(SUPERPOD_H100.read_text(encoding="utf-8"))
    data["nodes"][0]["count"] = nodes
    data["planes"]["oob"]["network"]["devices"] = ra_pdus(-(-nodes // 32))
    return plan_cluster(ClusterSpec.model_validate(data))


def test_the_ra_switch_models_are_the_catalogs() -> None:
    """Table 1 / Table 7: SN4600C 64 x 100G QSFP28, SN2201 48 x 1G RJ45 with cages for the two uplinks per OOB switch."""
    sn4600c, sn2201 = SWITCH_MODELS["sn4600c"], SWITCH_MODELS["sn2201"]
    assert (sn4600c.link_layer, sn4600c.radix(100)) == ("ethernet", 64)
    assert (sn2201.link_layer, sn2201.radix(1)) == ("ethernet", 48)
    plan = superpod_h100(31)
    assert plan.oob is not None
    uplinks = [x for x in plan.oob.links if x.kind == "uplink"]
    assert {x.a_port for x in uplinks} == {"swp49", "swp50"}  # the QSFP28 cages, not two of the 48 RJ45 ports
    assert {x.speed_gbps for x in uplinks} == {100}  # Table 8: "100 Gbps"


@pytest.mark.parametrize(("sus", "nodes", "leaves", "spines"), TABLE_4, ids=[f"{row[0]}su" for row in TABLE_4])
def test_every_oob_cable_table_8_lists_for_what_the_plan_builds(sus: int, nodes: int, leaves: int, spines: int) -> None:
    plan = superpod_h100(nodes)
    assert plan.fabric is not None
    assert plan.oob is not None
    assert (len(plan.fabric.leaves), len(plan.fabric.spines)) == (leaves, spines)
    assert max(n.scalable_unit or 0 for n in plan.nodes) == sus
    (inband,) = plan.storage
    kinds = Counter(x.kind for x in plan.oob.links)
    assert kinds["bmc"] == nodes  # "127 ... DGX H100 systems" at 4 SUs
    managed = Counter(x.b_device for x in plan.oob.links if x.kind == "switch-mgmt")
    # "InfiniBand Switches" and "In-band Ethernet switches": each switch's management port, once.
    assert managed == Counter({s.name: 1 for s in (*plan.fabric.switches, *inband.switches)})
    # "Two uplinks per OOB": every management switch has two.
    assert Counter(x.a_device for x in plan.oob.links if x.kind == "uplink") == {s.name: 2 for s in plan.oob.switches}


def _measured(plan: ClusterPlan) -> dict[str, int]:
    assert plan.fabric is not None
    assert plan.oob is not None
    (inband,) = plan.storage
    kinds = Counter(x.kind for x in inband.links)
    compute = {s.name for s in plan.fabric.switches}
    managed = Counter("InfiniBand" if x.b_device in compute else "in-band" for x in plan.oob.links if x.kind == "switch-mgmt")
    oob = Counter(x.kind for x in plan.oob.links)
    return {
        "compute fabric switches": len(plan.fabric.switches),
        "in-band switches": len(inband.switches),
        "OOB switches": len(plan.oob.switches),
        "in-band cables to DGX systems": kinds["inband"],
        "in-band leaf-core cables": kinds["uplink"],
        "in-band ISL cables": kinds["peerlink"],
        "OOB cables to DGX BMCs": oob["bmc"],
        "OOB cables to InfiniBand switches": managed["InfiniBand"],
        "OOB cables to in-band switches": managed["in-band"],
        "OOB cables to PDUs": oob["device"],
        "OOB uplinks": oob["uplink"],
    }


def test_four_sus_against_tables_7_and_8() -> None:
    assert _measured(superpod_h100(127)) == {name: planned for name, (_, _, planned) in FOUR_SUS.items()}


def test_only_the_rows_the_readme_explains_differ_from_the_ra() -> None:
    differ = {name for name, (ra, _, planned) in FOUR_SUS.items() if ra != planned}
    assert differ == {"in-band ISL cables", "OOB cables to InfiniBand switches"}


@pytest.mark.parametrize("size", PER_SU, ids=[f"{size.sus}su" for size in PER_SU])
def test_one_two_and_four_sus_follow_the_same_rules(size: Size) -> None:
    sus, nodes, inband, oob, dgx_cables, leaf_core, isl = size
    plan = superpod_h100(nodes)
    assert plan.oob is not None
    measured = _measured(plan)
    assert (measured["in-band switches"], measured["OOB switches"]) == (inband, oob)
    assert (measured["in-band cables to DGX systems"], measured["in-band leaf-core cables"], measured["in-band ISL cables"]) == (
        dgx_cables,
        leaf_core,
        isl,
    )
    assert (measured["OOB cables to PDUs"], measured["OOB uplinks"]) == (PDUS_PER_SU * sus, 2 * oob)
    assert [s.name for s in plan.oob.switches] == [f"oob-su{s}-{k}" for s in range(1, sus + 1) for k in (1, 2)]
    assert all(s.ports_used <= s.ports_total == 48 for s in plan.oob.switches)
    # Each DGX's two in-band ports: one bond over the two switches of one leaf pair.
    (net,) = plan.storage
    sides: dict[str, set[str]] = {}
    for x in net.links:
        if x.kind == "inband":
            sides.setdefault(x.b_device, set()).add(x.a_device)
    assert len(sides) == nodes
    assert all(len(pair) == 2 and len({side[:-2] for side in pair}) == 1 for pair in sides.values())
