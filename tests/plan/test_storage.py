"""The storage / in-band network: switch counts per SU, every storage and in-band port cabled once, budgets, stability."""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path

import pytest

from fabric.errors import InputError
from fabric.model import load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from fabric.plan.storage.types import StorageNetworkPlan
from fabric.render.cabling import render_cabling
from tests.conftest import ROOT

EXAMPLE = (ROOT / "inventories" / "onprem-roce" / "cluster.yaml").read_text(encoding="utf-8")
NETWORK = "network: {converged: true, topology: leaf-spine, leaf: {model: sn5600, nos: cumulus}, spine: {model: sn5600, nos: cumulus}}"


def _plan(tmp_path: Path, *, gpus: int = 64, network: str = NETWORK, extra: tuple[tuple[str, str], ...] = ()) -> ClusterPlan:
    text = EXAMPLE.replace("count: 64,", f"count: {gpus},").replace(NETWORK, network)
    for old, new in extra:
        assert old in text
        text = text.replace(old, new)
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "cluster.yaml"
    path.write_text(text, encoding="utf-8")
    return plan_cluster(load_cluster(path))


def _net(plan: ClusterPlan) -> StorageNetworkPlan:
    (net,) = plan.storage
    return net


def _errors(tmp_path: Path, **kwargs: object) -> list[str]:
    with pytest.raises(InputError) as exc:
        _plan(tmp_path, **kwargs)  # type: ignore[arg-type]
    return [f"{f.dotted_path}: {f.message}" for f in exc.value.findings]


@pytest.mark.parametrize("sus", [1, 2, 4])
def test_a_leaf_pair_per_su_a_services_pair_and_a_spine_pair(tmp_path: Path, sus: int) -> None:
    net = _net(_plan(tmp_path, gpus=32 * sus))
    assert [s.name for s in net.spines] == ["stor-spine-a", "stor-spine-b"]
    expected = ["stor-svc-a", "stor-svc-b"] + [f"stor-su{s}-1-{side}" for s in range(1, sus + 1) for side in "ab"]
    assert [s.name for s in net.leaves] == expected
    # Every DGX H100: 2 storage ports (one per side, an MLAG bond) and 1 in-band port (side a) per SU slot.
    kinds = Counter((x.a_device.rsplit("-", 1)[0], x.kind) for x in net.links)
    for s in range(1, sus + 1):
        assert kinds[f"stor-su{s}-1", "storage"] == 64
        assert kinds[f"stor-su{s}-1", "inband"] == 32
        # 4 uplinks from each leaf to each spine, 2 peerlink cables per pair
        assert kinds[f"stor-su{s}-1", "uplink"] == 2 * 2 * 4
    assert kinds["stor-spine", "peerlink"] == 2


def test_every_storage_and_inband_port_is_cabled_once(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    net = _net(plan)
    hosts = [x for x in net.links if x.kind in ("storage", "inband")]
    ends = Counter((x.b_device, x.b_port) for x in hosts)
    ports = {(n.hostname, i.name) for n in plan.nodes for i in n.interfaces if i.plane in ("storage", "inband")}
    assert set(ends) == ports
    assert set(ends.values()) == {1}
    switch_ports = Counter((x.a_device, x.a_port) for x in net.links) + Counter((x.b_device, x.b_port) for x in net.links if x.kind != "storage")
    assert {k: v for k, v in switch_ports.items() if v > 1 and not k[0].startswith(("gpu", "stor0", "mgmt"))} == {}


def test_a_bond_has_one_member_on_each_switch_of_the_pair_with_one_mlag_id(tmp_path: Path) -> None:
    net = _net(_plan(tmp_path))
    bonds: dict[tuple[str, str], list[str]] = {}
    for x in net.links:
        if x.kind == "storage" and x.bond is not None:
            bonds.setdefault((x.b_device, x.bond), []).append(x.a_device)
    assert bonds[("gpu001", "bond1")] == ["stor-su1-1-a", "stor-su1-1-b"]
    assert all(len(sides) == 2 and sides[0][:-1] == sides[1][:-1] for sides in bonds.values())
    ids = Counter((x.a_device, x.mlag_id) for x in net.links if x.mlag_id is not None and x.kind == "storage")
    assert set(ids.values()) == {1}


def test_cabling_csv_has_every_storage_and_inband_cable_with_plane_and_kind(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    rows = list(csv.DictReader(io.StringIO(render_cabling(plan))))
    storage = [r for r in rows if r["device"].startswith("stor-")]
    assert len(storage) == len(_net(plan).links)
    assert Counter(r["kind"] for r in storage) == {"storage": 128 + 8, "inband": 64 + 6, "uplink": 3 * 2 * 8, "peerlink": 8}
    assert {r["plane"] for r in storage if r["kind"] == "uplink"} == {"storage"}
    first = next(r for r in storage if r["peer_device"] == "gpu001")
    assert first == {
        "device": "stor-su1-1-a", "port": "swp1s0", "peer_device": "gpu001", "peer_port": "enp170s0f0np0",
        "speed_gbps": "200", "cable_m": "5", "plane": "storage", "kind": "storage",
        "rack": "", "u": "", "peer_rack": "", "peer_u": "",
    }  # fmt: skip


def test_adding_a_node_moves_no_cable(tmp_path: Path) -> None:
    small = {(x.b_device, x.b_port): (x.a_device, x.a_port) for x in _net(_plan(tmp_path / "a", gpus=40)).links}
    big = {(x.b_device, x.b_port): (x.a_device, x.a_port) for x in _net(_plan(tmp_path / "b", gpus=41)).links}
    assert {k: v for k, v in small.items() if big.get(k) != v} == {}


def test_the_inband_gateway_is_a_vrr_address_on_the_spine_pair_in_its_vrf(tmp_path: Path) -> None:
    net = _net(_plan(tmp_path))
    assert [s.gateways for s in net.spines] == [
        (("inband", 102, "vrf-inband", "10.102.255.253/16", "10.102.0.1"),),
        (("inband", 102, "vrf-inband", "10.102.255.254/16", "10.102.0.1"),),
    ]
    assert all(s.gateways == () for s in net.leaves)
    assert [(s.plane, s.vlan, s.mtu, s.vrf) for s in net.segments] == [("storage", 101, 9000, "vrf-storage"), ("inband", 102, 1500, "vrf-inband")]


def test_oversubscription_is_host_over_uplink_bandwidth_of_the_busiest_leaf(tmp_path: Path) -> None:
    # su leaf a: 32 x 200G storage + 32 x 100G in-band = 9600 Gb/s over 2 spines x 4 x 200G = 1600 Gb/s
    assert _net(_plan(tmp_path)).oversubscription == "6.00:1"


def test_a_leaf_out_of_ports_is_an_error_with_the_numbers(tmp_path: Path) -> None:
    network = "network: {leaf: {model: sn4600c, nos: cumulus}, spine: {model: sn4600c, nos: cumulus}, speed_gbps: 100}"
    errors = _errors(tmp_path, network=network)
    assert errors[0] == (
        "planes.storage.network.leaf.model: stor-su1-1-a needs 74 ports at 100 Gb/s (64 host, 8 uplink, 2 peerlink) but the sn4600c has 64; "
        "raise leaf_pairs_per_su, lower the planes' max_ports_per_node or pick a leaf with more ports"
    )
    fixed = network.replace("speed_gbps: 100", "speed_gbps: 100, leaf_pairs_per_su: 2")
    assert [s.name for s in _net(_plan(tmp_path, network=fixed)).leaves][2:4] == ["stor-su1-1-a", "stor-su1-1-b"]


def test_collapsed_is_one_pair_with_the_gateways(tmp_path: Path) -> None:
    net = _net(_plan(tmp_path, gpus=16, network="network: {topology: collapsed}"))
    assert [s.name for s in net.switches] == ["stor-a", "stor-b"]
    assert net.switches[0].gateways[0][4] == "10.102.0.1"
    assert not [x for x in net.links if x.kind == "uplink"]


def test_definition_errors_name_the_path_and_the_fix(tmp_path: Path) -> None:
    errors = _errors(
        tmp_path,
        network="network: {converged: true, leaf: {model: qm9700, nos: sonic, sonic_iccpd: true}}",
        extra=(("inband: {cidr: 10.102.0.0/16, mtu: 1500, vlan: 102,", "inband: {cidr: 10.102.0.0/16, mtu: 1500,"),),
    )
    assert "planes.storage.network.leaf.model: 'qm9700' is not an Ethernet switch; pick an Ethernet model such as sn5600" in errors
    assert "planes.inband.vlan: the inband plane rides the storage network as a VLAN; give planes.inband.vlan" in errors


def test_a_separate_inband_network_next_to_a_converged_one_is_an_error(tmp_path: Path) -> None:
    inband = "inband: {cidr: 10.102.0.0/16, mtu: 1500, vlan: 102, gateway: 10.102.0.1, network: {topology: collapsed}}"
    old = "inband: {cidr: 10.102.0.0/16, mtu: 1500, vlan: 102, gateway: 10.102.0.1}"
    errors = _errors(tmp_path, extra=((old, inband),))
    assert errors == [
        "planes.inband.network: planes.storage.network is converged (it carries in-band too); remove planes.inband.network or set converged: false"
    ]
    two = _plan(tmp_path, network=NETWORK.replace("converged: true", "converged: false"), extra=((old, inband),))
    assert [(n.name, n.planes, len(n.switches)) for n in two.storage] == [("storage", ("storage",), 8), ("inband", ("inband",), 2)]


def test_roce_storage_on_sonic_is_refused_until_it_is_rendered(tmp_path: Path) -> None:
    network = NETWORK.replace("nos: cumulus}}", "nos: sonic, sonic_iccpd: true}, roce: true}").replace(
        "leaf: {model: sn5600, nos: cumulus}", "leaf: {model: sn5600, nos: sonic, sonic_iccpd: true}"
    )
    assert _errors(tmp_path, network=network) == [
        "planes.storage.network.roce: RoCE storage is rendered for Cumulus storage switches only so far; use nos: cumulus or roce: false"
    ]


def test_a_sonic_storage_tier_without_iccpd_is_refused_with_the_path_and_the_fix(tmp_path: Path) -> None:
    # sonic-buildimage rules/config (202405, 202411): INCLUDE_ICCPD = n, so community images cannot run MCLAG
    network = NETWORK.replace("leaf: {model: sn5600, nos: cumulus}", "leaf: {model: sn5600, nos: sonic}")
    errors = _errors(tmp_path, network=network)
    assert len(errors) == 1
    assert errors[0].startswith("planes.storage.network.leaf: ")
    assert "INCLUDE_ICCPD=y" in errors[0]
    assert "sonic_iccpd: true" in errors[0]


def test_oversubscription_per_plane(tmp_path: Path) -> None:
    # su leaf a: storage 32 x 200G = 6400 Gb/s, in-band 32 x 100G = 3200 Gb/s, over 1600 Gb/s of uplinks
    assert _net(_plan(tmp_path)).plane_oversubscription == (("storage", "4.00:1"), ("inband", "2.00:1"))


def test_per_port_attach_cables_the_same_ports_without_host_bonds(tmp_path: Path) -> None:
    bonded = _net(_plan(tmp_path / "a"))
    per_port = _net(_plan(tmp_path / "b", network=NETWORK.replace("converged: true", "converged: true, attach: per-port")))
    assert [(x.a_device, x.a_port, x.b_device, x.b_port) for x in per_port.links] == [
        (x.a_device, x.a_port, x.b_device, x.b_port) for x in bonded.links
    ]
    assert {x.bond for x in per_port.links if x.kind in ("storage", "inband")} == {None}
    assert any(x.bond for x in bonded.links if x.kind == "storage")


def test_roce_storage_on_eos_is_refused_too(tmp_path: Path) -> None:
    network = "network: {leaf: {model: 7060x6-64pe, nos: eos}, spine: {model: 7060x6-64pe, nos: eos}, roce: true}"
    assert _errors(tmp_path, network=network) == [
        "planes.storage.network.roce: RoCE storage is rendered for Cumulus storage switches only so far; use nos: cumulus or roce: false"
    ]
