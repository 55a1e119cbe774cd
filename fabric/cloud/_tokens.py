"""Pulumi type tokens: ``gpufabric:<cloud>:<Component>``."""

from __future__ import annotations

PREFIX = "gpufabric"


def token(cloud: str, component: str) -> str:
    """The type token of a component.

    Example:
        >>> token("aws", "EfaCluster")
        'gpufabric:aws:EfaCluster'
    """
    return f"{PREFIX}:{cloud}:{component}"
