"""A VLAN list in the form EOS and NX-OS print it back: ascending, each run of consecutive ids as ``low-high``.

Both NOSes store ``switchport trunk allowed vlan 101,102`` as a set and show it compressed: ``101-102`` (an NX-OS
running-config with ``switchport trunk allowed vlan 10-11``, and EOS configs with ``10-11,20,101``, in the public
configs ``find_string`` returns; AVD's ``list_compress`` filter gives the same form for ``eos_designs``). Rendering that
form keeps a push idempotent: the running config then reads back exactly as rendered, so no line is re-sent and
``verify`` sees no drift.
"""

from __future__ import annotations

from collections.abc import Iterable


def vlan_ranges(vlans: Iterable[int]) -> str:
    """``vlans`` as the NOS prints them.

    Example:
        >>> vlan_ranges([102, 101, 200, 4, 5, 6, 101])
        '4-6,101-102,200'
        >>> vlan_ranges([100])
        '100'
    """
    ids = sorted(set(vlans))
    runs: list[str] = []
    start = 0
    for i in range(1, len(ids) + 1):
        if i == len(ids) or ids[i] != ids[i - 1] + 1:
            low, high = ids[start], ids[i - 1]
            runs.append(str(low) if low == high else f"{low}-{high}")
            start = i
    return ",".join(runs)


def vlan_ids(text: str) -> set[int]:
    """The VLAN ids of a list as NOSes print it (``10``, ``10,20``, ``10-12,20``): the inverse of ``vlan_ranges``.

    Example:
        >>> sorted(vlan_ids("4-6,101-102,200")) == [4, 5, 6, 101, 102, 200]
        True
    """
    out: set[int] = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        out.update(range(int(low), int(high or low) + 1))
    return out
