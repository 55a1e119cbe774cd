"""Parse a storage / in-band switch's config back into what plane separation, MTU and LAG checks care about.

One ``L2Config`` per switch, whatever wrote it: the bridge VLANs, per interface (port, bond, SVI) its bond members, MLAG
id, access VLAN or trunk VLANs, MTU, VRF, addresses and PFC watchdog, and the static routes per VRF. A value the config
does not set stays absent, so a rule reports it as missing rather than guessing a default.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from fabric.render.vlan_list import vlan_ids


@dataclass(slots=True)
class L2Interface:
    """What one interface of the switch is configured as."""

    members: list[str] = field(default_factory=list[str])
    mlag_id: int | None = None
    access: int | None = None
    trunk: set[int] = field(default_factory=set[int])
    mtu: int | None = None
    vrf: str | None = None
    svi: bool = False
    addresses: list[str] = field(default_factory=list[str])
    watchdog: bool = False


@dataclass(slots=True)
class L2Config:
    """What one storage / in-band switch does, as parsed from its config."""

    device: str
    vlans: set[int] = field(default_factory=set[int])
    interfaces: dict[str, L2Interface] = field(default_factory=dict[str, L2Interface])
    routes: list[tuple[str, str, str]] = field(default_factory=list[tuple[str, str, str]])
    """(vrf, prefix, next hop) of every static route."""

    def bond_of(self, port: str) -> str | None:
        """The bond ``port`` is a member of, or None."""
        return next((name for name, i in self.interfaces.items() if port in i.members), None)

    def svi_vlan(self, name: str) -> int | None:
        """The VLAN of an SVI named ``vlan<N>``."""
        match = re.fullmatch(r"[vV]lan(\d+)", name)
        return int(match.group(1)) if match else None


_IFACE = "nv set interface "


def parse_nvue_l2(device: str, text: str) -> L2Config:
    """An NVUE ``nv set`` script as an ``L2Config``.

    Example:
        >>> c = parse_nvue_l2("s1", "nv set bridge domain br_default vlan 101\\nnv set interface bond1 bond member swp1\\n")
        >>> c.vlans, c.interfaces["bond1"].members
        ({101}, ['swp1'])

    Raises:
        ValueError: a line is not valid shell words (an unbalanced quote).
    """
    config = L2Config(device)
    for raw in text.splitlines():
        line = raw.strip()
        if not line.startswith("nv set "):
            continue
        words = shlex.split(line)[2:]
        if words[:3] == ["bridge", "domain", "br_default"] and words[3:4] == ["vlan"]:
            config.vlans.update(vlan_ids(words[4]))
        elif words[:1] == ["interface"] and len(words) >= 3:
            _interface(config.interfaces.setdefault(words[1], L2Interface()), words[2:])
        elif words[:1] == ["vrf"] and words[2:4] == ["router", "static"] and len(words) >= 7:
            config.routes.append((words[1], words[4], words[6]))
    return config


def _interface(iface: L2Interface, words: list[str]) -> None:
    match words:
        case ["bond", "member", member]:
            iface.members.append(member)
        case ["bond", "mlag", "id", value]:
            iface.mlag_id = int(value)
        case ["bridge", "domain", "br_default", "access", value]:
            iface.access = int(value)
        case ["bridge", "domain", "br_default", "vlan", value]:
            iface.trunk.update(vlan_ids(value))
        case ["link", "mtu", value]:
            iface.mtu = int(value)
        case ["ip", "vrf", value]:
            iface.vrf = value
        case ["type", "svi"]:
            iface.svi = True
        case ["ip", "address", value] | ["ip", "vrr", "address", value]:
            iface.addresses.append(value)
        case ["qos", "pfc-watchdog"]:
            iface.watchdog = True
        case _:
            pass


def parse_config_db_l2(device: str, text: str) -> L2Config:
    """A SONiC ``config_db.json`` as an ``L2Config`` (PortChannels, VLAN members, VLAN interfaces, MCLAG interfaces).

    SONiC has no MLAG id: a PortChannel that is an ``MCLAG_INTERFACE`` gets its number as the id; a VRF ``Vrf-x`` reads
    as the plan's ``vrf-x``; an untagged VLAN member is an access port, a tagged one a trunk member.

    Example:
        >>> c = parse_config_db_l2("s1", '{"VLAN": {"Vlan101": {"vlanid": "101"}}, "PORTCHANNEL_MEMBER": {"PortChannel1|Ethernet0": {}}}')
        >>> c.vlans, c.interfaces["PortChannel1"].members
        ({101}, ['Ethernet0'])

    Raises:
        ValueError: the text is not a JSON object of tables.
    """
    loaded: object = json.loads(text)
    if not isinstance(loaded, dict):
        msg = "config_db.json is not a JSON object"
        raise ValueError(msg)
    db = cast("dict[str, dict[str, dict[str, Any]]]", loaded)
    config = L2Config(device)
    _ports_and_bonds(db, config)
    _vlans_and_svis(db, config)
    return config


def _ports_and_bonds(db: dict[str, dict[str, dict[str, Any]]], config: L2Config) -> None:
    config.vlans = {int(v["vlanid"]) for v in db.get("VLAN", {}).values()} - {4094}
    iface = config.interfaces.setdefault
    for key, fields in db.get("PORT", {}).items():
        if fields.get("admin_status") == "up":
            iface(key, L2Interface()).mtu = int(fields["mtu"]) if "mtu" in fields else None
    for key, fields in db.get("PORTCHANNEL", {}).items():
        iface(key, L2Interface()).mtu = int(fields["mtu"]) if "mtu" in fields else None
    for key in db.get("PORTCHANNEL_MEMBER", {}):
        bond, port = key.split("|")
        iface(bond, L2Interface()).members.append(port)
    for key in db.get("MCLAG_INTERFACE", {}):
        bond = key.split("|")[1]
        iface(bond, L2Interface()).mlag_id = int(bond.removeprefix("PortChannel"))


def _vlans_and_svis(db: dict[str, dict[str, dict[str, Any]]], config: L2Config) -> None:
    iface = config.interfaces.setdefault
    for key, fields in db.get("VLAN_MEMBER", {}).items():
        vlan, member = key.split("|")
        number = int(vlan.removeprefix("Vlan"))
        if number == 4094:
            continue
        if fields.get("tagging_mode") == "untagged":
            iface(member, L2Interface()).access = number
        else:
            iface(member, L2Interface()).trunk.add(number)
    for key, fields in db.get("VLAN_INTERFACE", {}).items():
        name, _, prefix = key.partition("|")
        if name == "Vlan4094":
            continue
        svi = iface(name, L2Interface())
        svi.svi = True
        if prefix:
            svi.addresses.append(prefix)
        elif "vrf_name" in fields:
            svi.vrf = "vrf" + str(fields["vrf_name"]).removeprefix("Vrf")
    for key, fields in db.get("STATIC_ROUTE", {}).items():
        vrf, _, prefix = key.rpartition("|")
        config.routes.append(("vrf" + vrf.removeprefix("Vrf") if vrf else "default", prefix, str(fields.get("nexthop", ""))))


def cli_blocks(text: str) -> Iterator[list[str]]:
    r"""The top-level blocks of an indented CLI config (EOS, NX-OS): a line and the indented lines under it, stripped.

    Example:
        >>> list(cli_blocks("vlan 10\n  name a\n!\ninterface e1\n"))
        [['vlan 10', 'name a'], ['!'], ['interface e1']]
    """
    block: list[str] = []
    for line in [*text.splitlines(), "!"]:
        if line.startswith((" ", "\t")):
            block.append(line.strip())
            continue
        if block:
            yield block
        block = [line.strip()]


def parse_eos_l2(device: str, text: str) -> L2Config:
    r"""An EOS running-config as an ``L2Config``: ``vlan`` and ``interface`` blocks, ``ip route vrf`` lines.

    A member's ``channel-group N`` makes it a member of ``Port-ChannelN``; ``mlag N`` is the MLAG id; ``l2 mtu`` the MTU
    of a switchport; VLAN 4094 (the MLAG peer VLAN) is left out.

    Example:
        >>> c = parse_eos_l2("s1", "vlan 101\n   name storage\n!\ninterface Ethernet1/1\n   channel-group 1 mode active\n!\n")
        >>> c.vlans, c.interfaces["Port-Channel1"].members
        ({101}, ['Ethernet1/1'])
    """
    config = L2Config(device)
    for block in cli_blocks(text):
        _eos_block(config, block)
    config.vlans.discard(4094)
    config.interfaces.pop("Vlan4094", None)
    return config


def _eos_block(config: L2Config, block: list[str]) -> None:
    head, body = block[0].split(), block[1:]
    match head:
        case ["vlan", number]:
            config.vlans.add(int(number))
        case ["ip", "route", "vrf", vrf, prefix, via, *_]:
            config.routes.append((vrf, prefix, via))
        case ["interface", name]:
            iface = config.interfaces.setdefault(name, L2Interface())
            iface.svi = name.startswith("Vlan")
            for words in (line.split() for line in body):
                _eos_line(config, name, iface, words)
        case _:
            pass


def _eos_line(config: L2Config, name: str, iface: L2Interface, words: list[str]) -> None:
    match words:
        case ["channel-group", number, "mode", _]:
            config.interfaces.setdefault(f"Port-Channel{number}", L2Interface()).members.append(name)
        case ["mlag", number]:
            iface.mlag_id = int(number)
        case ["switchport", "access", "vlan", number]:
            iface.access = int(number)
        case ["switchport", "trunk", "allowed", "vlan", value]:
            iface.trunk.update(vlan_ids(value))
        case ["l2", "mtu", value] | ["mtu", value]:
            iface.mtu = int(value)
        case ["vrf", value]:
            iface.vrf = value
        case ["ip", "address", value]:
            iface.addresses.append(value)
        case ["ip", "virtual-router", "address", value]:
            iface.addresses.append(value if "/" in value else f"{value}/32")
        case _:
            pass


def parse_nxos_l2(device: str, text: str) -> L2Config:
    r"""An NX-OS running-config as an ``L2Config``: ``vlan``, ``interface`` and ``vrf context`` blocks.

    A member's ``channel-group N`` makes it a member of ``port-channelN``; ``vpc N`` is the MLAG id (``vpc peer-link``
    none); ``vrf member`` the VRF; an HSRP group's ``ip`` a /32 the SVI answers for.

    Example:
        >>> c = parse_nxos_l2("s1", "vlan 101\n  name storage\n!\ninterface Ethernet1/1\n  channel-group 1 mode active\n!\n")
        >>> c.vlans, c.interfaces["port-channel1"].members
        ({101}, ['Ethernet1/1'])
    """
    config = L2Config(device)
    for block in cli_blocks(text):
        _nxos_block(config, block)
    return config


def _nxos_block(config: L2Config, block: list[str]) -> None:
    head, body = block[0].split(), block[1:]
    match head:
        case ["vlan", number] if number.isdigit():
            config.vlans.add(int(number))
        case ["vrf", "context", vrf]:
            config.routes.extend((vrf, w[2], w[3]) for w in (line.split() for line in body) if w[:2] == ["ip", "route"] and len(w) >= 4)
        case ["interface", name]:
            iface = config.interfaces.setdefault(name, L2Interface())
            iface.svi = name.startswith("Vlan")
            for words in (line.split() for line in body):
                _nxos_line(config, name, iface, words)
        case _:
            pass


def _nxos_line(config: L2Config, name: str, iface: L2Interface, words: list[str]) -> None:
    match words:
        case ["channel-group", number, "mode", _]:
            config.interfaces.setdefault(f"port-channel{number}", L2Interface()).members.append(name)
        case ["vpc", number] if number.isdigit():
            iface.mlag_id = int(number)
        case ["vrf", "member", value]:
            iface.vrf = value
        case ["ip", value] if "/" not in value:
            iface.addresses.append(f"{value}/32")  # an HSRP group's virtual address
        case _:
            _eos_line(config, name, iface, words)


L2_PARSERS = {"cumulus": parse_nvue_l2, "sonic": parse_config_db_l2, "eos": parse_eos_l2, "nxos": parse_nxos_l2}
