"""Ansible filter of network_planes: what the kernel's bonding driver says about a bond, against what the role built.

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


class FilterModule:
    """Registers the filters with Ansible."""

    def filters(self) -> dict[str, Any]:
        return {"gpufabric_bond_miimon_ms": bond_miimon_ms, "gpufabric_bond_problems": bond_problems, "gpufabric_bonding_report": bonding_report}
