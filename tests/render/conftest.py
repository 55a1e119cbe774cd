"""Render cases: every on-prem example and one small fabric per NOS."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from fabric.model import load_cluster
from fabric.model.cluster import ClusterSpec
from fabric.plan import ClusterPlan, plan_cluster
from fabric.render import render_configs
from tests.conftest import DATA, EXAMPLES, ROOT

# every on-prem example under inventories/ (a new one gets render goldens like the others)
ONPREM_EXAMPLES = [p.parent.name for p in EXAMPLES if "\ntarget: onprem\n" in p.read_text(encoding="utf-8")]
NOS_CASES = sorted(p.name for p in (DATA / "render").iterdir() if (p / "cluster.yaml").exists())
CASES = [*ONPREM_EXAMPLES, *(f"render/{n}" for n in NOS_CASES)]


def definition(case: str) -> Path:
    return ROOT / "inventories" / case / "cluster.yaml" if case in ONPREM_EXAMPLES else DATA / case / "cluster.yaml"


@cache
def plan_of(case: str) -> ClusterPlan:
    return plan_cluster(load_cluster(definition(case)))


@cache
def files_of(case: str) -> dict[str, str]:
    return render_configs(plan_of(case))


# A case with more fabric switches than this (a published design at its real size) is checked by the vendors' tools
# (pyavd, the arista.eos / cisco.nxos parsers) on the first two switches of each tier, as the goldens keep them: every
# switch of a tier renders the same forms, only names and numbers differ, and one pyavd or Ansible run costs about a
# second of CPU per switch and release. Smaller cases keep every switch.
SAMPLE_ABOVE = 16
SAMPLED_PER_TIER = 2


def unsampled_switches(case: str) -> frozenset[str]:
    """The fabric switches of ``case`` that the vendors' tools skip (none on a case of SAMPLE_ABOVE switches or fewer)."""
    fabric = plan_of(case).fabric
    if fabric is None or len(fabric.switches) <= SAMPLE_ABOVE:
        return frozenset()
    tiers = (fabric.super_spines, fabric.spines, fabric.leaves)
    kept = {s.name for tier in tiers for s in tier[:SAMPLED_PER_TIER]}
    return frozenset(s.name for s in fabric.switches if s.name not in kept)


def with_release(spec: ClusterSpec, release: str) -> ClusterSpec:
    """The same definition with every switch tier on ``release`` (the NOS stays)."""
    fabric = spec.fabric
    assert fabric is not None
    tiers = {t: spec.model_copy(update={"nos_version": release}) for t, spec in fabric.tier_specs.items()}
    return spec.model_copy(update={"fabric": fabric.model_copy(update=tiers)})
