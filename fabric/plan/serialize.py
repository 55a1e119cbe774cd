"""Deterministic JSON of a plan (byte-identical for the same definition)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter

from fabric.plan.types import ClusterPlan

_ADAPTER: TypeAdapter[ClusterPlan] = TypeAdapter(ClusterPlan)


def plan_to_data(plan: ClusterPlan) -> dict[str, Any]:
    """The plan as JSON-compatible data."""
    return _ADAPTER.dump_python(plan, mode="json")


def plan_to_json(plan: ClusterPlan) -> str:
    """The plan as indented JSON text ending in a newline.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> plan_to_json(plan_cluster(load_cluster("inventories/lab/cluster.yaml"))).startswith('{')
        True
    """
    return json.dumps(plan_to_data(plan), indent=1, sort_keys=False) + "\n"
