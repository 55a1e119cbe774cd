"""Topology sizing against the NVIDIA DGX SuperPOD H100 reference and the examples' intent."""

from __future__ import annotations

import pytest

from fabric.model import ClusterSpec, load_cluster
from fabric.plan import plan_cluster


def superpod(scalable_units: int) -> ClusterSpec:
    return ClusterSpec.model_validate(
        {
            "name": "superpod",
            "target": "onprem",
            "planes": {
                "compute": {"transport": "infiniband", "cidr": "10.200.0.0/16", "mtu": 4092},
                "storage": {"cidr": "10.201.0.0/16", "mtu": 9000},
                "inband": {"cidr": "10.202.0.0/16"},
                "oob": {"cidr": "10.203.0.0/16"},
            },
            "fabric": {
                "topology": "rail-optimized",
                "leaf": {"model": "qm9700", "nos": "mlnx-os"},
                "spine": {"model": "qm9700", "nos": "mlnx-os"},
                "su_size": 32,
            },
            "infiniband": {"subnet_manager": {"kind": "ufm", "nodes": [{"host": "dgx001", "priority": 15}]}},
            "nodes": [{"group": "gpu", "role": "gpu", "count": 32 * scalable_units - 1, "hostname": "dgx{index:03d}", "hardware": "dgx-h100"}],
        }
    )


@pytest.mark.parametrize(("sus", "leaves", "spines"), [(1, 8, 4), (2, 16, 8), (3, 24, 16), (4, 32, 16)])
def test_dgx_superpod_h100_reference_numbers(sus: int, leaves: int, spines: int) -> None:
    fabric = plan_cluster(superpod(sus)).fabric
    assert fabric is not None
    assert (len(fabric.leaves), len(fabric.spines)) == (leaves, spines)
    assert fabric.scalable_units == sus
    assert sum(1 for link in fabric.links if link.kind == "fabric") == leaves * 32
    assert sum(1 for link in fabric.links if link.kind == "host") == (32 * sus - 1) * 8
    assert fabric.tiers[0].oversubscription == "1:1"


def test_rail_optimized_puts_port_n_of_every_node_on_rail_leaf_n() -> None:
    plan = plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml"))
    for node in plan.nodes:
        if node.role != "gpu":
            continue
        compute = [i for i in node.interfaces if i.plane == "compute"]
        su = (node.node_id - 1) // 32 + 1
        assert [i.switch for i in compute] == [f"leaf-su{su:02d}-r{r}" for r in range(1, 9)]
        assert len({i.switch_port for i in compute}) == 1, "a node sits in the same slot on every rail leaf"


def test_every_leaf_reaches_every_spine_equally() -> None:
    fabric = plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml")).fabric
    assert fabric is not None
    for leaf in fabric.leaves:
        peers = [link.b_device for link in fabric.links if link.kind == "fabric" and link.a_device == leaf.name]
        counts = {spine.name: peers.count(spine.name) for spine in fabric.spines}
        assert len(set(counts.values())) == 1
        assert sum(counts.values()) == fabric.uplinks_per_leaf


def test_compute_and_storage_planes_never_carry_a_default_route() -> None:
    for example in ("onprem-roce", "onprem-ib", "lab"):
        plan = plan_cluster(load_cluster(f"inventories/{example}/cluster.yaml"))
        assert [p.name for p in plan.planes if p.default_route] in (["inband"], [])
        assert not plan.plane("compute").gateway
        assert not plan.plane("storage").gateway


def test_infiniband_fabric_has_no_ip_underlay() -> None:
    plan = plan_cluster(load_cluster("inventories/onprem-ib/cluster.yaml"))
    assert plan.fabric is not None
    assert all(s.asn is None and s.loopback is None for s in plan.fabric.switches)
    ib_ports = [i for n in plan.nodes for i in n.interfaces if i.plane == "compute"]
    assert all(i.link_layer == "infiniband" and i.name.startswith("ibp") for i in ib_ports)
    sm_ports = [i for n in plan.nodes if n.group == "sm" for i in n.interfaces if i.plane == "compute"]
    assert {i.switch for i in sm_ports} == {"leaf-su01-r7", "leaf-su01-r8"}, "SM hosts spread over rails from their slot"


def test_lab_has_two_spines_and_nodes_in_different_racks() -> None:
    plan = plan_cluster(load_cluster("inventories/lab/cluster.yaml"))
    assert plan.fabric is not None
    assert [s.name for s in plan.fabric.switches] == ["spine01", "spine02", "leaf01", "leaf02"]
    racks = {i.switch for n in plan.nodes for i in n.interfaces if i.plane == "compute"}
    assert racks == {"leaf01", "leaf02"}
