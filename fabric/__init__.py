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
import sys
import types
from typing import TYPE_CHECKING

from fabric import classcode

_PLUGIN_LOADER = "pydantic.plugin._loader"
"""pydantic's plugin discovery, imported when the first model class is built (``pydantic/plugin/_schema_validator.py``,
``create_schema_validator``, pydantic 2.14.3): it imports ``importlib.metadata`` (with ``email``, ``zipfile``, ``csv``)
and reads every installed distribution's entry points, some 30 ms of every command's start (issue 36)."""
_no_plugins = types.ModuleType(_PLUGIN_LOADER, "No pydantic plugins for gpufabric's own models (fabric/__init__.py).")
_no_plugins.get_plugins = tuple  # type: ignore[attr-defined] - get_plugins() -> (): the models built below get none
_quiet = _PLUGIN_LOADER not in sys.modules  # a loader already imported (plugins looked up before us) is left alone
if _quiet:
    sys.modules[_PLUGIN_LOADER] = _no_plugins

classcode.install()  # every dataclass and forward reference created from here on: compiled once per machine

try:
    from fabric.errors import FabricError, Finding, InputError, PlanError, PushError, RenderError
    from fabric.model import ClusterSpec, load_cluster
    from fabric.plan import ClusterPlan, plan_cluster
    from fabric.validate import validate_file
finally:  # any model built from here on (a caller's) finds pydantic's own discovery again, even if an import failed
    if sys.modules.get(_PLUGIN_LOADER) is _no_plugins:
        del sys.modules[_PLUGIN_LOADER]

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
