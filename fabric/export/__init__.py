"""Fabric to workload: what NCCL and Slurm must be told, derived from the plan (pure: plan → files).

Each exporter takes the ``ClusterPlan`` and returns ``{relative path: text}``, like ``render``; the CLI
(``python -m fabric export {k8s,nccl,slurm,telemetry} FILE -o DIR``) writes them. Nothing here does I/O.
"""

from __future__ import annotations

from fabric.export.k8s import export_k8s
from fabric.export.nccl import export_nccl
from fabric.export.slurm import export_slurm
from fabric.export.telemetry import export_telemetry

__all__ = ["export_k8s", "export_nccl", "export_slurm", "export_telemetry"]
