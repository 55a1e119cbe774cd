"""Hypothesis properties of the storage / in-band planner: every switch port used once, every host port cabled once,
bonds on both switches of one pair, stable cabling when a node is added, and render + lint clean for any valid input."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric.lint.storage import lint_storage, storage_config_files
from fabric.model import ClusterSpec
from fabric.plan import ClusterPlan, plan_cluster
from fabric.render.storage import render_storage


@st.composite
def storage_clusters(draw: st.DrawFn) -> dict[str, Any]:
    model, nos = draw(st.sampled_from([("sn5600", "cumulus"), ("sn5600", "sonic"), ("7060x6-64pe", "eos")]))
    network: dict[str, Any] = {
        "converged": True,
        "topology": draw(st.sampled_from(["leaf-spine", "collapsed"])),
        "leaf": {"model": model, "nos": nos} | ({"sonic_iccpd": True} if nos == "sonic" else {}),
        "spine": {"model": model, "nos": nos} | ({"sonic_iccpd": True} if nos == "sonic" else {}),
        "attach": draw(st.sampled_from(["mlag", "per-port"])),
        "separation": draw(st.sampled_from(["vlan", "vrf"])),
        "leaf_pairs_per_su": draw(st.integers(1, 2)),
        "uplinks_per_spine": draw(st.integers(1, 4)),
        "appliances": [
            {"name": f"nas{i}", "ports": draw(st.integers(1, 4)), "address": f"10.101.255.{i + 1}"} for i in range(draw(st.integers(0, 3)))
        ],
    }
    if network["topology"] == "leaf-spine" and draw(st.booleans()):  # pairs shared across SUs, sized by the leaf's ports
        network["leaf_pairs"] = "packed"
        del network["leaf_pairs_per_su"]
        if draw(st.booleans()):  # SN4600C at 100G: 64 ports, so several pairs (23-27 slots each) and SUs sharing one
            tier = {"model": "sn4600c", "nos": "cumulus"}
            network.update(leaf=tier, spine=tier, speed_gbps=100)
    return {
        "name": "prop",
        "target": "onprem",
        "planes": {
            "compute": {"transport": "infiniband", "cidr": "10.100.0.0/16", "mtu": 4092},
            "storage": {"cidr": "10.101.0.0/16", "mtu": draw(st.sampled_from([9000, 9216])), "vlan": 101, "network": network},
            "inband": {"cidr": "10.102.0.0/16", "vlan": 102, "gateway": "10.102.0.1"},
            "oob": {"cidr": "10.103.0.0/16", "gateway": "10.103.0.1"},
        },
        "fabric": {
            "topology": "rail-optimized",
            "leaf": {"model": "qm9700", "nos": "mlnx-os"},
            "spine": {"model": "qm9700", "nos": "mlnx-os"},
            "su_size": draw(st.sampled_from([8, 16, 32])),
        },
        "infiniband": {"subnet_manager": {"kind": "opensm", "nodes": [{"host": "sm01", "priority": 15}]}},
        "nodes": [
            {"group": "gpu", "role": "gpu", "count": draw(st.integers(1, 48)), "hostname": "gpu{index:03d}", "hardware": "dgx-h100"},
            {"group": "sm", "role": "subnet-manager", "count": 1, "hostname": "sm{index:02d}", "hardware": "mgmt-server-ib", "id_offset": 60},
            {
                "group": "stor",
                "role": "storage",
                "count": draw(st.integers(0, 4)),
                "hostname": "stor{index:02d}",
                "hardware": "storage-server",
                "id_offset": 1000,
            },
        ],
    }


def _plan(data: dict[str, Any]) -> ClusterPlan:
    return plan_cluster(ClusterSpec.model_validate(data))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(storage_clusters())
def test_ports_cables_and_bonds_are_consistent(data: dict[str, Any]) -> None:
    plan = _plan(data)
    (net,) = plan.storage
    switch_ends = Counter((x.a_device, x.a_port) for x in net.links) + Counter(
        (x.b_device, x.b_port) for x in net.links if x.kind in ("peerlink", "uplink")
    )
    assert {k: n for k, n in switch_ends.items() if n > 1} == {}
    hosts = Counter((x.b_device, x.b_port) for x in net.links if x.kind in ("storage", "inband"))
    expected = {(n.hostname, i.name) for n in plan.nodes for i in n.interfaces if i.plane in ("storage", "inband")}
    expected |= {(a["name"], f"p{k + 1}") for a in data["planes"]["storage"]["network"]["appliances"] for k in range(a["ports"])}
    assert set(hosts) == expected
    assert set(hosts.values()) <= {1}
    sides: dict[tuple[str, str], set[str]] = {}
    for x in net.links:
        if x.bond is not None and x.kind in ("storage", "inband"):
            sides.setdefault((x.b_device, x.bond), set()).add(x.a_device)
    assert all(len(s) == 2 and len({d[:-2] for d in s}) == 1 for s in sides.values())
    switches = {s.name: s for s in net.switches}
    assert all(s.ports_used <= s.ports_total for s in switches.values())


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(storage_clusters())
def test_render_is_lint_clean_and_adding_a_node_moves_no_cable(data: dict[str, Any]) -> None:
    plan = _plan(data)
    files = render_storage(plan)
    configs = {n: files.get(f"switches/{n}/{f}") for n, f in storage_config_files(plan).items()}
    assert lint_storage(plan, configs) == []
    before = {(x.b_device, x.b_port): (x.a_device, x.a_port) for x in plan.storage[0].links if x.kind in ("storage", "inband")}
    data["nodes"][0]["count"] += 1
    after = {(x.b_device, x.b_port): (x.a_device, x.a_port) for x in _plan(data).storage[0].links if x.kind in ("storage", "inband")}
    assert {k: v for k, v in before.items() if after.get(k) != v} == {}
