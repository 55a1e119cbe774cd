"""The NX-OS reader of the L2 post-check: NX-OS's ``| json`` show commands parsed into an ``L2State``, every string
the device sends treated as hostile.

NX-OS structured output (9.3 / 10.x) puts a table under ``TABLE_<x>`` / ``ROW_<x>``, and gives a table of one row as
that row itself (an object), of several rows as a list: both are read. The commands and their shapes:

- ``show vlan brief | json``: ``TABLE_vlanbriefxbrief`` / ``ROW_vlanbriefxbrief`` with ``vlanshowbr-vlanid`` (a
  string; a number on some platforms), ``vlanshowbr-vlanstate`` (``active``, ``suspend``), ``vlanshowbr-shutstate``
  (``noshutdown``, ``shutdown``) and ``vlanshowplist-ifidx``: the VLAN's ports, comma-separated with ranges
  (``Ethernet1/6-10``, ``port-channel1-2``, ``Ethernet101/1/4-14``), split over a list of strings when long and absent
  when the VLAN has no port. A trunk is listed in every VLAN it carries; a port-channel's members are not (the
  port-channel is). Source: napalm's NX-OS driver (``get_vlans``, ``_parse_vlan_ports``) and the device output its tests
  replay, ``test/nxos/mocked_data/test_get_vlans/{normal,6000,interface_without_vlans}/show_vlan_brief.json``.
- ``show interface brief | json``: ``TABLE_interface`` / ``ROW_interface``, a row per interface with ``interface``
  (``Ethernet1/1``, ``port-channel10``, ``mgmt0``, ``Vlan101``) and ``state`` (``up``, ``down``; why in
  ``state_rsn_desc``). Source: Cisco DevNet NX-OS learning labs (``"state": "down", "state_rsn_desc": "SFP not
  inserted"``); Allen Robel (Cisco), nxapi-netbox ``lib/nxapi_netbox/nxapi/nxapi_interface.py``.
- ``show port-channel summary | json``: ``TABLE_channel`` / ``ROW_channel`` with ``group``, ``port-channel``,
  ``layer`` (``S`` switched, ``R`` routed), ``status`` (``U`` up, ``D`` down, ``M`` min-links not met), ``type``,
  ``prtcl`` and ``TABLE_member`` / ``ROW_member`` (``port``, ``port-status``). The member flags are the legend NX-OS
  prints above the text form: ``P`` up in port-channel, ``p`` up in delay-lacp mode, ``D`` down, ``I`` individual,
  ``H`` hot-standby, ``s`` suspended, ``r`` module removed, ``b`` BFD session wait (NX-OS 7.0(3)I5 to 10.x device
  output). Only a ``P`` member forwards as part of its port-channel, so only it carries the port-channel's VLANs.
  Source for the keys: Ansible's NX-OS modules (``nxos_linkagg`` ``get_portchannel``, ``nxos_vpc_interface``
  ``get_portchannel_list``: ``ROW_channel`` an object for one channel, ``group`` a number or a string).
- ``show vpc brief | json``, on one side of a vPC pair: ``vpc-peer-status`` (``peer-ok`` once the adjacency is
  formed; ``peer-link-down`` …), ``TABLE_peerlink`` / ``ROW_peerlink`` with ``peerlink-ifindex`` (``Po1``) and
  ``peer-link-port-state`` (``1`` up, ``0`` down), ``TABLE_vpc`` / ``ROW_vpc`` with ``vpc-id``, ``vpc-ifindex`` and
  ``vpc-port-state`` (``1`` up). Source: Allen Robel (Cisco), nxapi-netbox ``lib/nxapi_netbox/nxapi/nxapi_vpc.py``, the
  ``show vpc | json-pretty`` of a switch whose peer link is down. Before ``feature vpc`` is on, NX-OS refuses the
  command (``% Invalid command``): the switch has no vPC state yet (a first push turns the feature on).

Short names (``Eth1/1``, ``Po10``) become NX-OS's full ones. A reply longer than ``MAX_REPLY`` characters, a table of more
than ``MAX_ROWS`` rows, a port range wider than ``MAX_RANGE``, a name that is no interface name, a VLAN outside
1-4094, a member flag NX-OS does not document, or any other shape than the above is an ``NxosReplyError`` naming the
command and what is wrong: the post-check fails and the change is rolled back, never confirmed on a reading it cannot
trust. Not yet checked on a device here: the transcripts in ``tests/data/transcripts/nxos-l2`` follow the sources above.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from fabric.apply.checks.l2state import VPC_PREFIX, L2State
from fabric.errors import NxosReplyError

VLANS = "show vlan brief | json"
INTERFACES = "show interface brief | json"
CHANNELS = "show port-channel summary | json"
VPC = "show vpc brief | json"
MAX_REPLY = 4 * 1024 * 1024  # characters: a 64-cage switch broken out 4x answers `show interface brief` in well under 1 MiB
MAX_ROWS = 8192  # rows of one table: 4094 VLANs, or every port of a chassis
MAX_RANGE = 4096  # ports in one `a-b` range of a VLAN's port list
MEMBER_FLAGS = frozenset("PpDIHsrb")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9/.:-]{0,63}")
_RANGE = re.compile(r"(?P<prefix>[A-Za-z][A-Za-z-]*(?:\d+/)*)(?P<lo>\d{1,5})-(?P<hi>\d{1,5})")
_SHORT = ((re.compile(r"Eth(?=\d)"), "Ethernet"), (re.compile(r"(?:Po|Port-[Cc]hannel)(?=\d)"), "port-channel"))


def read_nxos_l2(show: Callable[[str], str], *, vpc: bool = False) -> L2State:
    """Read an NX-OS switch's bridge through ``show`` (a session's show method); ``vpc``: also its vPC state."""
    return nxos_l2_state(show(VLANS), show(INTERFACES), show(CHANNELS), show(VPC) if vpc else None)


def nxos_l2_state(vlans: str, interfaces: str, channels: str, vpc: str | None = None) -> L2State:
    """Parse the replies to ``VLANS``, ``INTERFACES``, ``CHANNELS`` (and ``VPC``) into the bridge's state.

    A bundled (``P``) member carries its port-channel's VLANs, any other member none; the vPC state goes into ``up``
    as ``vPC peer adjacency``, ``vPC peer-link`` and ``vPC <id>``.

    Raises:
        NxosReplyError: a reply of a shape this reader does not know (the command and the problem are named).

    Example:
        >>> vlans = ('{"TABLE_vlanbriefxbrief": {"ROW_vlanbriefxbrief": {"vlanshowbr-vlanid": "101", '
        ...          '"vlanshowbr-vlanstate": "active", "vlanshowplist-ifidx": "port-channel1,Ethernet1/2-3"}}}')
        >>> links = '{"TABLE_interface": {"ROW_interface": [{"interface": "Ethernet1/1", "state": "up"}]}}'
        >>> channels = ('{"TABLE_channel": {"ROW_channel": {"group": "1", "port-channel": "port-channel1", "status": "U", '
        ...             '"TABLE_member": {"ROW_member": {"port": "Ethernet1/1", "port-status": "P"}}}}}')
        >>> state = nxos_l2_state(vlans, links, channels)
        >>> sorted(state.vlans), sorted(state.ports), state.ports["Ethernet1/1"], state.up["Ethernet1/1"]
        ([101], ['Ethernet1/1', 'Ethernet1/2', 'Ethernet1/3', 'port-channel1'], frozenset({101}), True)
    """
    carried, active = _vlan_ports(vlans)
    ports = {port: frozenset(found) for port, found in carried.items()}
    up = _links(interfaces)
    for channel, (channel_up, members) in _channels(channels).items():
        up.setdefault(channel, channel_up)
        for member, flag in members.items():
            ports[member] = ports.get(channel, frozenset()) if flag == "P" else frozenset()
    if vpc is not None:
        up.update(_vpc(vpc))
    return L2State(frozenset(active), ports, up)


def _reply(command: str, text: str) -> dict[str, Any]:
    """The reply as a JSON object (an empty reply: no rows); too large, not JSON or not an object is an error."""
    if len(text) > MAX_REPLY:
        msg = f"{command!r}: reply of {len(text)} characters, more than the {MAX_REPLY} this reader takes"
        raise NxosReplyError(msg)
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        msg = f"{command!r}: the reply is not JSON ({type(exc).__name__}), it starts {text.strip()[:60]!r}"
        raise NxosReplyError(msg) from exc
    if not isinstance(data, dict):
        msg = f"{command!r}: the reply is a JSON {type(data).__name__}, not an object"
        raise NxosReplyError(msg)
    return data  # pyright: ignore[reportUnknownVariableType]


def _rows(command: str, data: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """The rows of ``TABLE_<name>`` / ``ROW_<name>``: none when the table is absent, one when NX-OS gives an object."""
    table: Any = data.get(f"TABLE_{name}")
    if table is None:
        return []
    if not isinstance(table, dict) or f"ROW_{name}" not in table:
        msg = f"{command!r}: TABLE_{name} holds no ROW_{name}"
        raise NxosReplyError(msg)
    found: Any = table[f"ROW_{name}"]  # pyright: ignore[reportUnknownVariableType]
    rows: list[Any] = [found] if isinstance(found, dict) else list(found) if isinstance(found, list) else [None]  # pyright: ignore[reportUnknownArgumentType]
    if len(rows) > MAX_ROWS:
        msg = f"{command!r}: {len(rows)} rows in TABLE_{name}, more than {MAX_ROWS}"
        raise NxosReplyError(msg)
    if not all(isinstance(row, dict) for row in rows):
        msg = f"{command!r}: ROW_{name} is neither an object nor a list of objects"
        raise NxosReplyError(msg)
    return rows


def _text(command: str, row: dict[str, Any], key: str) -> str:
    """A row's string field (NX-OS also gives some ids as numbers), at most 64 characters."""
    value: Any = row.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or len(value) > 64:
        msg = f"{command!r}: {key} is {_shown(value)}, not a string of at most 64 characters"
        raise NxosReplyError(msg)
    return value


def _shown(value: object) -> str:
    return repr(value)[:40] if not isinstance(value, dict | list) else f"a JSON {'object' if isinstance(value, dict) else 'array'}"


def interface_name(command: str, value: str) -> str:
    """NX-OS's full name of an interface (``Eth1/1`` → ``Ethernet1/1``, ``Po10`` → ``port-channel10``).

    Example:
        >>> interface_name("show vpc brief | json", "Po2000"), interface_name("x", "Eth1/1/2")
        ('port-channel2000', 'Ethernet1/1/2')
    """
    name = value.strip()
    for short, full in _SHORT:
        name = short.sub(full, name, count=1) if short.match(name) else name
    if not _NAME.fullmatch(name):
        msg = f"{command!r}: {value[:40]!r} is no interface name"
        raise NxosReplyError(msg)
    return name


def _vlan_id(command: str, row: dict[str, Any]) -> int:
    text = _text(command, row, "vlanshowbr-vlanid")
    if not text.isdigit() or not 1 <= int(text) <= 4094:
        msg = f"{command!r}: VLAN id {text!r} is not in 1-4094"
        raise NxosReplyError(msg)
    return int(text)


def port_list(command: str, value: object) -> list[str]:
    """The ports of ``vlanshowplist-ifidx``: a string or a list of strings, comma-separated, with ranges.

    Example:
        >>> port_list("show vlan brief | json", ["port-channel1-2,Ethernet1/6-7", "Ethernet101/1/4"])
        ['port-channel1', 'port-channel2', 'Ethernet1/6', 'Ethernet1/7', 'Ethernet101/1/4']
    """
    parts: list[Any] = list(value) if isinstance(value, list) else [value]  # pyright: ignore[reportUnknownArgumentType]
    if not all(isinstance(p, str) for p in parts) or sum(len(p) for p in parts) > MAX_REPLY:
        msg = f"{command!r}: vlanshowplist-ifidx is {_shown(parts)}, not a string or a list of strings"
        raise NxosReplyError(msg)
    ports: list[str] = []
    for token in (t.strip() for part in parts for t in part.split(",")):
        if not token:
            continue
        span = _RANGE.fullmatch(token)
        if span is None:
            ports.append(interface_name(command, token))
            continue
        lo, hi = int(span["lo"]), int(span["hi"])
        if hi < lo or hi - lo >= MAX_RANGE:
            msg = f"{command!r}: port range {token[:40]!r} is empty or wider than {MAX_RANGE}"
            raise NxosReplyError(msg)
        ports += [interface_name(command, f"{span['prefix']}{n}") for n in range(lo, hi + 1)]
    return ports


def _vlan_ports(text: str) -> tuple[dict[str, set[int]], set[int]]:
    """Port → the active VLANs it is in, and every active VLAN (a suspended or shut VLAN carries nothing)."""
    carried: dict[str, set[int]] = {}
    active: set[int] = set()
    for row in _rows(VLANS, _reply(VLANS, text), "vlanbriefxbrief"):
        vlan = _vlan_id(VLANS, row)
        state = _text(VLANS, row, "vlanshowbr-vlanstate")
        shut = _text(VLANS, row, "vlanshowbr-shutstate") if "vlanshowbr-shutstate" in row else "noshutdown"
        if state != "active" or shut != "noshutdown":
            continue
        active.add(vlan)
        for port in port_list(VLANS, row.get("vlanshowplist-ifidx", "")):
            carried.setdefault(port, set()).add(vlan)
    return carried, active


def _links(text: str) -> dict[str, bool]:
    """Interface → operationally up, from ``show interface brief``."""
    up: dict[str, bool] = {}
    for row in _rows(INTERFACES, _reply(INTERFACES, text), "interface"):
        up[interface_name(INTERFACES, _text(INTERFACES, row, "interface"))] = _text(INTERFACES, row, "state") == "up"
    return up


def _channels(text: str) -> dict[str, tuple[bool, dict[str, str]]]:
    """Port-channel → (up, member → its flag)."""
    out: dict[str, tuple[bool, dict[str, str]]] = {}
    for row in _rows(CHANNELS, _reply(CHANNELS, text), "channel"):
        channel = interface_name(CHANNELS, _text(CHANNELS, row, "port-channel"))
        members: dict[str, str] = {}
        for member in _rows(CHANNELS, row, "member"):
            flag = _text(CHANNELS, member, "port-status")
            if flag not in MEMBER_FLAGS:
                msg = f"{CHANNELS!r}: {channel} member flag {flag[:8]!r} is none NX-OS documents ({', '.join(sorted(MEMBER_FLAGS))})"
                raise NxosReplyError(msg)
            members[interface_name(CHANNELS, _text(CHANNELS, member, "port"))] = flag
        out[channel] = (_text(CHANNELS, row, "status") == "U", members)
    return out


def _vpc(text: str) -> dict[str, bool]:
    """``vPC peer adjacency``, ``vPC peer-link`` and ``vPC <id>`` → up; nothing before ``feature vpc`` is on."""
    if text.lstrip().startswith("% Invalid command"):
        return {}
    data = _reply(VPC, text)
    if not data:
        return {}
    state = {f"{VPC_PREFIX}peer adjacency": _text(VPC, data, "vpc-peer-status") == "peer-ok"}
    links = _rows(VPC, data, "peerlink")
    if links:
        state[f"{VPC_PREFIX}peer-link"] = all(_flag(row, "peer-link-port-state") for row in links)
    for row in _rows(VPC, data, "vpc"):
        vpc_id = _text(VPC, row, "vpc-id")
        if not vpc_id.isdigit():
            msg = f"{VPC!r}: vpc-id {vpc_id!r} is not a number"
            raise NxosReplyError(msg)
        state[f"{VPC_PREFIX}{int(vpc_id)}"] = _flag(row, "vpc-port-state")
    return state


def _flag(row: dict[str, Any], key: str) -> bool:
    value = _text(VPC, row, key)
    if value not in {"0", "1"}:
        msg = f"{VPC!r}: {key} is {value!r}, not 0 or 1"
        raise NxosReplyError(msg)
    return value == "1"
