"""Natural order of device and port names: ``leaf2`` before ``leaf10``, ``Ethernet2`` before ``Ethernet10``."""

from __future__ import annotations

import re


def natural_key(name: str) -> tuple[tuple[int, str], ...]:
    """Sort key that orders ``leaf2`` before ``leaf10``."""
    return tuple((int(part), "") if part.isdigit() else (-1, part) for part in re.split(r"(\d+)", name) if part)
