"""Hypothesis properties of the planner: uniqueness, pool membership, /31 pairing, determinism, stability."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fabric.model import ClusterSpec
from fabric.plan import ClusterPlan, check_cluster, plan_cluster
from fabric.plan.serialize import plan_to_json

POOLS = {"compute": "10.100.0.0/16", "storage": "10.101.0.0/16", "inband": "10.102.0.0/16", "oob": "10.103.0.0/16"}


@st.composite
def roce_clusters(draw: st.DrawFn) -> dict[str, Any]:
    topology = draw(st.sampled_from(["rail-optimized", "fat-tree"]))
    leaf = draw(st.sampled_from([("sn5600", "sonic"), ("sn5600", "cumulus"), ("7060x5-64s", "eos"), ("n9k-c9364d-gx2a", "nxos")]))
    hardware = draw(st.sampled_from(["dgx-h100", "hgx-h100-4x400"]))
    return {
        "name": "prop",
        "target": "onprem",
        "planes": {
            "compute": {"transport": "roce", "cidr": POOLS["compute"], "mtu": 9000},
            "storage": {"cidr": POOLS["storage"], "mtu": 9000},
            "inband": {"cidr": POOLS["inband"], "gateway": "10.102.0.1"},
            "oob": {"cidr": POOLS["oob"], "gateway": "10.103.0.1"},
        },
        "fabric": {
            "topology": topology,
            "leaf": {"model": leaf[0], "nos": leaf[1]},
            "spine": {"model": leaf[0], "nos": leaf[1]},
            "su_size": draw(st.sampled_from([4, 8, 16, 32])),
            "underlay": {"addressing": draw(st.sampled_from(["p2p-31", "unnumbered"]))},
        },
        "nodes": [
            {"group": "gpu", "role": "gpu", "count": draw(st.integers(1, 70)), "hostname": "gpu{index:03d}", "hardware": hardware},
            {
                "group": "stor",
                "role": "storage",
                "count": draw(st.integers(0, 6)),
                "hostname": "stor{index:02d}",
                "hardware": "storage-server",
                "id_offset": 1000,
            },
        ],
    }


def _plan(data: dict[str, Any]) -> ClusterPlan:
    spec = ClusterSpec.model_validate(data)
    assume(not any(f.severity == "error" for f in check_cluster(spec)))
    return plan_cluster(spec)


def _addresses(plan: ClusterPlan) -> list[tuple[str, str]]:
    """(plane or pool, address) for every allocated address."""
    found = [(i.plane, i.address) for n in plan.nodes for i in n.interfaces if i.address]
    found += [("compute", f"{i.peer_address}/31") for n in plan.nodes for i in n.interfaces if i.peer_address]
    if plan.fabric:
        found += [("loopback", s.loopback) for s in plan.fabric.switches if s.loopback]
        found += [("oob", s.mgmt_address) for s in plan.fabric.switches]
        found += [("p2p", f"{a}/31") for link in plan.fabric.links if link.kind == "fabric" for a in (link.a_address, link.b_address) if a]
    return found


FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(roce_clusters())
def test_addresses_are_unique_and_inside_their_pools(data: dict[str, Any]) -> None:
    plan = _plan(data)
    addresses = _addresses(plan)
    ips = [IPv4Interface(a).ip for _, a in addresses]
    assert len(ips) == len(set(ips))
    pools = {**POOLS, "loopback": "10.255.0.0/16", "p2p": "10.254.0.0/16"}
    for pool, address in addresses:
        assert IPv4Interface(address).ip in IPv4Network(pools[pool]), (pool, address)


@FAST
@given(roce_clusters())
def test_both_ends_of_every_link_share_one_31(data: dict[str, Any]) -> None:
    plan = _plan(data)
    assert plan.fabric is not None
    for link in plan.fabric.links:
        if link.subnet is None:
            continue
        subnet = IPv4Network(link.subnet)
        assert subnet.prefixlen == 31
        assert {IPv4Address(link.a_address), IPv4Address(link.b_address)} == set(subnet)


@FAST
@given(roce_clusters())
def test_same_input_gives_byte_identical_plan(data: dict[str, Any]) -> None:
    assert plan_to_json(_plan(data)) == plan_to_json(_plan(data))


@FAST
@given(roce_clusters(), st.integers(1, 40))
def test_adding_nodes_changes_no_existing_allocation(data: dict[str, Any], extra: int) -> None:
    before = _plan(data)
    data["nodes"][0]["count"] += extra
    spec = ClusterSpec.model_validate(data)
    assume(not any(f.severity == "error" for f in check_cluster(spec)))
    after = plan_cluster(spec)
    after_nodes = {n.hostname: n for n in after.nodes}
    for node in before.nodes:
        assert after_nodes[node.hostname] == node, f"{node.hostname} changed"
    assert before.fabric is not None
    assert after.fabric is not None
    after_switches = {s.name: s for s in after.fabric.switches}
    for switch in before.fabric.switches:
        assert after_switches[switch.name] == switch
    host_links_after = {(link.a_device, link.a_port): link for link in after.fabric.links if link.kind == "host"}
    for link in before.fabric.links:
        if link.kind == "host":
            assert host_links_after[(link.a_device, link.a_port)] == link
    uplinks_after = {(link.a_device, link.a_port): (link.subnet, link.a_address) for link in after.fabric.links if link.kind == "fabric"}
    for link in before.fabric.links:
        if link.kind == "fabric":
            assert uplinks_after[(link.a_device, link.a_port)] == (link.subnet, link.a_address)


@settings(max_examples=40, deadline=None)
@given(roce_clusters())
def test_plan_never_raises_when_checks_pass(data: dict[str, Any]) -> None:
    spec = ClusterSpec.model_validate(data)
    if not any(f.severity == "error" for f in check_cluster(spec)):
        plan_cluster(spec)
