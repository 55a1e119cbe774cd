"""The LLDP and InfiniBand parsers on published replies (tests/data/transcripts/lldp/SOURCE.md) and on hostile ones:
every bad reply is refused naming the device, the file and the problem (InputError, exit 2), never a crash."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fabric.apply.cabling.collect import read_dir
from fabric.apply.cabling.ib import ib_port_number, parse_iblinkinfo, parse_ibnetdiscover
from fabric.apply.cabling.parse import (
    MAX_NEIGHBOURS,
    MAX_REPLY_BYTES,
    UNKNOWN_PORT,
    Seen,
    parse_eos,
    parse_lldpctl,
    parse_nvue,
    parse_nxos,
    parse_sonic,
)
from fabric.errors import InputError
from tests.conftest import ROOT

REPLIES = ROOT / "tests" / "data" / "transcripts" / "lldp"


def text(name: str) -> str:
    return (REPLIES / name).read_text(encoding="utf-8")


def test_sonic_show_lldp_table_from_sonic_utilities() -> None:
    seen = parse_sonic(text("sonic01.sonic.txt"), "sonic01")
    assert Seen("sonic01", "Ethernet124", "<neighborN_hostname>", "Ethernet4/20/1") in seen
    assert Seen("sonic01", "eth0", "<mgmt_neighbor_name>", "Ethernet1/25") in seen
    assert len(seen) == 6  # the six rows, not the Capability line, the rule or the total


def test_sonic_takes_the_description_when_the_port_id_is_a_mac() -> None:
    table = (
        "LocalPort  RemoteDevice  RemotePortID       Capability  RemotePortDescr\n"
        "---------  ------------  -----------------  ----------  ---------------\n"
        "Ethernet0  gpu001        6e:98:58:64:9f:20  O           enp24s0np0\n"
    )
    assert parse_sonic(table, "leaf") == [Seen("leaf", "Ethernet0", "gpu001", "enp24s0np0")]


def test_sonic_refuses_a_neighbour_without_a_name() -> None:
    table = (
        "LocalPort  RemoteDevice  RemotePortID  Capability  RemotePortDescr\n"
        "---------  ------------  ------------  ----------  ---------------\n"
        "Ethernet4                swp1          O           swp1\n"
    )
    with pytest.raises(ValueError, match="line 3 RemoteDevice"):
        parse_sonic(table, "leaf")


def test_nvue_reference_table_keeps_a_mac_port_unknown() -> None:
    seen = parse_nvue(text("cumulus01.nvue.txt"), "cumulus01")
    assert Seen("cumulus01", "swp51", "spine01", "swp1") in seen
    assert Seen("cumulus01", "swp1", "server01", UNKNOWN_PORT) in seen  # Remote Port 48:b0:2d:76:ee:8e: a server's MAC
    assert len(seen) == 10


def test_eos_detail_from_napalm_takes_the_description_of_a_mac_port_id() -> None:
    seen = parse_eos(text("arista01.eos.json"), "arista01")
    assert seen == [Seen("arista01", "Ethernet1", "78m1", "eth2"), Seen("arista01", "Ethernet8", "78m3", "eth3")]  # Ethernet12: none


def test_eos_interface_name_ids_lose_their_quotes() -> None:
    reply = {
        "lldpNeighbors": {
            "Ethernet3": {
                "lldpNeighborInfo": [
                    {"systemName": "spine01", "neighborInterfaceInfo": {"interfaceIdType": "interfaceName", "interfaceId": '"Ethernet1"'}}
                ]
            }
        }
    }
    assert parse_eos(json.dumps(reply), "leaf01") == [Seen("leaf01", "Ethernet3", "spine01", "Ethernet1")]
    summary = {"lldpNeighbors": [{"port": "Ethernet3", "neighborDevice": "spine01", "neighborPort": "Ethernet1", "ttl": 120}]}
    assert parse_eos(json.dumps(summary), "leaf01") == [Seen("leaf01", "Ethernet3", "spine01", "Ethernet1")]


def test_nxos_summary_from_cisco_devnet() -> None:
    assert parse_nxos(text("n3500.nxos.json"), "n3500") == [Seen("n3500", "mgmt0", "SW-INSBU-JWALA-PP52.cisco.com", "Gi1/0/35")]


def test_nxos_detail_one_row_collapsed_and_short_local_names() -> None:
    reply = {"TABLE_nbor_detail": {"ROW_nbor_detail": {"l_port_id": "Eth1/49", "sys_name": "spine01", "port_id": "Ethernet1/1", "chassis_id": "x"}}}
    assert parse_nxos(json.dumps(reply), "leaf01") == [Seen("leaf01", "Ethernet1/49", "spine01", "Ethernet1/1")]


def test_lldpctl_json_and_json0_recorded_from_lldpd() -> None:
    leaf = parse_lldpctl(text("leaf01.lldpctl.json"), "leaf01")  # json; node1 sends its MAC as the port id, the interface as descr
    node = parse_lldpctl(text("node1.lldpctl.json"), "node1")  # json0; leaf01 sends ifname
    assert leaf == [Seen("leaf01", "swp1", "node1", "eth1"), Seen("leaf01", "swp2", "node1", "eth3")]
    assert node == [Seen("node1", "eth1", "leaf01", "swp1"), Seen("node1", "eth3", "leaf01", "swp2")]


def test_ibnetdiscover_topology_file_example() -> None:
    seen = parse_ibnetdiscover(text("subnet.ibnetdiscover.txt"), "")
    assert Seen("ISR9024", "10", "SW-6IB4", "1") in seen  # switch to switch, by port number
    assert Seen("SW-6IB4", "1", "ISR9024", "10") in seen  # ... from both ends
    assert Seen("MT23108", "2", "ISR9024", "8") in seen  # a CA without a hostname: named by its first word, port by number


def test_iblinkinfo_names_a_host_by_its_node_description() -> None:
    seen = parse_iblinkinfo(text("subnet.iblinkinfo.txt"), "")
    assert Seen("MT25408", "1", "kvm", "mlx4_0") in seen
    assert Seen("hostname", "mlx4_0", "MT25408", "1") in seen
    managed = '           2   17[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       4    1[  ] "n02 HCA-1" ( )\n'
    down = '           2   18[  ] ==(                Down/ Polling)==>             [  ] "" ( )\n'
    assert parse_iblinkinfo("Switch: 0x0002c9020046c588 MF0;leaf01:MQM9700/U1:\n" + managed + down, "") == [Seen("leaf01", "17", "n02", "HCA-1")]


def test_ib_port_numbers_of_mlnx_os_names() -> None:
    assert [ib_port_number(p) for p in ("IB1/1/1", "IB1/17/2", "IB1/5", "swp1")] == ["1", "34", "5", None]


def test_the_recorded_directory_reads_whole() -> None:
    replies = read_dir(REPLIES)  # SOURCE.md beside the replies is skipped
    assert {"sonic01", "cumulus01", "arista01", "n3500", "leaf01", "node1", "ISR9024", "hostname"} <= replies.replied


HOSTILE = [
    ("leaf01.eos.json", "{", "not JSON"),
    ("leaf01.eos.json", "[" * 50 + "]" * 50, "nested 50 deep"),
    ("leaf01.eos.json", json.dumps({"lldpNeighbors": {"Ethernet1": {"lldpNeighborInfo": [{"systemName": 7}]}}}), "expected an object"),
    ("leaf01.eos.json", json.dumps({"lldpNeighbors": [{"port": "Ethernet1", "neighborDevice": "evil\nhost", "neighborPort": "x"}]}), "is not a name"),
    (
        "leaf01.nxos.json",
        json.dumps({"TABLE_nbor_detail": {"ROW_nbor_detail": [{"l_port_id": "Eth1/1", "sys_name": "x" * 500, "port_id": "y"}]}}),
        "is not a name",
    ),
    (
        "leaf01.lldpctl.json",
        json.dumps(
            {"lldp": {"interface": {"swp1": {"chassis": {"id": {"type": "mac", "value": "aa"}}, "port": {"id": {"type": "ifname", "value": "e"}}}}}}
        ),
        "sends no system name",
    ),
    ("leaf01.sonic.txt", "no table here\n", "no show lldp table table"),
    ("subnet.ibnetdiscover.txt", '[1]\t"S-00"[2]\t\t# "leaf02" lid 3 4xNDR\n', "a link before any Switch or Ca line"),
    ("leaf01.nvue.txt", "Interface  Speed\n---------  -----\nswp1       1G\n", "expected Interface, Speed, Type"),
]


@pytest.mark.parametrize(("file", "reply", "problem"), HOSTILE, ids=[f"{f}:{p}" for f, _, p in HOSTILE])
def test_a_hostile_reply_is_refused_naming_device_file_and_problem(tmp_path: Path, file: str, reply: str, problem: str) -> None:
    (tmp_path / file).write_text(reply, encoding="utf-8")
    with pytest.raises(InputError) as refused:
        read_dir(tmp_path)
    message = str(refused.value)
    assert problem in message
    assert str(tmp_path / file) in message
    assert ("leaf01" in message) or file.startswith("subnet")


def test_too_many_neighbours_are_refused(tmp_path: Path) -> None:
    rows = [{"port": f"Ethernet{n}", "neighborDevice": "spine01", "neighborPort": f"Ethernet{n}"} for n in range(MAX_NEIGHBOURS + 1)]
    (tmp_path / "leaf01.eos.json").write_text(json.dumps({"lldpNeighbors": rows}), encoding="utf-8")
    with pytest.raises(InputError, match=f"over the bound of {MAX_NEIGHBOURS}"):
        read_dir(tmp_path)


def test_an_oversized_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "leaf01.eos.json"
    with big.open("wb") as f:
        f.truncate(MAX_REPLY_BYTES + 1)
    with pytest.raises(InputError, match=r"over the .*-byte bound"):
        read_dir(tmp_path)


def test_a_link_an_unknown_name_and_a_bad_device_name_are_refused(tmp_path: Path) -> None:
    os.symlink("/etc/passwd", tmp_path / "leaf01.eos.json")
    with pytest.raises(InputError, match="not a regular file"):
        read_dir(tmp_path)
    (tmp_path / "leaf01.eos.json").unlink()
    (tmp_path / "leaf01.txt").write_text("x", encoding="utf-8")
    with pytest.raises(InputError, match="no known reply form"):
        read_dir(tmp_path)
    (tmp_path / "leaf01.txt").unlink()
    (tmp_path / "le af.eos.json").write_text("{}", encoding="utf-8")
    with pytest.raises(InputError, match="is not a name"):
        read_dir(tmp_path)
