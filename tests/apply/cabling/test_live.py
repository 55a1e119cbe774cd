"""The live read-back: one read-only session per switch, the NOS's own LLDP command, the reply through the same parser
and bounds as a recorded one; an unreachable switch is not read (and said why), a hostile reply is refused naming it."""

from __future__ import annotations

import pytest

from fabric.apply.cabling.collect import COMMANDS, read_live
from fabric.apply.cabling.parse import Seen
from fabric.apply.nos import ADAPTERS, Adapter
from fabric.apply.session import DeviceAccess, Session
from fabric.errors import InputError
from tests.apply.cabling.test_parse import text


class Recorded:
    """A session that answers one show command with a recorded reply."""

    def __init__(self, replies: dict[str, str], asked: list[str]) -> None:
        self.replies, self.asked = replies, asked

    def show(self, command: str) -> str:
        self.asked.append(command)
        return self.replies[command]

    def configure(self, lines: list[str]) -> str:
        raise AssertionError(f"the cabling read-back configured {lines}")

    def exit_config_mode(self) -> None:
        raise AssertionError("the cabling read-back entered config mode")

    def disconnect(self) -> None:
        self.asked.append("disconnect")


def access(name: str) -> DeviceAccess:
    return DeviceAccess(name, "192.0.2.1", 22, "admin", None, "/dev/null")


def test_each_nos_is_asked_its_own_command_and_nothing_else() -> None:
    asked: list[str] = []
    replies = {
        "sonic01": {COMMANDS["sonic"][0]: text("sonic01.sonic.txt")},
        "arista01": {COMMANDS["eos"][0]: text("arista01.eos.json")},
        "cumulus01": {COMMANDS["cumulus"][0]: text("cumulus01.nvue.txt")},
        "n3500": {COMMANDS["nxos"][0]: text("n3500.nxos.json")},
    }

    def connector(device: DeviceAccess, _adapter: Adapter) -> Session:
        if device.name == "down01":
            raise OSError("connection timed out")
        return Recorded(replies[device.name], asked)

    nos = {"sonic01": "sonic", "arista01": "eos", "cumulus01": "cumulus", "n3500": "nxos", "down01": "eos", "frr01": "frr"}
    got = read_live({n: access(n) for n in nos}, nos, ADAPTERS, connector)
    assert got.replied == {"sonic01", "arista01", "cumulus01", "n3500"}
    assert Seen("arista01", "Ethernet1", "78m1", "eth2") in got.seen
    assert got.unread["down01"] == "cannot connect: connection timed out"
    assert "no LLDP read-back for NOS 'frr'" in got.unread["frr01"]
    assert sorted(set(asked)) == sorted({"show lldp table", "nv show interface lldp", "show lldp neighbors detail | json", "disconnect"})


def test_a_hostile_live_reply_is_refused_naming_the_switch() -> None:
    def connector(_device: DeviceAccess, _adapter: Adapter) -> Session:
        return Recorded({COMMANDS["eos"][0]: '{"lldpNeighbors": {"Ethernet1": {"lldpNeighborInfo": [{"systemName": "x\\u001b[2J"}]}}}'}, [])

    with pytest.raises(InputError, match=r"leaf01: show lldp neighbors detail \| json"):
        read_live({"leaf01": access("leaf01")}, {"leaf01": "eos"}, ADAPTERS, connector)
