"""Parsers of LLDP neighbour replies, one per NOS form; pure. Every reply is hostile input: bounded in size and in
neighbours, every field of the type the form defines, every name a printable string of bounded length. A parser
raises ``ValueError`` saying what is wrong; ``fabric.apply.cabling.collect`` names the device and the file.

Forms (the file suffix under ``verify --cabling --from DIR``, and the command that gives it):

- ``lldpctl.json``: ``lldpcli -f json show neighbors`` (lldpd: nodes, SONiC's lldp container, the twin), and its
  ``-f json0`` form (lldpcli(8), lldpd 1.0.16: "json0 ... is not affected by the number of interfaces or neighbors");
- ``sonic.txt``: SONiC ``show lldp table`` (sonic-utilities ``scripts/lldpshow``);
- ``nvue.txt``: Cumulus Linux ``nv show interface lldp`` (NVUE reference, Cumulus Linux 5.0: "Remote Host", "Remote Port");
- ``eos.json``: Arista EOS ``show lldp neighbors detail | json`` (and ``show lldp neighbors | json``);
- ``nxos.json``: Cisco NX-OS ``show lldp neighbors detail | json`` (``TABLE_nbor_detail`` / ``ROW_nbor_detail``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

MAX_REPLY_BYTES = 4 << 20  # a 512-port switch's detailed LLDP JSON is well under 2 MiB (EOS detail: ~1.3 KiB a neighbour)
MAX_NEIGHBOURS = 2048  # per device: more than any switch has ports (4 neighbours a port on a 512-port switch)
MAX_NAME = 128  # a system or port name; RFC 1213 sysName and ifName are at most 255, real ones far shorter
MAX_DEPTH = 12  # JSON nesting: lldpctl's json0 is the deepest form, 7 levels
_NAME = re.compile(r"^[\x21-\x7e]+$")  # printable ASCII, no space: what the plan's device and port names are made of


@dataclass(frozen=True, slots=True, order=True)
class Seen:
    """One neighbour a device reports: its ``port`` hears ``peer``'s ``peer_port``."""

    device: str
    port: str
    peer: str
    peer_port: str


def name(value: object, what: str) -> str:
    """``value`` as a device or port name, or ``ValueError`` naming ``what`` is wrong with it."""
    if not isinstance(value, str):
        raise ValueError(f"{what}: expected a string, got {type(value).__name__}")
    text = value.strip()
    if not text or len(text) > MAX_NAME or not _NAME.match(text):
        raise ValueError(f"{what}: {text[:MAX_NAME]!r} is not a name (1-{MAX_NAME} printable characters, no spaces)")
    return text


def load_json(text: str) -> Any:  # noqa: ANN401 - a device's JSON, checked field by field by each parser
    """The JSON document of a reply, refused when too large or too deep."""
    if len(text) > MAX_REPLY_BYTES:
        raise ValueError(f"reply of {len(text)} bytes is over the {MAX_REPLY_BYTES}-byte bound")
    depth = 0
    deepest = 0
    for ch in text:  # the nesting before parsing: json.loads recurses
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    if deepest > MAX_DEPTH:
        raise ValueError(f"JSON nested {deepest} deep, over the bound of {MAX_DEPTH}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc


def _dict(value: object, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{what}: expected an object, got {type(value).__name__}")
    return value  # pyright: ignore[reportUnknownVariableType] - keys are str in JSON


def _list(value: object, what: str) -> list[Any]:
    """A list, or one object that a form collapses from a list of one (lldpctl json, NX-OS ROW_*)."""
    if isinstance(value, list):
        return value  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        return [value]
    raise ValueError(f"{what}: expected a list or an object, got {type(value).__name__}")


def bounded(found: list[Seen]) -> list[Seen]:
    """``found`` without repeats, in order; refused over ``MAX_NEIGHBOURS``."""
    if len(found) > MAX_NEIGHBOURS:
        raise ValueError(f"{len(found)} neighbours, over the bound of {MAX_NEIGHBOURS}")
    return sorted(set(found))


def _value(node: object, what: str) -> str:
    """lldpctl's ``"x"`` (json) or ``[{"value": "x"}]`` (json0)."""
    if isinstance(node, str):
        return name(node, what)
    items = _list(node, what)
    if len(items) != 1:
        raise ValueError(f"{what}: expected one value, got {len(items)}")
    return name(_dict(items[0], what).get("value"), what)


def _lldpctl_port(port: dict[str, Any], where: str) -> str:
    """The neighbour's port: its id when the subtype is an interface name or local, else its description (lldpd sends
    the MAC as the id and the interface name as the description by default: lldpcli(8), ``portidsubtype``)."""
    ident = _dict(_list(port.get("id"), f"{where}.port.id")[0], f"{where}.port.id")
    if ident.get("type") in ("ifname", "local"):
        return name(ident.get("value"), f"{where}.port.id.value")
    descr = _value(port["descr"], f"{where}.port.descr") if "descr" in port else ""
    value = ident.get("value")
    return _port(value if isinstance(value, str) else "", descr, f"{where}.port.id.value")


def _lldpctl_chassis(chassis: dict[str, Any], where: str) -> str:
    """The neighbour's system name: the key of ``chassis`` (json: ``{"leaf01": {...}}``) or its ``name`` (json0)."""
    if "name" in chassis:
        return _value(chassis["name"], f"{where}.chassis.name")
    if "id" in chassis or len(chassis) != 1:
        raise ValueError(f"{where}.chassis: the neighbour sends no system name")
    return name(next(iter(chassis)), f"{where}.chassis")


def parse_lldpctl(text: str, device: str) -> list[Seen]:
    """``lldpcli -f json|json0 show neighbors``.

    Example:
        >>> parse_lldpctl('{"lldp": {"interface": {"eth1": {"chassis": {"leaf01": {}}, '
        ...               '"port": {"id": {"type": "ifname", "value": "swp1"}}}}}}', "node1")
        [Seen(device='node1', port='eth1', peer='leaf01', peer_port='swp1')]
    """
    lldp: object = _dict(load_json(text), "top level").get("lldp")
    if isinstance(lldp, list):  # json0: "lldp": [{"interface": [...]}]
        outer: list[object] = lldp  # pyright: ignore[reportUnknownVariableType] - checked entry by entry
        lldp = outer[0] if outer else {}
    interfaces = _dict(lldp, "lldp").get("interface", [])
    found: list[Seen] = []
    for entry in _list(interfaces, "lldp.interface"):
        entry = _dict(entry, "lldp.interface[]")  # noqa: PLW2901
        # json0: {"name": "eth1", "chassis": [...], "port": [...]}; json: {"eth1": {...}} (a list of such when several)
        items = [(entry["name"], entry)] if "name" in entry else list(entry.items())
        for local, body in items:
            where = f"lldp.interface.{str(local)[:MAX_NAME]}"
            body = _dict(body, where)  # noqa: PLW2901
            chassis = _dict(_list(body.get("chassis"), f"{where}.chassis")[0], f"{where}.chassis")
            port = _dict(_list(body.get("port"), f"{where}.port")[0], f"{where}.port")
            found.append(Seen(device, name(local, where), _lldpctl_chassis(chassis, where), _lldpctl_port(port, where)))
    return bounded(found)


_MAC = re.compile(r"^[0-9A-Fa-f]{2}([:.-]?[0-9A-Fa-f]{2}){5}$")  # lldpd's default port id: the port's MAC (lldpcli(8) portidsubtype)
UNKNOWN_PORT = ""
"""A neighbour port known only by its MAC: ``fabric.apply.cabling.compare`` matches it by device alone."""


def _port(port_id: str, descr: str, what: str) -> str:
    """The neighbour's port: its id, or its description when the id is a MAC (``UNKNOWN_PORT`` without one)."""
    if _MAC.match(port_id.strip()):
        return name(descr, what) if descr.strip() else UNKNOWN_PORT
    return name(port_id, what)


def _table_rows(text: str, header: str, what: str) -> Iterator[tuple[int, list[str]]]:
    """The cells of each row of a fixed-width table (tabulate's, NVUE's): the columns are the runs of dashes in the rule
    under the line that starts with ``header``, so an empty cell or one with spaces stays in its column."""
    if len(text) > MAX_REPLY_BYTES:
        raise ValueError(f"reply of {len(text)} bytes is over the {MAX_REPLY_BYTES}-byte bound")
    lines = text.expandtabs().splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().startswith(header)), None)
    if start is None or start + 1 >= len(lines) or not lines[start + 1].strip() or set(lines[start + 1].strip()) - {"-", " "}:
        raise ValueError(f"no {what} table: expected a header line starting with {header!r} and a dashed rule under it")
    rule = lines[start + 1]
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", rule)]
    bounds = [(a, spans[k + 1][0] if k + 1 < len(spans) else None) for k, (a, _) in enumerate(spans)]
    for n, line in enumerate(lines[start + 2 :], start=start + 3):
        stripped = line.strip()
        if not stripped:
            continue
        if set(stripped) <= {"-"} or stripped.startswith("Total entries"):
            break
        yield n, [line[a:b].strip() for a, b in bounds]


def parse_sonic(text: str, device: str) -> list[Seen]:
    """SONiC ``show lldp table`` (sonic-utilities ``scripts/lldpshow``): ``LocalPort RemoteDevice RemotePortID Capability
    RemotePortDescr``. RemotePortID is the port id as sent; lldpd on a node sends its MAC there and the interface in
    RemotePortDescr, which is then taken.

    Example:
        >>> parse_sonic("LocalPort  RemoteDevice  RemotePortID  Capability  RemotePortDescr\\n"
        ...             "---------  ------------  ------------  ----------  ---------------\\n"
        ...             "Ethernet0  gpu001        enp24s0np0    O           enp24s0np0\\n", "leaf01")
        [Seen(device='leaf01', port='Ethernet0', peer='gpu001', peer_port='enp24s0np0')]
    """
    found: list[Seen] = []
    for n, row in _table_rows(text, "LocalPort", "show lldp table"):
        if len(row) < 5:
            raise ValueError(f"line {n}: expected the five columns of show lldp table, got {len(row)}")
        where = f"line {n}"
        found.append(
            Seen(device, name(row[0], f"{where} LocalPort"), name(row[1], f"{where} RemoteDevice"), _port(row[2], row[4], f"{where} RemotePortID"))
        )
    return bounded(found)


def parse_nvue(text: str, device: str) -> list[Seen]:
    """Cumulus Linux ``nv show interface lldp``: ``Interface Speed Type Remote Host Remote Port`` (NVUE reference,
    Cumulus Linux 5.0). A Remote Port that is a MAC (a server's lldpd) leaves the port unknown: matched by host."""
    found: list[Seen] = []
    for n, row in _table_rows(text, "Interface", "nv show interface lldp"):
        if len(row) < 5:
            raise ValueError(f"line {n}: expected Interface, Speed, Type, Remote Host and Remote Port, got {len(row)} columns")
        where = f"line {n}"
        found.append(
            Seen(device, name(row[0], f"{where} Interface"), name(row[3], f"{where} Remote Host"), _port(row[4], "", f"{where} Remote Port"))
        )
    return bounded(found)


def parse_eos(text: str, device: str) -> list[Seen]:
    """Arista EOS ``show lldp neighbors detail | json`` (``lldpNeighbors`` by local port, each a ``lldpNeighborInfo``
    list) or ``show lldp neighbors | json`` (a list of ``port``, ``neighborDevice``, ``neighborPort``)."""
    top = _dict(load_json(text), "top level")
    neighbours = top.get("lldpNeighbors")
    found: list[Seen] = []
    if isinstance(neighbours, list):  # the summary form
        rows: list[object] = neighbours  # pyright: ignore[reportUnknownVariableType] - checked row by row
        for n, row in enumerate(rows):
            row = _dict(row, f"lldpNeighbors[{n}]")  # noqa: PLW2901
            where = f"lldpNeighbors[{n}]"
            found.append(
                Seen(
                    device,
                    name(row.get("port"), f"{where}.port"),
                    name(row.get("neighborDevice"), f"{where}.neighborDevice"),
                    name(row.get("neighborPort"), f"{where}.neighborPort"),
                )
            )
        return bounded(found)
    for local, body in _dict(neighbours, "lldpNeighbors").items():
        where = f"lldpNeighbors.{str(local)[:MAX_NAME]}"
        for n, info in enumerate(_list(_dict(body, where).get("lldpNeighborInfo", []), f"{where}.lldpNeighborInfo")):
            info = _dict(info, f"{where}.lldpNeighborInfo[{n}]")  # noqa: PLW2901
            iface = _dict(info.get("neighborInterfaceInfo"), f"{where}.neighborInterfaceInfo")
            kind = iface.get("interfaceIdType")
            # interfaceId_v2 is the id without EOS's quotes (EOS 4.23+); interfaceId quotes an interface name ("\"Ethernet2\"")
            ident = iface.get("interfaceId_v2", iface.get("interfaceId"))
            descr = iface.get("interfaceDescription", "")
            if kind in ("interfaceName", "local"):
                port = name(ident.strip('"') if isinstance(ident, str) else ident, f"{where}.interfaceId")
            else:  # a MAC (a server's lldpd): the interface is in the description
                port = _port("00:00:00:00:00:00", descr if isinstance(descr, str) else "", f"{where}.interfaceDescription")
            found.append(Seen(device, name(local, where), name(info.get("systemName"), f"{where}.systemName"), port))
    return bounded(found)


_NXOS_SHORT = re.compile(r"^Eth(?=\d)")  # NX-OS abbreviates its own ports in l_port_id: Eth1/49 is Ethernet1/49


def parse_nxos(text: str, device: str) -> list[Seen]:
    """Cisco NX-OS ``show lldp neighbors detail | json``: ``TABLE_nbor_detail.ROW_nbor_detail`` rows (one row collapses
    to an object) with ``l_port_id``, ``sys_name`` and ``port_id``; ``show lldp neighbors | json`` (``TABLE_nbor``)
    has ``chassis_id`` for the name."""
    top = _dict(load_json(text), "top level")
    detail = "TABLE_nbor_detail" in top
    table = _dict(top.get("TABLE_nbor_detail" if detail else "TABLE_nbor"), "TABLE_nbor_detail")
    rows = _list(table.get("ROW_nbor_detail" if detail else "ROW_nbor"), "ROW_nbor_detail")
    found: list[Seen] = []
    for n, row in enumerate(rows):
        row = _dict(row, f"ROW[{n}]")  # noqa: PLW2901
        local = _NXOS_SHORT.sub("Ethernet", name(row.get("l_port_id"), f"ROW[{n}].l_port_id"))
        peer = row.get("sys_name") if detail else row.get("chassis_id")
        descr = row.get("port_desc", "")
        port = _port(name(row.get("port_id"), f"ROW[{n}].port_id"), descr if isinstance(descr, str) else "", f"ROW[{n}].port_desc")
        found.append(Seen(device, local, name(peer, f"ROW[{n}].sys_name"), port))
    return bounded(found)
