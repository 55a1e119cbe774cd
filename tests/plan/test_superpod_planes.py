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
(``tests/data/plan/superpod-h100/cluster.yaml``) is that build with the project's per-SU layouts; where its plan differs
from Tables 7 and 8, ``FOUR_SUS`` pins both figures and README "SuperPOD switch counts" says why.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
import yaml

from fabric.catalog.switches import SWITCH_MODELS
from fabric.model import ClusterSpec
from fabric.plan import ClusterPlan, plan_cluster
from tests.conftest import DATA

SUPERPOD_H100 = DATA / "plan" / "superpod-h100" / "cluster.yaml"

# Table 4: (SUs, nodes, InfiniBand leaves, InfiniBand spines).
TABLE_4 = [(1, 31, 8, 4), (2, 63, 16, 8), (4, 127, 32, 16)]

# At 4 SUs: (the RA's figure, Table 7 or 8; this plan's). README "SuperPOD switch counts" explains each difference.
FOUR_SUS = {
    "compute fabric switches": (48, 48),
    "in-band switches": (8, 10),
    "OOB switches": (8, 5),
    "in-band cables to DGX systems": (254, 127),
    "OOB cables to DGX BMCs": (127, 127),
    "OOB cables to in-band switches": (8, 10),
    "OOB uplinks": (16, 10),
}


def superpod_h100(nodes: int) -> ClusterPlan:
    """The plan of the RA build with ``nodes`` DGX H100 systems (31, 63 or 127 for 1, 2 or 4 SUs)."""
    data: dict[str, Any] = yaml.safe_load(SUPERPOD_H100.read_text(encoding="utf-8"))
    data["nodes"][0]["count"] = nodes
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


def test_four_sus_against_tables_7_and_8() -> None:
    plan = superpod_h100(127)
    assert plan.fabric is not None
    assert plan.oob is not None
    (inband,) = plan.storage
    oob = Counter(x.kind for x in plan.oob.links)
    inband_names = {s.name for s in inband.switches}
    measured = {
        "compute fabric switches": len(plan.fabric.switches),
        "in-band switches": len(inband.switches),
        "OOB switches": len(plan.oob.switches),
        "in-band cables to DGX systems": sum(1 for x in inband.links if x.kind == "inband"),
        "OOB cables to DGX BMCs": oob["bmc"],
        "OOB cables to in-band switches": sum(1 for x in plan.oob.links if x.b_device in inband_names),
        "OOB uplinks": oob["uplink"],
    }
    assert measured == {name: planned for name, (_, planned) in FOUR_SUS.items()}
