"""Profiles whose port names or RDMA devices no vendor document gives: a warning for each group that relies on them.

A built-in profile marks such fields ``unpublished`` (``fabric/catalog/data/nodes/README.md`` says where each source was
looked for). Its values are placeholders, so the host configs, ``NCCL_IB_HCA`` and the cabling sheet built from them name
interfaces the machine may not have. The group replaces them with ``interfaces.<plane>`` (names) or ``ports.<plane>``
(names and RDMA devices); then no warning.
"""

from __future__ import annotations

from collections.abc import Iterator

from fabric.errors import Finding
from fabric.model.cluster import ClusterSpec

_WHAT = {"names": "interface names", "hcas": "RDMA devices"}


def _brief(values: tuple[str, ...]) -> str:
    """The first two values, and how many there are when more.

    Example:
        >>> _brief(("a", "b", "c")), _brief(("a",))
        ('a, b, ... 3 in all', 'a')
    """
    return ", ".join(values) if len(values) <= 2 else f"{values[0]}, {values[1]}, ... {len(values)} in all"


def check_unpublished_ports(spec: ClusterSpec) -> Iterator[Finding]:
    """One warning per group and plane whose profile's names or RDMA devices are placeholders the group did not replace."""
    for gi, group in enumerate(spec.nodes):
        if spec.target != "onprem" or group.hardware is None or not group.count:
            continue
        profile = spec.profile_of(group)
        if profile is None:
            continue  # an unknown profile: check_node_groups reports it
        for plane, ports in profile.ports.items():
            missing = [f for f in ports.unpublished if not (f == "names" and plane in group.interfaces)]
            if not missing:
                continue
            values = {"names": ports.names or tuple(f"bus {b}" for b in ports.pci_buses), "hcas": ports.hcas}
            shown = " and ".join(f"{_WHAT[f]} ({_brief(values[f])})" for f in missing)
            fix = f"interfaces.{plane} (names) or ports.{plane}" if missing == ["names"] else f"ports.{plane} (names and hcas)"
            yield Finding(
                ("nodes", gi, "hardware"),
                f"group '{group.group}': profile '{group.hardware}' has placeholder {plane} {shown}: no vendor document "
                f"gives them (fabric/catalog/data/nodes/README.md); set nodes[{gi}].{fix} to what the machine shows "
                "(ip -br link, ibdev2netdev)",
                "warning",
            )
