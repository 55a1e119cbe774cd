"""QM9700 port layout on a DGX SuperPOD H100 scalable unit (issue 12: are leaf uplinks numbered right?).

Sources:
- [mlnxos-q2] NVIDIA MLNX-OS User Manual v3.11.2016, "InfiniBand Interface": Quantum-2 ports are ``<Asic/Cage/Port>``,
  each cage holding 2 physical ports (``interface ib 1/3/1``, ``interface ib 1/3/2``); QM9700 has 32 cages
  (fabric/catalog/data/switches/qm9700.yaml, README there).
- NVIDIA DGX SuperPOD H100 RA (docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-h100,
  "Network Fabrics", Table 4): one SU is 8 leaves and 4 spines with 256 spine-leaf cables, so each leaf has 32 uplinks,
  8 to each spine, and 64 - 32 = 32 ports left for servers.

The layout the planner intends: host ports fill the leaf's cages from cage 1 (``IB1/1/1``, ``IB1/1/2``, ``IB1/2/1``
…), uplinks take every port of the whole cages after them in order, and uplink ``j`` goes to spine ``j % spines``.
So no uplink port is skipped or used twice, and the ports one leaf has towards one spine are every ``spines``-th
uplink: towards spine01 ``IB1/17/1``, ``IB1/19/1``, … ``IB1/31/1``, which is what the MLNX-OS engineer saw.
"""

from __future__ import annotations

from fabric.plan import plan_cluster
from tests.plan.test_topology import superpod

EVERY_PORT = [f"IB1/{cage}/{port}" for cage in range(1, 33) for port in (1, 2)]  # [mlnxos-q2]: 32 cages x 2


def test_a_superpod_leaf_uses_every_uplink_port_of_cages_17_to_32_in_order() -> None:
    fabric = plan_cluster(superpod(1)).fabric
    assert fabric is not None
    assert (len(fabric.leaves), len(fabric.spines), fabric.host_ports_per_leaf, fabric.uplinks_per_leaf) == (8, 4, 32, 32)
    for leaf in fabric.leaves:
        host = [link.a_port for link in fabric.links if link.kind == "host" and link.a_device == leaf.name]
        up = [link for link in fabric.links if link.kind == "fabric" and link.a_device == leaf.name]
        assert host == EVERY_PORT[: len(host)]  # 31 nodes in the first SU (RA Table 4 note): IB1/1/1 … IB1/16/1
        assert [link.a_port for link in up] == EVERY_PORT[32:]  # IB1/17/1 … IB1/32/2: none skipped, none twice
        assert [link.b_device for link in up] == [f"spine{j % 4 + 1:02d}" for j in range(32)]
        towards_spine01 = [link.a_port for link in up if link.b_device == "spine01"]
        assert towards_spine01 == [f"IB1/{cage}/1" for cage in range(17, 32, 2)]


def test_a_superpod_spine_takes_each_leaf_on_whole_consecutive_cages() -> None:
    fabric = plan_cluster(superpod(1)).fabric
    assert fabric is not None
    for spine in fabric.spines:
        ports = [(link.a_device, link.b_port) for link in fabric.links if link.kind == "fabric" and link.b_device == spine.name]
        assert sorted(p for _, p in ports) == sorted(EVERY_PORT)  # 8 leaves x 8 links: every spine port once
        for k, leaf in enumerate(fabric.leaves):
            assert [p for name, p in ports if name == leaf.name] == EVERY_PORT[8 * k : 8 * k + 8]  # leaf k+1: cages 4k+1 … 4k+4
