"""Ansible filters of network_planes: what the kernel's bonding driver says about a bond against what the role built; IPoIB children.

``/proc/net/bonding/<bond>`` is written by the bonding driver (Linux ``drivers/net/bonding/bond_procfs.c``:
``"Bonding Mode: %s"``, ``"MII Polling Interval (ms): %d"`` from ``bond->params.miimon``, one ``"Slave Interface: %s"``
per member). Every field is read by its whole label; a number is read as digits only, so ``100`` never matches
``1000`` and a unit is never stripped from a value that has none.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

LACP_MODE = "IEEE 802.3ad Dynamic link aggregation"
"""``bond_mode_name(BOND_MODE_8023AD)`` in the bonding driver."""

_MIIMON = re.compile(r"^MII Polling Interval \(ms\):[ \t]*(\d+)[ \t]*$", re.MULTILINE)
_MODE = re.compile(r"^Bonding Mode:[ \t]*(.+?)[ \t]*$", re.MULTILINE)
_SLAVE = re.compile(r"^Slave Interface:[ \t]*(\S+)[ \t]*$", re.MULTILINE)


def bond_miimon_ms(text: str) -> int | None:
    """The MII polling interval in milliseconds, from ``/proc/net/bonding/<bond>`` (None when the line is missing).

    Example:
        >>> bond_miimon_ms("Bonding Mode: IEEE 802.3ad Dynamic link aggregation\\nMII Polling Interval (ms): 100\\n")
        100
        >>> bond_miimon_ms("MII Polling Interval (ms): 100ms\\n") is None  # not the driver's format
        True
    """
    found = _MIIMON.search(text)
    return int(found.group(1)) if found else None


def bond_problems(text: str, bond: Mapping[str, Any], miimon_ms: int) -> list[str]:
    """One line per way the running bond differs from the planned one: mode, members, MII polling interval.

    Args:
        text: ``/proc/net/bonding/<bond>`` as read on the node.
        bond: the planned bond (``name`` and ``members``, as in ``gpufabric_bonds``).
        miimon_ms: the MII polling interval the role configured, in milliseconds.

    Returns:
        Problems naming the bond, the expected and the actual value; empty when the bond is as planned.

    Example:
        >>> proc = ("Bonding Mode: IEEE 802.3ad Dynamic link aggregation\\nMII Polling Interval (ms): 200\\n"
        ...         "Slave Interface: a\\nSlave Interface: b\\n")
        >>> bond_problems(proc, {"name": "bond-storage", "members": ["b", "a"]}, 100)
        ['bond-storage: MII polling interval expected 100 ms, actual 200 ms']
    """
    name = bond["name"]
    problems: list[str] = []
    mode = _MODE.search(text)
    if mode is None or mode.group(1) != LACP_MODE:
        problems.append(f"{name}: mode expected {LACP_MODE!r}, actual {mode.group(1) if mode else 'none (no Bonding Mode line)'!r}")
    members = sorted(_SLAVE.findall(text))
    if members != sorted(bond["members"]):
        problems.append(f"{name}: members expected {', '.join(sorted(bond['members']))}, actual {', '.join(members) or 'none'}")
    actual = bond_miimon_ms(text)
    if actual != int(miimon_ms):
        problems.append(
            f"{name}: MII polling interval expected {int(miimon_ms)} ms, actual "
            + (f"{actual} ms" if actual is not None else "unknown (no 'MII Polling Interval (ms)' line)")
        )
    return problems


def bonding_report(results: Sequence[Mapping[str, Any]], miimon_ms: int) -> list[str]:
    """Problems of every bond read by a registered loop (``cat /proc/net/bonding/<bond>`` per planned bond).

    Example:
        >>> bonding_report([{"item": {"name": "bond-storage", "members": ["a"]}, "rc": 1, "stdout": "",
        ...                  "stderr": "cat: /proc/net/bonding/bond-storage: No such file or directory"}], 100)
        ['bond-storage: not a bond in the kernel (cat: /proc/net/bonding/bond-storage: No such file or directory)']
    """
    problems: list[str] = []
    for result in results:
        if "item" not in result or result.get("skipped"):
            continue
        if result.get("rc", 1) != 0:
            problems.append(f"{result['item']['name']}: not a bond in the kernel ({str(result.get('stderr', '')).strip() or 'unreadable'})")
            continue
        problems.extend(bond_problems(str(result.get("stdout", "")), result["item"], miimon_ms))
    return problems


def ipoib_children(interfaces: Sequence[Mapping[str, Any]], partitions: Sequence[Mapping[str, Any]], host: str) -> list[dict[str, str]]:
    """The IPoIB child interfaces ``host`` needs: one per IPoIB port and partition with ``ipoib`` that lists the host.

    The kernel makes a child when the partition key is written to ``/sys/class/net/<parent>/create_child`` and sets the
    full-membership bit itself before naming it ``<parent>.<pkey | 0x8000 as 4 hex digits>`` (Linux
    drivers/infiniband/ulp/ipoib/ipoib_main.c ``create_child``: "Set the full membership bit, so that we join the right
    broadcast group"; ipoib_vlan.c ``"%s.%04x"``; NVIDIA's MLNX-GW manual: ``echo 0x<pkey|0x8000> > .../create_child``).
    A limited member gets none: it cannot talk to the other limited members, and NCCL uses pkey index 0 anyway. A
    name over the kernel's 15 characters is returned with ``problem`` set, for the role to refuse.

    Example:
        >>> ports = [{"name": "ibp24s0", "link_layer": "infiniband"}, {"name": "eth0", "link_layer": "ethernet"}]
        >>> parts = [{"name": "gpu", "pkey": "0x0002", "ipoib": True, "members": [{"host": "a", "membership": "full"}]},
        ...          {"name": "st", "pkey": "0x0003", "ipoib": True, "members": [{"host": "a", "membership": "limited"}]}]
        >>> ipoib_children(ports, parts, "a")
        [{'parent': 'ibp24s0', 'child': 'ibp24s0.8002', 'pkey': '0x8002', 'partition': 'gpu', 'problem': ''}]
        >>> ipoib_children(ports, parts, "b")
        []
    """
    children: list[dict[str, str]] = []
    for partition in partitions:
        full = {m["host"] for m in partition.get("members", ()) if m.get("membership", "full") in ("full", "both")}
        if not partition.get("ipoib", True) or host not in full:
            continue
        pkey = int(str(partition["pkey"]), 0) | 0x8000
        for port in interfaces:
            if port.get("link_layer") != "infiniband":
                continue
            child = f"{port['name']}.{pkey:04x}"
            problem = f"{child} is longer than the kernel's 15-character interface names" if len(child) > 15 else ""
            children.append(
                {"parent": str(port["name"]), "child": child, "pkey": f"0x{pkey:04x}", "partition": str(partition["name"]), "problem": problem}
            )
    return children


class FilterModule:
    """Registers the filters with Ansible."""

    def filters(self) -> dict[str, Any]:
        return {
            "gpufabric_bond_miimon_ms": bond_miimon_ms,
            "gpufabric_bond_problems": bond_problems,
            "gpufabric_bonding_report": bonding_report,
            "gpufabric_ipoib_children": ipoib_children,
        }
