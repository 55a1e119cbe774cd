"""Hypothesis properties of the OOB planner over placements, ``switches_per_su`` and ``mgmt_switch``: every BMC and
switch-management port cabled once on a free port within the budget, or an error on the OOB network's own keys; render +
lint clean; and adding a node moves no SU cable."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric.errors import InputError
from fabric.lint.oob import lint_oob, oob_config_files
from fabric.model import ClusterSpec
from fabric.plan import ClusterPlan, plan_cluster
from fabric.render.oob import render_oob


@st.composite
def oob_clusters(draw: st.DrawFn) -> dict[str, Any]:
    su_size = draw(st.sampled_from([8, 16, 32]))
    placement = draw(st.sampled_from(["su", "rack"]))
    oob: dict[str, Any] = {"placement": placement, "mgmt_switch": draw(st.booleans()), "dhcp_servers": ["10.103.0.10"]}
    if placement == "su":
        oob["switches_per_su"] = draw(st.integers(1, 3))
    else:
        oob["nodes_per_rack"] = draw(st.sampled_from([4, 8, 16]))
    storage: dict[str, Any] = {"cidr": "10.101.0.0/16", "mtu": 9000, "vlan": 101}
    if draw(st.booleans()):
        tier = {"model": "sn4600c", "nos": "cumulus"}
        pairs = {"leaf_pairs": "packed"} if draw(st.booleans()) else {"leaf_pairs_per_su": 2}
        storage["network"] = {"leaf": tier, "spine": tier, "speed_gbps": 100, "uplinks_per_spine": 2, **pairs}
    return {
        "name": "prop",
        "target": "onprem",
        "planes": {
            "compute": {"transport": "infiniband", "cidr": "10.100.0.0/16", "mtu": 4092},
            "storage": storage,
            "inband": {"cidr": "10.102.0.0/16", "vlan": 102, "gateway": "10.102.0.1"},
            "oob": {"cidr": "10.103.0.0/16", "gateway": "10.103.0.1", "network": oob},
        },
        "fabric": {
            "topology": "rail-optimized",
            "leaf": {"model": "qm9700", "nos": "mlnx-os"},
            "spine": {"model": "qm9700", "nos": "mlnx-os"},
            "su_size": su_size,
        },
        "infiniband": {"subnet_manager": {"kind": "ufm", "nodes": [{"host": "gpu001", "priority": 15}]}},
        "nodes": [
            {"group": "gpu", "role": "gpu", "count": draw(st.integers(1, 4 * su_size - 1)), "hostname": "gpu{index:03d}", "hardware": "dgx-h100"},
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


def _plan(data: dict[str, Any]) -> ClusterPlan | None:
    """The plan, or None when the OOB network cannot hold it (then the only errors are on the OOB network's keys)."""
    try:
        return plan_cluster(ClusterSpec.model_validate(data))
    except InputError as exc:
        paths = {f.dotted_path for f in exc.findings}
    assert paths <= {"planes.oob.network.mgmt_switch", "planes.oob.network.placement"}, paths
    return None


def _su_cables(plan: ClusterPlan) -> dict[str, tuple[str, str]]:
    """Where every SU node's BMC and every SU leaf's management port is cabled."""
    assert plan.oob is not None
    in_su = {n.hostname for n in plan.nodes if n.scalable_unit is not None}
    in_su |= {s.name for s in plan.fabric.leaves} if plan.fabric else set()
    return {x.b_device: (x.a_device, x.a_port) for x in plan.oob.links if x.b_device in in_su}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(oob_clusters())
def test_every_management_port_is_cabled_once_within_the_budget(data: dict[str, Any]) -> None:
    plan = _plan(data)
    if plan is None:
        return
    assert plan.oob is not None
    access = [x for x in plan.oob.links if x.kind != "uplink"]
    assert {k: n for k, n in Counter((x.a_device, x.a_port) for x in access).items() if n > 1} == {}
    ends = Counter(x.b_device for x in access)
    expected = {n.hostname for n in plan.nodes if any(i.kind == "bmc" for i in n.interfaces)}
    expected |= {s.name for s in plan.fabric.switches} if plan.fabric else set()
    expected |= {s.name for net in plan.storage for s in net.switches}
    assert set(ends) == expected
    assert set(ends.values()) == {1}
    assert all(s.ports_used <= s.ports_total for s in plan.oob.switches)
    network = data["planes"]["oob"]["network"]
    assert ("oob-mgmt" in {s.name for s in plan.oob.switches}) == network["mgmt_switch"]
    assert Counter(x.a_device for x in plan.oob.links if x.kind == "uplink") == {s.name: 2 for s in plan.oob.switches}


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(oob_clusters())
def test_render_is_lint_clean_and_adding_a_node_moves_no_su_cable(data: dict[str, Any]) -> None:
    plan = _plan(data)
    if plan is None:
        return
    files = render_oob(plan)
    assert lint_oob(plan, {n: files.get(f"switches/{n}/{f}") for n, f in oob_config_files(plan).items()}) == []
    data["nodes"][0]["count"] += 1
    grown = _plan(data)
    if grown is None:
        return
    after = _su_cables(grown)
    assert {k: v for k, v in _su_cables(plan).items() if after.get(k) != v} == {}
