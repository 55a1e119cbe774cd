"""The on-prem cluster definition the benchmarks share: its planes, a rail-optimized fabric, and the caller's nodes."""

from __future__ import annotations

PLANES = """target: onprem
planes:
  compute: {transport: roce, cidr: 10.0.0.0/12, mtu: 9000}
  storage: {cidr: 10.16.0.0/16, mtu: 9000}
  inband: {cidr: 10.17.0.0/16, gateway: 10.17.0.1}
  oob: {cidr: 10.18.0.0/16, gateway: 10.18.0.1}
"""


def rail_optimized(name: str, fabric: str, nodes: str) -> str:
    """A cluster definition on the shared planes with a rail-optimized fabric.

    Args:
        name: The cluster's name.
        fabric: The ``fabric:`` keys after ``topology``, as YAML lines indented two spaces.
        nodes: The ``nodes:`` list, as YAML lines indented two spaces.

    Returns:
        The definition's YAML text.

    Example:
        >>> rail_optimized("c", "  leaf: {model: sn5600, nos: sonic}\\n", "  - {group: gpu}\\n").splitlines()[7:]
        ['fabric:', '  topology: rail-optimized', '  leaf: {model: sn5600, nos: sonic}', 'nodes:', '  - {group: gpu}']
    """
    return f"name: {name}\n{PLANES}fabric:\n  topology: rail-optimized\n{fabric}nodes:\n{nodes}"
