"""The OOB network: switch counts per SuperPOD size, every BMC and management port cabled once, stable ports."""

from __future__ import annotations

import json
from collections import Counter
from ipaddress import IPv4Interface, IPv4Network
from pathlib import Path

import pytest
from rich.console import Console

from fabric.errors import InputError
from fabric.model import load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from fabric.render.kea import KEA_FILE, render_kea
from fabric.reports.console import print_plan, summary_line
from tests.conftest import ROOT

EXAMPLE = (ROOT / "inventories" / "onprem-roce" / "cluster.yaml").read_text(encoding="utf-8")
NETWORK = "network: {model: sn2201, nos: cumulus, placement: su, uplinks: 2, core: oob-core, dhcp_servers: [10.104.0.10], dhcp_subnet: 10.104.0.0/24}"


def _plan(tmp_path: Path, *, gpus: int = 64, storage: int = 4, network: str = NETWORK) -> ClusterPlan:
    text = EXAMPLE.replace("count: 64,", f"count: {gpus},").replace("count: 4,", f"count: {storage},").replace(NETWORK, network)
    path = tmp_path / "cluster.yaml"
    path.write_text(text, encoding="utf-8")
    return plan_cluster(load_cluster(path))


@pytest.mark.parametrize("sus", [1, 2, 4])
def test_one_switch_per_su_plus_the_management_rack(tmp_path: Path, sus: int) -> None:
    plan = _plan(tmp_path, gpus=32 * sus)
    assert plan.oob is not None
    assert plan.fabric is not None
    names = [s.name for s in plan.oob.switches]
    assert names == ["oob-mgmt", *(f"oob-su{s}" for s in range(1, sus + 1))]
    # 32 DGX BMC slots + 8 rail leaves + the SU's storage leaf pair per SU; the management rack: spines, the storage
    # network's spine and services pairs, 4 storage and 2 management BMCs.
    assert [s.ports_used for s in plan.oob.switches[1:]] == [42] * sus
    assert plan.oob.switches[0].ports_used == len(plan.fabric.spines) + 4 + 6


@pytest.mark.parametrize("sus", [1, 2, 4])
def test_rack_placement_has_a_switch_per_rack_and_per_su_network_rack(tmp_path: Path, sus: int) -> None:
    plan = _plan(tmp_path, gpus=32 * sus, network="network: {placement: rack, nodes_per_rack: 4}")
    assert plan.oob is not None
    locations = Counter(s.location.split("-")[-1][0] for s in plan.oob.switches if s.location != "mgmt")
    assert locations == {"r": 8 * sus, "n": sus}
    assert all(s.ports_used <= (10 if s.location.endswith("net") else 4) for s in plan.oob.switches if s.location != "mgmt")


def test_every_bmc_and_switch_management_port_is_cabled_once_with_its_address(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    assert plan.oob is not None
    assert plan.fabric is not None
    access = [x for x in plan.oob.links if x.kind != "uplink"]
    ends = Counter((x.b_device, x.b_port) for x in access)
    bmcs = {(n.hostname, i.name): i.address for n in plan.nodes for i in n.interfaces if i.kind == "bmc"}
    switches = {(s.name, s.mgmt_interface): s.mgmt_address for s in plan.fabric.switches}
    switches |= {(s.name, s.mgmt_interface): s.mgmt_address for net in plan.storage for s in net.switches}
    assert set(ends) == set(bmcs) | set(switches)
    assert set(ends.values()) == {1}
    assert all(x.b_address == {**bmcs, **switches}[(x.b_device, x.b_port)] for x in access)
    assert len({(x.a_device, x.a_port) for x in plan.oob.links}) == len(plan.oob.links), "one cable per switch port"


def test_switch_addresses_are_inside_the_oob_plane_and_distinct(tmp_path: Path) -> None:
    plan = _plan(tmp_path, gpus=128)
    assert plan.oob is not None
    addresses = [IPv4Interface(s.mgmt_address) for s in plan.oob.switches]
    assert len(set(addresses)) == len(addresses)
    assert all(a.ip in IPv4Network("10.103.0.0/16") and a.network.prefixlen == 16 for a in addresses)


def test_adding_a_storage_node_or_an_su_moves_no_su_cable(tmp_path: Path) -> None:
    before = _plan(tmp_path)
    after = _plan(tmp_path, gpus=96, storage=5)
    assert before.oob is not None
    assert after.oob is not None
    su = [x for x in before.oob.links if x.a_device.startswith("oob-su")]
    assert set(su) <= set(after.oob.links)
    assert [s.mgmt_address for s in before.oob.switches] == [s.mgmt_address for s in after.oob.switches[:3]]


@pytest.mark.parametrize(("nos", "ports"), [("cumulus", ["swp49", "swp50", "swp51"]), ("sonic", ["Ethernet48", "Ethernet52", "Ethernet56"])])
def test_uplinks_use_the_100g_cages_named_per_nos(tmp_path: Path, nos: str, ports: list[str]) -> None:
    plan = _plan(tmp_path, gpus=32, network=f"network: {{nos: {nos}, uplinks: 3}}")
    assert plan.oob is not None
    up = [x for x in plan.oob.links if x.kind == "uplink" and x.a_device == "oob-su1"]
    assert [(x.a_port, x.b_device, x.speed_gbps) for x in up] == [(p, "oob-core", 100) for p in ports]
    assert [x.a_port for x in plan.oob.links if x.a_device == "oob-su1" and x.kind == "bmc"][:2] == (
        ["swp1", "swp2"] if nos == "cumulus" else ["Ethernet0", "Ethernet1"]
    )


def test_no_network_means_no_oob_plan(tmp_path: Path) -> None:
    plan = _plan(tmp_path, network="description: none")
    assert plan.oob is None


def test_plan_summary_lists_each_management_switch_with_its_budget(tmp_path: Path) -> None:
    console = Console(record=True, width=200)
    print_plan(console, _plan(tmp_path))
    rows = [line for line in console.export_text().splitlines() if line.startswith("│ oob-")]
    assert len(rows) == 3
    assert "oob-su1" in rows[1]
    assert "42 / 48" in rows[1]
    assert "10.103.255.1/16" in rows[1]


def test_a_pdu_takes_its_named_port_and_gets_a_dhcp_pool(tmp_path: Path) -> None:
    pdu = "devices: [{name: pdu-su1, kind: pdu, switch: oob-su1, port: 43, address: 10.103.250.1}]"
    plan = _plan(tmp_path, network=f"network: {{{pdu}}}")
    assert plan.oob is not None
    rows = [(x.a_port, x.b_device, x.kind, x.b_address) for x in plan.oob.links if x.kind == "device"]
    assert rows == [("swp43", "pdu-su1", "device", "10.103.250.1/16")]
    assert plan.oob.switches[1].ports_used == 43
    kea = json.loads(render_kea(plan)[KEA_FILE])["Dhcp4"]
    assert {"pool": "10.103.250.1 - 10.103.250.1", "client-class": "oob-su1-swp43"} in kea["subnet4"][0]["pools"]


@pytest.mark.parametrize(
    ("device", "message"),
    [
        (
            "{name: p, kind: pdu, switch: oob-su7, port: 43, address: 10.103.250.1}",
            "there is no management switch 'oob-su7'; the plan has oob-mgmt, oob-su1, oob-su2",
        ),
        ("{name: p, kind: pdu, switch: oob-su1, port: 5, address: 10.103.250.1}", "oob-su1 port 5 already takes gpu005 bmc; pick a free port"),
        (
            "{name: p, kind: pdu, switch: oob-su1, port: 43, address: 10.9.0.1}",
            "10.9.0.1 is outside the oob plane 10.103.0.0/16; pick an address inside it",
        ),
        (
            "{name: p, kind: console, switch: oob-su1, port: 49, address: 10.103.250.1}",
            "oob-su1 needs 49 access ports (32 BMC, 10 switch-management, 1 PDU/console, 6 ports reserved for empty node slots) but the sn2201 "
            "has 48; raise switches_per_su, use placement: rack, or pick a management switch with more ports",
        ),
    ],
    ids=["no-such-switch", "port-taken", "outside-plane", "over-budget"],
)
def test_a_misplaced_device_is_an_error_naming_the_fix(tmp_path: Path, device: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        _plan(tmp_path, network=f"network: {{devices: [{device}]}}")
    assert [f.message for f in caught.value.errors] == [message]


def test_storage_switches_take_the_port_after_their_su_leaves_and_the_summary_counts_each_plane(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    assert plan.oob is not None
    rows = [(x.a_device, x.a_port, x.b_device) for x in plan.oob.links if x.b_device.startswith("stor-")]
    assert rows == [
        ("oob-mgmt", "swp5", "stor-spine-a"),
        ("oob-mgmt", "swp6", "stor-spine-b"),
        ("oob-mgmt", "swp7", "stor-svc-a"),
        ("oob-mgmt", "swp8", "stor-svc-b"),
        ("oob-su1", "swp41", "stor-su1-1-a"),
        ("oob-su1", "swp42", "stor-su1-1-b"),
        ("oob-su2", "swp41", "stor-su2-1-a"),
        ("oob-su2", "swp42", "stor-su2-1-b"),
    ]
    assert summary_line(plan).endswith("31 switches (compute 20, storage 8, oob 3)")
