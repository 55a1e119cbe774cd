"""gpufabric: GPU clusters and their networks from one declarative definition.

The public API is the pipeline, one verb per stage, data flowing one way and pure until apply:

- load: ``load_cluster`` (YAML -> ``ClusterSpec``), ``validate_file`` (schema, rules and plan checks, every finding located);
- plan: ``plan_cluster`` (``ClusterSpec`` -> ``ClusterPlan``);
- render: ``render_configs`` (``ClusterPlan`` -> ``{path: text}``), ``onprem_inventory`` (the Ansible inventory);
- apply: ``candidates``, ``push_and_record``, ``offline_diff`` (``fabric.apply.push``: the only switch I/O).

Render, inventory and apply are imported on first use, so ``import fabric`` stays as light as loading a definition.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from fabric.errors import FabricError, Finding, InputError, PlanError, PushError, RenderError
from fabric.model import ClusterSpec, load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from fabric.validate import validate_file

if TYPE_CHECKING:
    from fabric.apply.push import candidates, offline_diff, push_and_record
    from fabric.inventory import onprem_inventory
    from fabric.render import render_configs

_LAZY = {
    "render_configs": "fabric.render",
    "onprem_inventory": "fabric.inventory",
    "candidates": "fabric.apply.push",
    "push_and_record": "fabric.apply.push",
    "offline_diff": "fabric.apply.push",
}

__all__ = [
    "ClusterPlan",
    "ClusterSpec",
    "FabricError",
    "Finding",
    "InputError",
    "PlanError",
    "PushError",
    "RenderError",
    "candidates",
    "load_cluster",
    "offline_diff",
    "onprem_inventory",
    "plan_cluster",
    "push_and_record",
    "render_configs",
    "validate_file",
]


def __getattr__(name: str) -> object:
    """The later stages' verbs, imported when first asked for."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    msg = f"module 'fabric' has no attribute {name!r}"
    raise AttributeError(msg)
