"""``switches_per_su`` and ``mgmt_switch: false``: an SU's management ports over several switches, the management rack's
endpoints on their spare ports; slots stay reserved and appending an endpoint moves no cable."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from fabric.errors import InputError
from fabric.plan import ClusterPlan
from tests.plan.test_oob import _plan

SPLIT = "network: {placement: su, switches_per_su: 2, dhcp_servers: [10.103.0.10]}"
NO_MGMT = "network: {placement: su, switches_per_su: 2, mgmt_switch: false, dhcp_servers: [10.103.0.10]}"


def _ports(plan: ClusterPlan) -> dict[str, tuple[str, str]]:
    assert plan.oob is not None
    return {x.b_device: (x.a_device, x.a_port) for x in plan.oob.links if x.kind != "uplink"}


def test_two_switches_per_su_split_the_slots_and_take_the_leaves_in_turn(tmp_path: Path) -> None:
    plan = _plan(tmp_path, network=SPLIT)  # onprem-roce: 2 SUs of 32 DGX, 8 rail leaves + a storage leaf pair per SU
    assert plan.oob is not None
    switches = [(s.name, s.switch_id, s.location) for s in plan.oob.switches]
    assert switches == [
        ("oob-mgmt", 0, "mgmt"),
        ("oob-su1-1", 1, "su1-1"),
        ("oob-su1-2", 2, "su1-2"),
        ("oob-su2-1", 17, "su2-1"),
        ("oob-su2-2", 18, "su2-2"),
    ]
    ports = _ports(plan)
    # 16 slots each (port = slot within the switch), then the SU's 10 switches alternately from port 17.
    assert [ports[h] for h in ("gpu001", "gpu016", "gpu017", "gpu032", "gpu033")] == [
        ("oob-su1-1", "swp1"),
        ("oob-su1-1", "swp16"),
        ("oob-su1-2", "swp1"),
        ("oob-su1-2", "swp16"),
        ("oob-su2-1", "swp1"),
    ]
    assert [ports[s] for s in ("leaf-su01-r1", "leaf-su01-r2", "leaf-su01-r3", "stor-su1-1-a", "stor-su1-1-b")] == [
        ("oob-su1-1", "swp17"),
        ("oob-su1-2", "swp17"),
        ("oob-su1-1", "swp18"),
        ("oob-su1-1", "swp21"),
        ("oob-su1-2", "swp21"),
    ]
    assert [s.ports_used for s in plan.oob.switches[1:]] == [21] * 4
    assert Counter(x.a_device for x in plan.oob.links if x.kind == "uplink") == {s.name: 2 for s in plan.oob.switches}


def test_without_the_management_switch_its_ports_take_the_spare_ports_top_down(tmp_path: Path) -> None:
    plan = _plan(tmp_path, network=NO_MGMT)
    assert plan.oob is not None
    assert plan.fabric is not None
    assert [s.name for s in plan.oob.switches] == ["oob-su1-1", "oob-su1-2", "oob-su2-1", "oob-su2-2"]
    ports = _ports(plan)
    # spines, the storage spine and services pairs, then the storage and management servers' BMCs: oob-su1-1 from swp48 down
    mgmt = [s.name for s in plan.fabric.spines] + ["stor-spine-a", "stor-spine-b", "stor-svc-a", "stor-svc-b"]
    mgmt += ["stor01", "stor02", "stor03", "stor04", "mgmt01", "mgmt02"]
    assert [ports[name] for name in mgmt] == [("oob-su1-1", f"swp{48 - i}") for i in range(len(mgmt))]
    # A node outside any SU takes its place in node-id order, as on oob-mgmt: only the ones after it move (one port
    # down); an SU's cables never move.
    grown = _ports(_plan(tmp_path, gpus=63, storage=5, network=NO_MGMT))
    assert [grown[h] for h in ("stor05", "mgmt01", "mgmt02")] == [("oob-su1-1", "swp36"), ("oob-su1-1", "swp35"), ("oob-su1-1", "swp34")]
    assert {k: v for k, v in ports.items() if k not in ("gpu064", "mgmt01", "mgmt02") and grown[k] != v} == {}


def test_devices_keep_their_named_ports_and_the_spill_goes_round_them(tmp_path: Path) -> None:
    pdus = ", ".join(f"{{name: pdu{i}, kind: pdu, switch: oob-su1-1, port: {46 + i}, address: 10.103.250.{i + 1}}}" for i in range(3))
    plan = _plan(tmp_path, network=NO_MGMT.replace("}", f", devices: [{pdus}]}}", 1).replace("]}, devices", "], devices"))
    ports = _ports(plan)
    assert [ports[f"pdu{i}"] for i in range(3)] == [("oob-su1-1", "swp46"), ("oob-su1-1", "swp47"), ("oob-su1-1", "swp48")]
    assert ports["spine01"] == ("oob-su1-1", "swp45")


@pytest.mark.parametrize(
    ("network", "message"),
    [
        (
            "network: {placement: su, mgmt_switch: false, dhcp_servers: [10.103.0.10]}",
            "planes.oob.network.mgmt_switch: mgmt_switch: false puts the management rack's 14 ports (8 switch-management, 6 BMC) on the "
            "other management switches' spare ports, but they have 12; set mgmt_switch: true, raise switches_per_su or pick a "
            "management switch with more ports",
        ),
        (
            "network: {placement: rack, switches_per_su: 2, dhcp_servers: [10.103.0.10]}",
            "planes.oob.network.switches_per_su: switches_per_su splits the SU switch of placement: su; placement: rack has a switch "
            "per rack already, remove switches_per_su",
        ),
    ],
    ids=["spill-does-not-fit", "split-with-rack"],
)
def test_impossible_splits_are_errors_naming_the_fix(tmp_path: Path, network: str, message: str) -> None:
    with pytest.raises(InputError) as exc:
        _plan(tmp_path, network=network)
    assert [f"{f.dotted_path}: {f.message}" for f in exc.value.findings] == [message]
