"""Multi-plane compute fabrics (fabric.planes): each plane its own fabric, own pools and ASNs, and no cable between them."""

from __future__ import annotations

import csv
import io
from ipaddress import IPv4Address, IPv4Network
from typing import Any

import pytest
import yaml

from fabric.errors import InputError
from fabric.model import ClusterSpec
from fabric.plan import plan_cluster
from fabric.plan.compute.planes import _PLANE_NAME, block, plane_figures, plane_of, port_plane  # pyright: ignore[reportPrivateUsage] - the pattern plane_of follows
from fabric.plan.types import ClusterPlan, FabricPlan
from fabric.render import render_cabling
from tests.conftest import ROOT

TWO_PLANE = ROOT / "inventories" / "two-plane" / "cluster.yaml"


def spec(**fabric: Any) -> ClusterSpec:
    data = yaml.safe_load(TWO_PLANE.read_text(encoding="utf-8"))
    data["fabric"].update(fabric)
    return ClusterSpec.model_validate(data)


def fabric_of(plan: ClusterPlan) -> FabricPlan:
    assert plan.fabric is not None
    return plan.fabric


def errors(definition: ClusterSpec) -> list[str]:
    with pytest.raises(InputError) as caught:
        plan_cluster(definition)
    return [f"{f.dotted_path}: {f.message}" for f in caught.value.errors]


def test_port_k_of_every_nic_lands_in_plane_k_on_its_own_leaves() -> None:
    plan = plan_cluster(spec())
    node = plan.nodes[0]
    ports = [i for i in node.interfaces if i.plane == "compute"]
    assert len(ports) == 16
    # the profile lists the ports NIC by NIC: f0 (port 1 of the card) is plane 1, f1 plane 2
    assert [(i.name, plane_of(i.switch)) for i in ports[:4]] == [
        ("enp24s0f0np0", 1),
        ("enp24s0f1np1", 2),
        ("enp64s0f0np0", 1),
        ("enp64s0f1np1", 2),
    ]
    # rails count per plane: NIC n's two ports are rail n + 1 of their planes
    assert [(i.switch, i.rail) for i in ports[:4]] == [
        ("p1-leaf-su01-r1", 1),
        ("p2-leaf-su01-r1", 1),
        ("p1-leaf-su01-r2", 2),
        ("p2-leaf-su01-r2", 2),
    ]


def test_each_plane_is_a_whole_fabric_and_no_cable_joins_two() -> None:
    fabric = fabric_of(plan_cluster(spec()))
    assert [s.name for s in fabric.spines] == ["p1-spine01", "p1-spine02", "p2-spine01", "p2-spine02"]
    assert len(fabric.leaves) == 16
    assert {plane_of(s.name) for s in fabric.switches} == {1, 2}
    for link in fabric.links:
        if link.kind == "fabric":
            assert plane_of(link.a_device) == plane_of(link.b_device), link
    # every leaf of a plane reaches both of its plane's spines, and only them
    peers = {(x.a_device, x.b_device) for x in fabric.links if x.kind == "fabric"}
    assert {b for a, b in peers if a == "p2-leaf-su01-r3"} == {"p2-spine01", "p2-spine02"}


def test_each_plane_takes_its_own_block_of_every_pool_and_its_own_asns() -> None:
    fabric = fabric_of(plan_cluster(spec()))
    blocks = {
        1: (IPv4Network("10.255.0.0/17"), IPv4Network("10.254.0.0/17"), IPv4Network("10.100.0.0/17")),
        2: (IPv4Network("10.255.128.0/17"), IPv4Network("10.254.128.0/17"), IPv4Network("10.100.128.0/17")),
    }
    for s in fabric.switches:
        plane = plane_of(s.name)
        assert plane is not None
        assert s.loopback is not None
        assert IPv4Address(s.loopback.split("/")[0]) in blocks[plane][0]
    for x in fabric.links:
        plane = plane_of(x.a_device)
        assert plane is not None
        assert x.a_address is not None
        assert IPv4Address(x.a_address) in (blocks[plane][1] if x.kind == "fabric" else blocks[plane][2])
    asns = {plane: {s.asn for s in fabric.switches if plane_of(s.name) == plane} for plane in (1, 2)}
    assert not asns[1] & asns[2]
    assert {s.asn for s in fabric.spines} == {65100, 65099}
    assert [s.asn for s in fabric.leaves] == list(range(65101, 65117))  # numbered across planes
    mgmt = [s.mgmt_address for s in fabric.switches]
    assert len(set(mgmt)) == len(mgmt)


def test_per_plane_and_total_figures() -> None:
    fabric = fabric_of(plan_cluster(spec()))
    figures = plane_figures(fabric)
    # 16 nodes x 8 ports x 200G per plane; 8 leaves x 16 uplinks x 200G; the cut is half of it each way
    assert [(f.plane, f.switches, f.host_gbps, f.uplink_gbps, f.bisection_gbps, f.oversubscription) for f in figures] == [
        (1, 10, 25600, 25600, 12800, "1:1"),
        (2, 10, 25600, 25600, 12800, "1:1"),
    ]
    assert fabric.bisection_gbps == sum(f.bisection_gbps for f in figures) == 25600
    assert [(t.tier, t.switches) for t in fabric.tiers] == [("leaf", 16), ("spine", 4)]


def test_oversubscribed_planes_say_so_per_plane() -> None:
    figures = plane_figures(fabric_of(plan_cluster(spec(oversubscription="2:1", spines=None))))
    assert {f.oversubscription for f in figures} == {"2:1"}
    assert {f.host_gbps // f.uplink_gbps for f in figures} == {2}


def test_split_by_nic_sends_whole_nics_to_alternate_planes() -> None:
    plan = plan_cluster(spec(plane_split="nic"))
    ports = [i for i in plan.nodes[0].interfaces if i.plane == "compute"]
    # NIC n (both its ports) to plane n % 2 + 1: rails per plane are still 8 (two ports of each of four NICs)
    assert [plane_of(i.switch) for i in ports[:6]] == [1, 1, 2, 2, 1, 1]
    assert {len({i.switch for i in ports if plane_of(i.switch) == k}) for k in (1, 2)} == {8}


def test_port_plane_rules() -> None:
    assert [port_plane(p, 4, 2, "port") for p in range(8)] == [1, 2, 1, 2, 1, 2, 1, 2]
    assert [port_plane(p, 2, 4, "nic") for p in range(8)] == [1, 1, 2, 2, 3, 3, 4, 4]
    assert str(block(IPv4Network("10.0.0.0/16"), 4, 4)) == "10.0.192.0/18"


def test_three_tier_planes_plan_each_plane_as_pods() -> None:
    data = yaml.safe_load(TWO_PLANE.read_text(encoding="utf-8"))
    data["fabric"].pop("spines")
    data["fabric"]["su_size"] = 4
    data["fabric"]["uplinks_per_leaf"] = 4
    data["fabric"]["super_spine"] = {"model": "sn5600", "nos": "sonic", "leaves_per_pod": 8, "pods": 4}
    fabric = fabric_of(plan_cluster(ClusterSpec.model_validate(data)))
    tops = fabric.super_spines
    assert tops
    assert {plane_of(s.name) for s in tops} == {1, 2}
    assert tops[0].name.startswith("p1-superspine")
    assert {s.asn for s in tops if plane_of(s.name) == 2} == {64999}
    for link in fabric.links:
        assert plane_of(link.a_device) == (plane_of(link.b_device) or plane_of(link.a_device))
    pod_asns = {plane: {s.asn for s in fabric.spines if plane_of(s.name) == plane} for plane in (1, 2)}
    assert not pod_asns[1] & pod_asns[2]


def test_shared_spines_plan_one_spine_layer_for_both_planes() -> None:
    fabric = fabric_of(plan_cluster(spec(plane_spines="shared")))  # the rest: tests/plan/test_shared_spines.py
    assert [s.name for s in fabric.spines] == ["spine01", "spine02"]
    assert {x.b_device for x in fabric.links if x.kind == "fabric"} == {"spine01", "spine02"}


def test_a_profile_with_one_port_per_nic_cannot_split_by_port() -> None:
    data = yaml.safe_load(TWO_PLANE.read_text(encoding="utf-8"))
    data["hardware"]["hgx-h200-8x2x200"]["ports"]["compute"]["ports_per_nic"] = 1
    (message,) = errors(ClusterSpec.model_validate(data))
    assert "fabric.plane_split" in message
    assert "state ports_per_nic" in message


def test_infiniband_planes_are_refused_not_half_built() -> None:
    data = yaml.safe_load((ROOT / "inventories" / "onprem-ib" / "cluster.yaml").read_text(encoding="utf-8"))
    data["fabric"].update(planes=2, plane_split="nic")
    assert any("InfiniBand planes are not built yet" in m for m in errors(ClusterSpec.model_validate(data)))


def test_asns_two_planes_would_share_are_refused() -> None:
    # plane 2's spines take spine_asn - 1: with the leaves starting there, plane 1's first leaf shares it
    messages = errors(spec(underlay={"spine_asn": 65102, "leaf_asn_base": 65101}))
    assert any("fabric.underlay" in m and "planes need their own ASNs" in m for m in messages), messages


def test_cabling_carries_the_plane_only_on_multi_plane_fabrics() -> None:
    rows = list(csv.DictReader(io.StringIO(render_cabling(plan_cluster(spec())))))
    assert {r["fabric_plane"] for r in rows} == {"p1", "p2"}
    assert all(r["fabric_plane"] == r["device"][:2] for r in rows)
    one = yaml.safe_load(TWO_PLANE.read_text(encoding="utf-8"))
    one["fabric"]["planes"] = 1
    one["hardware"]["hgx-h200-8x2x200"]["ports"]["compute"].pop("ports_per_nic")
    header = render_cabling(plan_cluster(ClusterSpec.model_validate(one))).splitlines()[0]
    assert "fabric_plane" not in header


@pytest.mark.parametrize(
    "name", ["p1-leaf01", "p9-x", "p2-", "p0-leaf", "p10-leaf", "P1-leaf", "p1", "p1leaf", "p\u0663-leaf", "", "leaf-p1-x", "p1-\n"]
)
def test_plane_of_reads_the_plane_prefix_as_its_pattern_does(name: str) -> None:
    """``plane_of`` tests the name by hand (cabling.csv asks it of every cable): it must agree with ``_PLANE_NAME``."""
    match = _PLANE_NAME.match(name)
    assert plane_of(name) == (int(match.group(1)) if match else None)
