"""The storage / in-band switches' configs, per NOS: ``switches/<name>/<file>`` like the compute switches."""

from __future__ import annotations

from collections.abc import Callable

from fabric.plan.storage.facts import StorageSwitchFacts, build_storage_facts
from fabric.plan.types import ClusterPlan
from fabric.render.lazy import LazyRenderers

StorageRenderer = Callable[[StorageSwitchFacts], dict[str, str]]

STORAGE_RENDERERS = LazyRenderers[StorageRenderer](
    {
        "cumulus": "fabric.render.nos.cumulus.storage:render_storage_cumulus",
        "sonic": "fabric.render.nos.sonic.storage:render_storage_sonic",
        "eos": "fabric.render.nos.eos.storage:render_storage_eos",
        "nxos": "fabric.render.nos.nxos.storage:render_storage_nxos",
    }
)
"""NOS → storage / in-band switch renderer, each imported when its NOS is first rendered (``fabric.render.lazy``)."""


def render_storage(plan: ClusterPlan) -> dict[str, str]:
    """Every file of every storage / in-band switch, by relative path.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> sorted(render_storage(plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml"))))[0]
        'switches/stor-spine-a/nvue.sh'
    """
    files: dict[str, str] = {}
    for facts in build_storage_facts(plan):
        for name, text in STORAGE_RENDERERS[facts.switch.nos](facts).items():
            files[f"switches/{facts.switch.name}/{name}"] = text
    return files
