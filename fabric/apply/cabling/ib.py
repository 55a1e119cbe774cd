"""Parsers of the InfiniBand fabric's own view, from any host of the subnet (pure): ``ibnetdiscover`` and
``iblinkinfo`` (infiniband-diags). One reply covers every device: each ``Seen`` names its device from the node
description, the way the subnet manager reports it.

- A node's HCA describes itself ``<hostname> <hca>`` (``"node019 HCA-1"``, ``"mgt mlx5_0"``: the kernel's default node
  description, ``/sys/class/infiniband/<hca>/node_desc``); its port is the HCA (``mlx5_0``), which the plan maps to the
  interface of that rail.
- A managed NVIDIA switch describes itself ``MF0;<hostname>:<model>/U1`` (``"MF0;SB7700:MSB7700/U1"`` in a published
  ``iblinkinfo``); anything else is named by its first word. Its ports are numbers; ``ib_port_number`` gives the
  number of a plan port ``IB1/<cage>/<port>``.

Forms (file suffix under ``--from DIR``): ``ibnetdiscover.txt`` (the topology file format of infiniband-diags'
``sec_topology-file.rst``) and ``iblinkinfo.txt`` (``iblinkinfo``'s ``Switch:`` / ``CA:`` blocks, or ``-l`` lines).
"""

from __future__ import annotations

import re

from fabric.apply.cabling.parse import MAX_REPLY_BYTES, Seen, bounded, name

_HCA = re.compile(r"^(?:[a-z]+\d*_\d+|HCA-\d+)$")  # an RDMA device name (mlx5_3, mlx4_0, hfi1_0) or the old default HCA-1
_MANAGED = re.compile(r"^MF0;(?P<host>[^:]+):")
# ibnetdiscover: a node line, then its links ("[port](guid)?  "peer"[port](guid)?  # ... "peer description" ...)
_NODE = re.compile(r'^(?P<kind>Switch|Ca)\s+\d+\s+"[SH]-[0-9a-fA-F]+"\s+#\s+"(?P<desc>[^"]*)"')
_LINK = re.compile(
    r'^\[(?P<port>\d+)\](?:\([0-9a-fA-F]+\))?\s+"(?P<type>[SHR])-[0-9a-fA-F]+"\[(?P<peer_port>\d+)\](?:\([0-9a-fA-F]+\))?\s+#(?P<rest>.*)$'
)
_QUOTED = re.compile(r'"([^"]*)"')
# iblinkinfo: "Switch: 0x... name:" / "CA: name:" headers, then "[guid] [\"desc\"] lid port[..] ==( ... )==> [guid] lid port[..] \"peer\""
_HEADER = re.compile(r"^(?P<kind>Switch|CA):\s+(?:0x[0-9a-fA-F]+\s+)?(?P<desc>.*):\s*$")
_LINE = re.compile(
    r'^\s*(?:0x[0-9a-fA-F]+\s+)?(?:"(?P<desc>[^"]*)"\s+)?\d+\s+(?P<port>\d+)\[[^\]]*\]\s*==\(.*?\)==>'
    r'\s*(?:0x[0-9a-fA-F]+\s+)?\d+\s+(?P<peer_port>\d+)\[[^\]]*\]\s*"(?P<peer>[^"]*)"'
)
_LINE_MAX = 4096


def describe(desc: str, port: str, what: str) -> tuple[str, str]:
    """(device, port) of an IB node description and its port number: a node's HCA port is the HCA, a switch's is its
    number.

    Example:
        >>> describe("gpu017 mlx5_3", "1", "x"), describe("MF0;leaf-su01-r1:MQM9700/U1", "33", "x")
        (('gpu017', 'mlx5_3'), ('leaf-su01-r1', '33'))
    """
    managed = _MANAGED.match(desc)
    if managed:
        return name(managed["host"], what), port
    words = desc.split()
    if not words:
        raise ValueError(f"{what}: an empty node description")
    hca = len(words) > 1 and _HCA.match(words[1])
    return name(words[0], what), name(words[1], what) if hca else port


def ib_port_number(port: str, ports_per_cage: int = 2) -> str | None:
    """The logical port number of an MLNX-OS port name (``IB1/17/1`` → ``33`` on a twin-port cage; ``IB1/5`` → ``5``),
    or None for another name. UNPROVEN: that the logical numbering runs cage by cage, ``(cage - 1) * ports_per_cage +
    port``, is assumed (the QM9700 names ports ``IB1/<cage>/<port>``, [mlnxos-q2]; no reference found for the number
    ibnetdiscover shows for each)."""
    match = re.fullmatch(r"(?:IB|ib)\d+/(\d+)(?:/(\d+))?", port)
    if match is None:
        return None
    cage, sub = int(match[1]), match[2]
    return str((cage - 1) * ports_per_cage + int(sub)) if sub else str(cage)


def _lines(text: str) -> list[str]:
    if len(text) > MAX_REPLY_BYTES:
        raise ValueError(f"reply of {len(text)} bytes is over the {MAX_REPLY_BYTES}-byte bound")
    lines = text.splitlines()
    long = next((n for n, line in enumerate(lines) if len(line) > _LINE_MAX), None)
    if long is not None:
        raise ValueError(f"line {long + 1}: over {_LINE_MAX} characters")
    return lines


def parse_ibnetdiscover(text: str, device: str) -> list[Seen]:  # noqa: ARG001 - one reply for the whole subnet
    """``ibnetdiscover``: every link of every node, named from the node descriptions."""
    found: list[Seen] = []
    here: str | None = None
    for n, raw in enumerate(_lines(text)):
        line = raw.strip()
        node = _NODE.match(line)
        if node:
            here = node["desc"]
            continue
        link = _LINK.match(line)
        if link is None:
            continue
        if here is None:
            raise ValueError(f"line {n + 1}: a link before any Switch or Ca line")
        peer_desc = _QUOTED.findall(link["rest"])
        if not peer_desc:
            raise ValueError(f"line {n + 1}: no peer node description after '#'")
        local = describe(here, link["port"], f"line {n + 1} node description")
        peer = describe(peer_desc[0], link["peer_port"], f"line {n + 1} peer description")
        found.append(Seen(*local, *peer))
    return bounded(found)


def parse_iblinkinfo(text: str, device: str) -> list[Seen]:  # noqa: ARG001 - one reply for the whole subnet
    """``iblinkinfo``: every active link (a ``Down/ Polling`` port has no peer and is left out)."""
    found: list[Seen] = []
    here: str | None = None
    for n, raw in enumerate(_lines(text)):
        header = _HEADER.match(raw.strip())
        if header:
            here = header["desc"]
            continue
        link = _LINE.match(raw)
        if link is None:
            continue
        desc = link["desc"].strip() if link["desc"] else here
        if desc is None:
            raise ValueError(f"line {n + 1}: a link before any Switch: or CA: line")
        local = describe(desc, link["port"], f"line {n + 1} node description")
        peer = describe(link["peer"], link["peer_port"], f"line {n + 1} peer description")
        found.append(Seen(*local, *peer))
    return bounded(found)
