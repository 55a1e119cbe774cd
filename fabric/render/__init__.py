"""Stage 3 — render: pure functions from the plan to text, one module per NOS. No I/O.

Each renderer takes one switch's facts (``fabric.plan.compute.facts``) and returns its files; none looks across devices.
"""

from __future__ import annotations

import gc
import importlib
from collections.abc import Callable, Iterable

from fabric.plan.compute.facts import SwitchFacts, build_switch_facts
from fabric.plan.types import ClusterPlan
from fabric.render.cabling import render_cabling
from fabric.render.diagrams.topology import topology_svgs
from fabric.render.kea import render_kea
from fabric.render.lazy import LazyRenderers
from fabric.render.oob import render_oob
from fabric.render.storage import render_storage

__all__ = [
    "RENDERERS",
    "render_avd_configs",
    "render_cabling",
    "render_configs",
    "render_plan_files",
    "render_switch",
    "render_switch_files",
    "templates_first",
    "topology_svgs",
]

Renderer = Callable[[SwitchFacts], dict[str, str]]

RENDERERS = LazyRenderers[Renderer](
    {
        "sonic": "fabric.render.nos.sonic.compute:render_sonic",
        "cumulus": "fabric.render.nos.cumulus.compute:render_cumulus",
        "eos": "fabric.render.nos.eos.compute:render_eos",
        "nxos": "fabric.render.nos.nxos.compute:render_nxos",
        "frr": "fabric.render.nos.frr:render_frr",
        "mlnx-os": "fabric.render.nos.mlnxos:render_mlnxos",
    }
)
"""NOS → renderer, each imported when its NOS is first rendered (``fabric.render.lazy``)."""


BUILT_IN_PYTHON = frozenset({"eos", "sonic", "frr"})
"""The NOSes whose compute switches are written in Python, no template: EOS (``fabric.render.nos.eos.text``), SONiC and
FRR (a shared spine's ``frr.conf`` too, ``fabric.render.nos.frr.render_vrf_conf``). Only an EOS shared spine's VRF
sections among them are templates. Cumulus, NX-OS and MLNX-OS print through Jinja."""


def templates_first(plan: ClusterPlan) -> bool:
    """Import Jinja now when some compute switch of ``plan`` renders through templates; whether it did.

    For a caller about to fork render workers (``fabric.cli.render_workers``): Jinja is imported with the first template
    (``fabric.render.templating``), so without this each worker of a Cumulus, NX-OS or MLNX-OS render would import it
    again (some 13 ms each), where the parent used to import it once for all; a plan of EOS, SONiC or FRR switches
    imports none (an EOS shared spine's VRF sections then import it in the worker that renders one).

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> templates_first(plan_cluster(load_cluster("tests/data/render/sonic/cluster.yaml")))
        False
    """
    if plan.fabric is None or all(s.nos in BUILT_IN_PYTHON for s in plan.fabric.switches):
        return False
    importlib.import_module("fabric.render._jinja")  # Jinja loaded now, before the fork

    return True


def render_switch(facts: SwitchFacts) -> dict[str, str]:
    """The files of one switch, named for its NOS (``frr.conf``, ``config_db.json``, ``startup-config`` …)."""
    return RENDERERS[facts.switch.nos](facts)


def render_configs(plan: ClusterPlan) -> dict[str, str]:
    """Every rendered file of a plan, by relative path: ``switches/<name>/<file>``, ``cabling.csv``, ``topology-<plane>.svg``.

    ``plan.json`` is not among them: the CLI streams it (``fabric.plan.serialize.write_plan_json``). The files of the
    plan as a whole come first, then the compute switches in plan order: the first ``RenderError`` in that order is raised.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> sorted(render_configs(plan_cluster(load_cluster("inventories/lab/cluster.yaml"))))[:2]
        ['cabling.csv', 'dhcp/kea-dhcp4.json']
    """
    files = render_plan_files(plan)
    files.update(render_switch_files(build_switch_facts(plan)))
    return dict(sorted(files.items()))


def render_plan_files(plan: ClusterPlan) -> dict[str, str]:
    """The files of the plan as a whole, compute switches aside: cabling, DHCP, storage and OOB switches, diagrams.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> sorted(render_plan_files(plan_cluster(load_cluster("inventories/lab/cluster.yaml"))))[:2]
        ['cabling.csv', 'dhcp/kea-dhcp4.json']
    """
    enabled = gc.isenabled()
    gc.disable()  # a few hundred thousand short-lived tuples and strings, no cycle: a collection would walk the plan for nothing
    try:
        files = {"cabling.csv": render_cabling(plan), **render_kea(plan), **render_storage(plan), **render_oob(plan)}
        files.update({f"topology-{plane}.svg": svg for plane, svg in topology_svgs(plan).items()})
    finally:
        if enabled:
            gc.enable()
    return files


def render_switch_files(facts: Iterable[SwitchFacts]) -> dict[str, str]:
    """The files of these compute switches, by relative path ``switches/<name>/<file>``, in the order given.

    Raises:
        RenderError: the first switch, in the order given, that its NOS cannot express.
    """
    files: dict[str, str] = {}
    for switch in facts:
        for name, text in render_switch(switch).items():
            files[f"switches/{switch.switch.name}/{name}"] = text
    return files


def render_avd_configs(plan: ClusterPlan) -> dict[str, str]:
    """AVD structured config of every EOS switch, as ``structured_configs/<switch>.yml`` (AVD's own layout); empty without EOS.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> sorted(render_avd_configs(plan_cluster(load_cluster("tests/data/render/eos/cluster.yaml"))))[0]
        'structured_configs/leaf01.yml'
    """
    from fabric.render.avd.compute import render_avd

    files: dict[str, str] = {}
    for facts in build_switch_facts(plan):
        if facts.switch.nos == "eos":
            files.update({f"structured_configs/{name}": text for name, text in render_avd(facts).items()})
    return dict(sorted(files.items()))
