"""Ansible filters of the gpufabric node roles: OpenPGP key fingerprints (a downloaded repository key is trusted only
when it is the pinned one) and port GUIDs checked before they reach opensm's partitions.conf."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Iterable
from typing import Any

_ARMOR = re.compile(r"-----BEGIN PGP PUBLIC KEY BLOCK-----(.*?)-----END PGP PUBLIC KEY BLOCK-----", re.DOTALL)
_PUBLIC_KEY = 6  # RFC 4880 §5.5.1.1 / RFC 9580 §5.5.1.1: the primary key packet
_GUID = re.compile(r"^0x[0-9a-f]{16}$")


def pgp_fingerprints(key: str | bytes, *, encoded: bool = False) -> list[str]:
    """Fingerprints (upper-case hex) of the primary keys in an OpenPGP public key, armored or binary; ``encoded``: the
    key is base64 (a slurped file's ``content``), so a binary key reaches the parser byte for byte.

    v4 keys: SHA-1 over 0x99, the two-octet body length and the key packet body (RFC 4880 §12.2); v6 keys: SHA-256
    over 0x9B, a four-octet length and the body (RFC 9580 §5.5.4). Anything that is not a key gives ``[]``.

    Example:
        >>> pgp_fingerprints("not a key")
        []
    """
    if encoded:
        try:
            key = base64.b64decode(key, validate=True)
        except (binascii.Error, ValueError):
            return []
    data = _dearmor(key)
    fingerprints: list[str] = []
    for tag, body in _packets(data):
        if tag != _PUBLIC_KEY or not body:
            continue
        if body[0] == 4:
            fingerprints.append(hashlib.sha1(b"\x99" + len(body).to_bytes(2, "big") + body, usedforsecurity=False).hexdigest().upper())
        elif body[0] == 6:
            fingerprints.append(hashlib.sha256(b"\x9b" + len(body).to_bytes(4, "big") + body).hexdigest().upper())
    return fingerprints


def unpinned_keys(fingerprints: Iterable[str], pins: Iterable[str], where: str = "the key") -> list[str]:
    """Why a downloaded key file must not be trusted: empty when it holds at least one key and every key's fingerprint
    ends with a pinned one (16 hex digits = long key id, 40 = the full v4 fingerprint). A file with the pinned key plus
    another would make apt trust the other too, so each key is checked, not only one.

    Example:
        >>> unpinned_keys(["3DDC1D98307B802BAB1029A8693EFF6594C2D8DE"], ["693EFF6594C2D8DE"])
        []
        >>> unpinned_keys(["3DDC1D98307B802BAB1029A8693EFF6594C2D8DE", "A362B822F6DEDC652817EA46B53DC80D13EDEF05"],
        ...               ["3ddc1d98307b802bab1029a8693eff6594c2d8de"], "apt-key.gpg")
        ['apt-key.gpg: key A362B822F6DEDC652817EA46B53DC80D13EDEF05 is not pinned']
    """
    wanted = [str(p).upper() for p in pins]
    found = [str(f).upper() for f in fingerprints]
    if not found:
        return [f"{where}: not an OpenPGP public key (no key in the file)"]
    return [f"{where}: key {f} is not pinned" for f in found if not any(f.endswith(p) for p in wanted if p)]


def _dearmor(key: str | bytes) -> bytes:
    text = key.decode("latin-1") if isinstance(key, bytes) else key
    found = _ARMOR.search(text)
    if not found:
        return key if isinstance(key, bytes) else b""
    lines = [line.strip() for line in found.group(1).strip("\r\n").splitlines()]
    if lines and ":" in lines[0] and "" in lines:  # armor headers ("Version: …") end at the first empty line
        lines = lines[lines.index("") + 1 :]
    body = "".join(line for line in lines if line and not line.startswith("="))
    try:
        return base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        return b""


def _packets(data: bytes) -> Iterable[tuple[int, bytes]]:
    """(tag, body) of each packet; stops at the first malformed header."""
    pos = 0
    while pos < len(data):
        header = data[pos]
        if not header & 0x80:
            return
        if header & 0x40:  # new format: tag in the low six bits, one-, two- or five-octet length
            tag, pos = header & 0x3F, pos + 1
            if pos >= len(data):
                return
            first = data[pos]
            if first < 192:
                length, pos = first, pos + 1
            elif first < 224:
                if pos + 1 >= len(data):
                    return
                length, pos = ((first - 192) << 8) + data[pos + 1] + 192, pos + 2
            elif first == 255:
                length, pos = int.from_bytes(data[pos + 1 : pos + 5], "big"), pos + 5
            else:
                return  # partial lengths never occur in key packets
        else:  # old format: tag in bits 5-2, length type in bits 1-0
            tag, kind, pos = (header >> 2) & 0x0F, header & 0x03, pos + 1
            if kind == 3:
                return
            size = 1 << kind
            length, pos = int.from_bytes(data[pos : pos + size], "big"), pos + size
        if pos + length > len(data):
            return
        yield tag, data[pos : pos + length]
        pos += length


def port_guids(values: Iterable[Any], where: str = "port GUIDs") -> list[str]:
    """The values unchanged when every one is ``0x`` and 16 lower-case hex digits; otherwise an error naming each bad one.

    GUIDs are read from each node's sysfs and written into opensm's partitions.conf: a node must not be able to put
    anything else there.

    Example:
        >>> port_guids(["0x0c42a10300e17f5a"])
        ['0x0c42a10300e17f5a']
        >>> port_guids(["0x0c42a10300e17f5a, ALL=full"], "dgx01")
        Traceback (most recent call last):
        ...
        ValueError: dgx01: '0x0c42a10300e17f5a, ALL=full' is not a port GUID (0x and 16 hex digits)
    """
    guids = list(values)
    bad = [g for g in guids if not isinstance(g, str) or not _GUID.match(g)]
    if bad:
        msg = f"{where}: " + "; ".join(f"{g!r} is not a port GUID (0x and 16 hex digits)" for g in bad)
        raise ValueError(msg)
    return guids


def port_guid_map(members: dict[str, Any], where: str = "port GUIDs") -> dict[str, list[str]]:
    """Host → port GUIDs, each list checked as :func:`port_guids` does (for a cache read back from a node).

    Example:
        >>> port_guid_map({"dgx01": ["0x0c42a10300aa0001"]})
        {'dgx01': ['0x0c42a10300aa0001']}
    """
    if not isinstance(members, dict):
        msg = f"{where}: not a mapping of host to port GUIDs"
        raise TypeError(msg)
    return {str(host): port_guids(guids if isinstance(guids, list) else [guids], f"{where}, {host}") for host, guids in members.items()}


# partitions.conf as opensm parses it (linux-rdma/opensm doc/partition-config.txt and opensm/osm_prtn_config.c @fa74b98):
# "PartitionName=PKey[,flag[=value]]... : PortGUID[=full|limited|both], ... ;", flags ipoib and mtu=<4|5>; the running SM
# is the only parser ("PARSE ERROR: line N: ..." in its log) and `opensm --version` never reads this file.
_MEMBER = r"(?:ALL|SELF|ALL_CAS|ALL_SWITCHES|ALL_ROUTERS|0x[0-9a-fA-F]{16})(?:=(?:full|limited|both))?"
_PARTITION_LINE = re.compile(rf"^(\w+)=(0x[0-9a-fA-F]{{1,4}})((?:, ?(?:ipoib|mtu=[1-5]))*) : ((?:{_MEMBER}(?:, ?{_MEMBER})*)?);$")


def partitions_problems(text: str, partitions: Iterable[dict[str, Any]], where: str = "partitions.conf") -> list[str]:
    """What is wrong with ``text`` (partitions.conf read back from the SM node) against the definition's partitions.

    Every line must parse, the default partition must be there, and each partition of the definition must be there
    once, with its pkey and its ipoib flag.

        >>> text = "Default=0x7fff, ipoib, mtu=5 : ALL=full, SELF=full;\\ngpu=0x0002, mtu=5 : ;"
        >>> partitions_problems(text, [{"name": "gpu", "pkey": "0x0002", "ipoib": True}])
        ['partitions.conf: gpu=0x0002 has no ipoib flag, the definition gives it one']
    """
    found: dict[str, tuple[int, bool]] = {}
    problems: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _PARTITION_LINE.match(line)
        if match is None:
            problems.append(f"{where} line {number}: {line!r} is not a partition line opensm parses (Name=PKey[, ipoib][, mtu=N] : members;)")
            continue
        if match.group(1) in found:
            problems.append(f"{where} line {number}: partition {match.group(1)} is defined twice")
        found[match.group(1)] = (int(match.group(2), 16), "ipoib" in match.group(3))
    if found.get("Default", (None,))[0] != 0x7FFF:
        problems.append(f"{where}: no Default=0x7fff line (the default partition, pkey index 0, NCCL's)")
    for partition in partitions:
        name, pkey, ipoib = str(partition["name"]), int(str(partition["pkey"]), 0), bool(partition.get("ipoib", True))
        if name not in found:
            problems.append(f"{where}: partition {name} ({partition['pkey']}) of the definition is missing")
        elif found[name][0] != pkey:
            problems.append(f"{where}: {name} has pkey 0x{found[name][0]:04x}, the definition says {partition['pkey']}")
        elif found[name][1] != ipoib:
            flag = "has no ipoib flag, the definition gives it one" if ipoib else "has the ipoib flag, the definition does not"
            problems.append(f"{where}: {name}={partition['pkey']} {flag}")
    return problems


class FilterModule:
    """Registers the filters with Ansible."""

    def filters(self) -> dict[str, Any]:
        return {
            "gpufabric_pgp_fingerprints": pgp_fingerprints,
            "gpufabric_unpinned_keys": unpinned_keys,
            "gpufabric_port_guids": port_guids,
            "gpufabric_port_guid_map": port_guid_map,
            "gpufabric_partitions_problems": partitions_problems,
        }
