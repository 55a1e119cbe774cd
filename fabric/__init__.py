"""gpufabric: GPU clusters and their networks from one declarative definition.

The public API is the pipeline, one verb per stage: load -> plan (-> render -> apply in later stages).
"""

from __future__ import annotations

from fabric.errors import FabricError, Finding, InputError, PlanError
from fabric.model import ClusterSpec, load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from fabric.validate import validate_file

__all__ = ["ClusterPlan", "ClusterSpec", "FabricError", "Finding", "InputError", "PlanError", "load_cluster", "plan_cluster", "validate_file"]
