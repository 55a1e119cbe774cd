"""Rack positions: where the definition says each device sits (``racks``), checked against the devices the plan has."""

from __future__ import annotations

from collections.abc import Iterable

from fabric.errors import Finding
from fabric.model.cluster import ClusterSpec


def build_positions(spec: ClusterSpec, devices: Iterable[str]) -> tuple[tuple[tuple[str, str, int], ...], list[Finding]]:
    """``(device, rack, U)`` of every placed device, sorted by device, and an error for each device the plan lacks.

    Example:
        >>> from fabric.model import load_cluster
        >>> spec = load_cluster("inventories/lab/cluster.yaml")
        >>> spec = spec.model_copy(update={"racks": {"r01": {"leaf01": 42, "node1": 2, "gpu999": 3}}})
        >>> positions, findings = build_positions(spec, ["leaf01", "node1"])
        >>> positions, [f.path for f in findings]
        ((('leaf01', 'r01', 42), ('node1', 'r01', 2)), [('racks', 'r01', 'gpu999')])
    """
    known = set(devices)
    positions: list[tuple[str, str, int]] = []
    findings: list[Finding] = []
    for rack, placed in spec.racks.items():
        for device, unit in placed.items():
            if device in known:
                positions.append((device, rack, unit))
            else:
                msg = f"'{device}' is not a device of this plan; racks place nodes (by hostname) and switches (by name)"
                findings.append(Finding(("racks", rack, device), msg))
    return tuple(sorted(positions)), findings
