"""The file system a stack created, as its nodes mount it (``gpufabric_shared_fs``), from what the provider reported."""

from __future__ import annotations

import pulumi

from fabric.inventory.shared_fs import shared_fs


def reported(kind: str, server: str | None, name: str | None, lustre_version: str | None = None) -> dict[str, str] | None:
    """``shared_fs`` of what the provider reported; where it reported no address or name (a mock, or a provider that
    has not filled them yet), a warning naming the file system and no variable: the nodes then mount nothing."""
    if not server or not name:
        pulumi.log.warn(
            f"{kind}: the provider reported no address or name (server={server!r}, name={name!r}); the inventory has no "
            "gpufabric_shared_fs and nodes mount nothing. Fix: run `pulumi up` again once the file system is available."
        )
        return None
    return shared_fs(kind, server, name, lustre_version)
