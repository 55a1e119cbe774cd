"""What an L2 switch's bridge carries now, as every NOS's reader gives it (``fabric.apply.checks.l2``, ``fabric.apply.checks.l2_nxos``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

VPC_PREFIX = "vPC "
"""``L2State.up`` keys that are no interface: an NX-OS vPC pair's peer adjacency, peer link and each vPC (an interface
name never holds a space)."""


@dataclass(frozen=True, slots=True)
class L2State:
    """What an L2 switch's bridge carries now: its VLANs, each port's VLANs, which links are up.

    Attributes:
        vlans: the VLANs on the bridge (active ones only, where the NOS tells them apart).
        ports: port → the VLANs it carries (a LAG member: its LAG's, while it is bundled).
        up: link → operationally up; on NX-OS also ``vPC peer adjacency``, ``vPC peer-link`` and ``vPC <id>``.
    """

    vlans: frozenset[int]
    ports: Mapping[str, frozenset[int]]
    up: Mapping[str, bool]
