"""``leaf_pairs: packed``: leaf pairs shared across SUs, sized by the leaf's port budget, stable as nodes are added."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.plan.test_storage import _errors, _net, _plan

# SN4600C at 100G: 64 ports - 2 spines x 4 uplinks - 2 peerlink = 54 host ports per leaf; a DGX H100 slot takes one
# storage and one in-band port per side (the converged network carries both planes), so a pair holds 27 slots.
PACKED = "network: {leaf: {model: sn4600c, nos: cumulus}, spine: {model: sn4600c, nos: cumulus}, speed_gbps: 100, leaf_pairs: packed}"


def test_packed_pairs_fill_in_slot_order_across_sus(tmp_path: Path) -> None:
    plan = _plan(tmp_path, network=PACKED)  # 64 DGX in 2 SUs of 32 slots: 64 slots / 27 per pair = 3 pairs
    net = _net(plan)
    names = ["stor-svc-a", "stor-svc-b"] + [f"stor-leaf{p}-{side}" for p in (1, 2, 3) for side in "ab"]
    assert [s.name for s in net.leaves] == names
    hosts = Counter(x.a_device for x in net.links if x.kind == "storage" and x.b_device.startswith("gpu"))
    assert [hosts[f"stor-leaf{p}-a"] for p in (1, 2, 3)] == [27, 27, 10]
    pair_of = {x.b_device: x.a_device.rsplit("-", 1)[0] for x in net.links if x.kind == "storage"}
    # slot 27 of SU 1 ends pair 1; slot 28 of SU 1 to slot 22 of SU 2 make pair 2.
    assert [pair_of[h] for h in ("gpu027", "gpu028", "gpu054", "gpu055")] == ["stor-leaf1", "stor-leaf2", "stor-leaf2", "stor-leaf3"]
    assert [s.ports_used for s in net.leaves if s.name == "stor-leaf1-a"] == [64]
    # Management addresses and spine ports follow pair p as they do for per-SU pairs (switch id 2(p+1)).
    assert [s.switch_id for s in net.leaves if s.location.startswith("leaf")] == [4, 5, 6, 7, 8, 9]


def test_a_bond_never_spans_two_packed_pairs(tmp_path: Path) -> None:
    net = _net(_plan(tmp_path, network=PACKED))
    bonds: dict[tuple[str, str], set[str]] = {}
    for x in net.links:
        if x.kind == "storage" and x.bond is not None:
            bonds.setdefault((x.b_device, x.bond), set()).add(x.a_device)
    assert len(bonds) == 64 + 4  # 64 DGX, 4 storage servers on the services pair
    assert {len(sides) for sides in bonds.values()} == {2}
    assert all(len({side.rsplit("-", 1)[0] for side in sides}) == 1 for sides in bonds.values())


def test_adding_a_node_moves_no_packed_cable(tmp_path: Path) -> None:
    small = {(x.b_device, x.b_port): (x.a_device, x.a_port) for x in _net(_plan(tmp_path / "a", gpus=54, network=PACKED)).links}
    big = {(x.b_device, x.b_port): (x.a_device, x.a_port) for x in _net(_plan(tmp_path / "b", gpus=55, network=PACKED)).links}
    assert {k: v for k, v in small.items() if big.get(k) != v} == {}
    assert {a for k, (a, _) in big.items() if k not in small and k[0] == "gpu055"} == {"stor-leaf3-a", "stor-leaf3-b"}


def test_packed_definition_errors_name_the_path_and_the_fix(tmp_path: Path) -> None:
    collapsed = _errors(tmp_path, network="network: {topology: collapsed, leaf_pairs: packed}")
    assert collapsed == [
        "planes.storage.network.leaf_pairs: leaf_pairs: packed shares leaf pairs behind a spine pair; "
        "use topology: leaf-spine or leave leaf_pairs out"
    ]
    both = _errors(tmp_path, network=PACKED.replace("leaf_pairs: packed", "leaf_pairs: packed, leaf_pairs_per_su: 2"))
    assert both == [
        "planes.storage.network.leaf_pairs: leaf_pairs: packed sizes the pairs by their ports; remove leaf_pairs_per_su (it counts pairs per SU)"
    ]
    wide = (
        ("    vlan: 101\n", "    vlan: 101\n    max_ports_per_node: 32\n"),
        ("inband: {cidr: 10.102.0.0/16, mtu: 1500,", "inband: {cidr: 10.102.0.0/16, mtu: 1500, max_ports_per_node: 32,"),
    )
    tight = PACKED.replace("leaf_pairs: packed", "leaf_pairs: packed, uplinks_per_spine: 16, peerlink_ports: 8")
    assert _errors(tmp_path, network=tight, extra=wide) == [
        "planes.storage.network.leaf_pairs: a sn4600c leaf has 24 host ports at 100 Gb/s after 32 uplink and 8 peerlink ports but a "
        "node slot takes 32; lower uplinks_per_spine or peerlink_ports, or pick a leaf with more ports"
    ]
    # 64 one-slot pairs need 65 x 2 x 16 spine ports: an error with the numbers, not a crash naming a spine port.
    few = (("    vlan: 101\n", "    vlan: 101\n    max_ports_per_node: 32\n"),)
    assert _errors(tmp_path, network=tight, extra=few)[0].startswith("planes.storage.network.spine.model: stor-spine-a needs 2088 ports at 100 Gb/s")
