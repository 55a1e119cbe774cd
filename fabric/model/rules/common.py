"""Helpers shared by the cloud rules of every provider."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from fabric.model.cluster import ClusterSpec
from fabric.model.nodes import NodeGroupSpec


def gpu_groups(spec: ClusterSpec, catalog: Mapping[str, object]) -> Iterator[tuple[int, NodeGroupSpec]]:
    """Index and spec of every non-empty GPU group whose type is in ``catalog`` (unknown types are reported elsewhere)."""
    for gi, group in enumerate(spec.nodes):
        if group.role == "gpu" and group.count and group.instance_type in catalog:
            yield gi, group


def usable_addresses(prefixlen: int, reserved: int) -> int:
    """Addresses a provider leaves for interfaces in a subnet of ``prefixlen`` bits when it keeps ``reserved`` of them.

    Example:
        >>> usable_addresses(24, 5)
        251
    """
    return 2 ** (32 - prefixlen) - reserved
