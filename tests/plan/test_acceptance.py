"""Acceptance pairs: every fabric cable of every on-prem example crossed by a pair, at the per-switch lower bound; rounds
that share no cable; pins that walk the planned path; localisation that never names a healthy cable and, after one
follow-up round, names a single bad cable exactly."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.model import ClusterSpec
from fabric.plan import ClusterPlan, plan_cluster
from fabric.plan.acceptance import AcceptancePlan, BandwidthPair, fabric_links, follow_up, link_id, plan_acceptance
from fabric.plan.acceptance_localise import localise
from tests.conftest import DATA, EXAMPLES, ROOT

DEFINITIONS = [p for p in EXAMPLES + sorted(DATA.glob("**/cluster.yaml")) if "onprem" in p.read_text(encoding="utf-8")]


@cache
def _plan(path: Path) -> ClusterPlan:
    return plan_cluster(ClusterSpec.model_validate(yaml.safe_load(path.read_text(encoding="utf-8"))))


def _lab(host_ports_per_leaf: int = 1) -> ClusterPlan:
    """The lab twin with one node per leaf: 4 leaves, 2 spines (8 fabric cables)."""
    data = yaml.safe_load((ROOT / "inventories" / "lab" / "cluster.yaml").read_text(encoding="utf-8"))
    data["fabric"]["host_ports_per_leaf"] = host_ports_per_leaf
    return plan_cluster(ClusterSpec.model_validate(data))


ON_PREM = [p for p in DEFINITIONS if _plan(p).fabric is not None]


def test_the_examples_include_two_and_three_tiers_ethernet_and_infiniband() -> None:
    plans = [_plan(p) for p in ON_PREM]
    assert len(plans) >= 20
    assert any(p.fabric and p.fabric.pods for p in plans), "a three-tier example"
    assert any(p.fabric and p.fabric.link_layer == "infiniband" for p in plans)
    assert (ROOT / "inventories" / "three-tier" / "cluster.yaml") in ON_PREM


@pytest.mark.parametrize("path", ON_PREM, ids=lambda p: str(p.parent.relative_to(ROOT)))
def test_every_fabric_cable_of_every_example_is_crossed_by_a_pair_at_the_lower_bound(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = _plan(path)
    acceptance = plan_acceptance(plan)
    assert acceptance is not None
    assert plan.fabric is not None
    wanted = {link_id(link) for link in fabric_links(plan.fabric)}
    assert len(wanted) == len(acceptance.links) > 0
    # only a cable no end-to-end test can cross stays uncovered: its leaf has no hosts, or its spine meets no other leaf
    # with hosts (a one-leaf fabric); each is named with that reason, and every other cable is crossed
    hosted = {link.a_device for link in plan.fabric.links if link.kind == "host"}
    leaves_at = {link.b_device: set[str]() for link in fabric_links(plan.fabric)}
    for link in fabric_links(plan.fabric):
        if link.a_device in hosted:
            leaves_at[link.b_device].add(link.a_device)
    leaves = {s.name for s in plan.fabric.switches if s.tier == "leaf"}
    unreachable = {
        link_id(link)
        for link in fabric_links(plan.fabric)
        if link.a_device in leaves and (link.a_device not in hosted or len(leaves_at[link.b_device]) < 2)
    }
    assert acceptance.covered() == wanted - unreachable, f"uncovered: {sorted(wanted - unreachable - acceptance.covered())}"
    assert {u.split(": ")[0] for u in acceptance.uncovered} == unreachable
    if not unreachable:
        assert len(acceptance.pairs) == acceptance.lower_bound, "a pair crosses at most two cables at one spine (and one super-spine)"
    with capsys.disabled():
        print(f"\n{path.parent.relative_to(ROOT)}: {len(acceptance.pairs)} pairs for {len(wanted)} fabric cables, {acceptance.rounds} rounds")


def _walk(plan: ClusterPlan, pair: BandwidthPair) -> list[str]:
    """Follow the pins from the client's leaf to the server's address: the cables taken."""
    assert plan.fabric is not None
    by_port = {(link.a_device, link.a_port): link for link in plan.fabric.links} | {(link.b_device, link.b_port): link for link in plan.fabric.links}
    pins = {(p.device, p.destination): p.port for p in pair.pins}
    here, taken = pair.client.leaf, []
    for _ in range(8):
        if here == pair.server.leaf:
            return taken
        link = by_port[(here, pins[(here, f"{pair.server.address}/32")])]
        taken.append(link_id(link))
        here = link.b_device if link.a_device == here else link.a_device
    pytest.fail(f"{pair.name}: the pins loop")


@pytest.mark.parametrize("name", ["inventories/three-tier", "inventories/onprem-roce", "tests/data/render/frr-3tier"])
def test_pins_walk_exactly_the_planned_path_and_rounds_share_no_cable(name: str) -> None:
    plan = _plan(ROOT / name / "cluster.yaml")
    acceptance = plan_acceptance(plan)
    assert acceptance is not None
    assert acceptance.pinned
    for pair in acceptance.pairs:
        assert _walk(plan, pair) == list(pair.links)
        back = replace(pair, client=pair.server, server=pair.client)
        assert _walk(plan, back) == list(reversed(pair.links))
    for number in range(1, acceptance.rounds + 1):
        members = [p for p in acceptance.pairs if p.round == number]
        used = [cable for p in members for cable in p.crossed]
        assert len(used) == len(set(used)), f"round {number} loads a cable twice"


def test_infiniband_pairs_are_not_pinned() -> None:
    acceptance = plan_acceptance(_plan(ROOT / "inventories" / "onprem-ib" / "cluster.yaml"))
    assert acceptance is not None
    assert not acceptance.pinned
    assert all(p.pins == () for p in acceptance.pairs)


def test_a_spine_cabled_to_one_leaf_only_is_reported_uncovered() -> None:
    plan = _lab()
    assert plan.fabric is not None
    lone = [link for link in plan.fabric.links if not (link.b_device == "spine01" and link.a_device != "leaf01")]
    cut = replace(plan, fabric=replace(plan.fabric, links=tuple(lone)))
    acceptance = plan_acceptance(cut)
    assert acceptance is not None
    assert len(acceptance.uncovered) == 1
    assert acceptance.uncovered[0].startswith("leaf01:swp2~spine01:swp1: no other leaf with hosts on spine01")


def test_cloud_clusters_have_no_acceptance_plan() -> None:
    assert plan_acceptance(_plan(ROOT / "inventories" / "aws-p5" / "cluster.yaml")) is None


def _measure(pairs: tuple[BandwidthPair, ...], bad: set[str]) -> dict[str, float]:
    """The model: a pair crossing a bad cable runs at a tenth of line rate."""
    return {p.name: 40.0 if p.crossed & bad else 400.0 for p in pairs}


LOCALISED = {
    "lab-4-leaves": _lab,
    "three-tier": lambda: _plan(ROOT / "inventories" / "three-tier" / "cluster.yaml"),
    "onprem-roce": lambda: _plan(ROOT / "inventories" / "onprem-roce" / "cluster.yaml"),
}


@cache
def _accepted(name: str) -> tuple[ClusterPlan, AcceptancePlan]:
    plan = LOCALISED[name]()
    acceptance = plan_acceptance(plan)
    assert acceptance is not None
    return plan, acceptance


@settings(deadline=None, max_examples=60)  # planning onprem-roce once takes longer than a draw
@given(name=st.sampled_from(sorted(LOCALISED)), data=st.data())
def test_one_bad_cable_is_named_exactly_after_one_follow_up_round(name: str, data: st.DataObject) -> None:
    plan, acceptance = _accepted(name)
    bad = data.draw(st.sampled_from(acceptance.links))
    first = localise(acceptance.pairs, _measure(acceptance.pairs, {bad}))
    assert bad in first.suspects
    assert set(first.named) <= {bad}
    extra = follow_up(plan, acceptance, first.suspects, first.proven) if not first.named else ()
    both = acceptance.pairs + extra
    final = localise(both, _measure(acceptance.pairs, {bad}) | _measure(extra, {bad}))
    assert final.named == (bad,), (first, extra)
    assert final.unexplained == ()


@settings(deadline=None, max_examples=60)  # planning onprem-roce once takes longer than a draw
@given(name=st.sampled_from(sorted(LOCALISED)), data=st.data())
def test_localisation_never_names_a_good_cable(name: str, data: st.DataObject) -> None:
    plan, acceptance = _accepted(name)
    bad = set(data.draw(st.lists(st.sampled_from(acceptance.links), min_size=1, max_size=4)))
    first = localise(acceptance.pairs, _measure(acceptance.pairs, bad))
    assert set(first.named) <= bad
    assert {link for link in bad if any(link in p.links for p in acceptance.pairs)} <= set(first.suspects)
    extra = follow_up(plan, acceptance, first.suspects, first.proven)
    final = localise(acceptance.pairs + extra, _measure(acceptance.pairs, bad) | _measure(extra, bad))
    assert set(final.named) <= bad


def test_localise_without_measurements_names_nothing_and_lists_the_missing() -> None:
    _, acceptance = _accepted("lab-4-leaves")
    result = localise(acceptance.pairs, {})
    assert result.named == ()
    assert result.slow == ()
    assert result.missing == tuple(sorted(p.name for p in acceptance.pairs))


def test_two_leaves_leave_the_two_cables_of_a_spine_together() -> None:
    """With two leaves only, every path through a spine crosses both its cables: end-to-end tests cannot split them."""
    plan = _lab(host_ports_per_leaf=2)
    acceptance = plan_acceptance(plan)
    assert acceptance is not None
    bad = acceptance.pairs[0].links[0]
    result = localise(acceptance.pairs, _measure(acceptance.pairs, {bad}))
    assert result.named == ()
    assert result.ambiguous == ((acceptance.pairs[0].name, tuple(sorted(acceptance.pairs[0].crossed))),)
