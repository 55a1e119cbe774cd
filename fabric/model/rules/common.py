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


_ARM = ("arm64", "aarch64")
_X86 = ("amd64", "x86_64", "x86-64")


def image_architecture(*names: str) -> str | None:
    """The CPU architecture an image's name (family, SKU, offer) spells out, or None when it names none.

    Example:
        >>> image_architecture("ubuntu-accelerator-2404-arm64-with-nvidia-580"), image_architecture("2204")
        ('arm64', None)
    """
    text = " ".join(names).lower()
    if any(token in text for token in _ARM):
        return "arm64"
    if any(token in text for token in _X86):
        return "x86_64"
    return None
