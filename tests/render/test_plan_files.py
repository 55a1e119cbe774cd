"""The plan-wide files built in bulk (issue 36) are the files built one cable at a time: ``cabling.csv`` byte for byte,
the topology diagram's structure field for field (``tests/render/plan_files_reference.py`` keeps the old code)."""

from __future__ import annotations

import dataclasses
import gc
import random
from collections import defaultdict

import pytest

from fabric import render as render_package
from fabric.plan.compute.planes import plane_fabric, plane_of
from fabric.plan.types import ClusterPlan, FabricPlan, Link
from fabric.render import render_plan_files
from fabric.render.cabling import render_cabling
from fabric.render.diagrams import topology_structure
from fabric.render.diagrams.topology_structure import plane_structure
from tests.render import plan_files_reference as reference
from tests.render.conftest import CASES, plan_of


def _planes(plan: ClusterPlan) -> list[tuple[FabricPlan, list[Link]]]:
    """Every (fabric, links) the diagram structures, as ``topology_svgs`` picks them."""
    fabric = plan.fabric
    assert fabric is not None
    by_plane: dict[str, list[Link]] = defaultdict(list)
    for link in fabric.links:
        by_plane[link.plane].append(link)
    planes = sorted({p for s in fabric.leaves if (p := plane_of(s.name)) is not None})
    return [(fabric, links) for links in by_plane.values()] + [(f, list(f.links)) for f in (plane_fabric(fabric, k) for k in planes)]


@pytest.mark.parametrize("case", CASES)
def test_cabling_is_what_csv_writes(case: str) -> None:
    plan = plan_of(case)
    assert render_cabling(plan) == reference.cabling(plan)


def _odd(plan: ClusterPlan, field: str, value: object) -> ClusterPlan:
    """``plan`` with one field of its first compute and first OOB cable set to ``value``."""
    assert plan.fabric is not None
    assert plan.oob is not None
    first, *rest = plan.fabric.links
    fabric = dataclasses.replace(plan.fabric, links=(dataclasses.replace(first, **{field: value}), *rest))
    first_oob, *rest_oob = plan.oob.links
    oob = dataclasses.replace(plan.oob, links=(dataclasses.replace(first_oob, **{field: value}), *rest_oob))
    return dataclasses.replace(plan, fabric=fabric, oob=oob)


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("b_port", "Ethernet1/1, core", '"Ethernet1/1, core"'),
        ("b_port", 'core "a"', '"core ""a"""'),
        ("b_port", "core\nside", '"core\nside"'),
        ("b_port", "core\rside", "core\rside"),  # Python 3.11's csv leaves a carriage return unquoted with "\n" line ends
        ("b_port", None, ",,100,"),  # csv writes None empty, not "None"
        ("a_device", "None", "\nNone,"),  # a device so named: the slow path, the same bytes
    ],
)
def test_cabling_quotes_a_field_that_needs_it(field: str, value: object, expected: str) -> None:
    plan = _odd(plan_of("lab"), field, value)
    text = render_cabling(plan)
    assert text == reference.cabling(plan)
    assert expected in text


def test_cabling_quotes_a_rack_with_a_comma() -> None:
    plan = plan_of("render/sonic")
    device = plan.fabric.leaves[0].name if plan.fabric else ""
    plan = dataclasses.replace(plan, positions=((device, "row 1, rack 2", 7),))
    text = render_cabling(plan)
    assert text == reference.cabling(plan)
    assert '"row 1, rack 2",7' in text


@pytest.mark.parametrize("case", ["lab", "render/eos-2plane", "render/cumulus-3tier"])
def test_cabling_with_every_device_placed_is_what_csv_writes(case: str) -> None:
    plan = plan_of(case)
    devices = sorted({end for cable in reference.cables(plan) for end in (cable.a_device, cable.b_device)})
    plan = dataclasses.replace(plan, positions=tuple((device, f"r{k % 7}", k % 42 + 1) for k, device in enumerate(devices)))
    text = render_cabling(plan)
    assert text == reference.cabling(plan)
    assert ",r" in text


@pytest.mark.parametrize("case", [c for c in CASES if plan_of(c).fabric is not None])
def test_structure_is_the_one_cable_at_a_time_structure(case: str) -> None:
    plan = plan_of(case)
    for fabric, links in _planes(plan):
        assert plane_structure(plan, fabric, links) == reference.plane_structure(plan, fabric, links)


@pytest.mark.parametrize("case", ["lab", "render/cumulus-3tier", "render/eos-2plane"])
def test_structure_does_not_hang_on_cable_order_or_regularity(case: str) -> None:
    """Shuffled cables, one leaf-spine cable missing (its spine leaves the group), one parallel host cable more."""
    plan = plan_of(case)
    assert plan.fabric is not None
    links = list(plan.fabric.links)
    fabric_cable = next(x for x in links if x.kind == "fabric")
    host_cable = next(x for x in links if x.kind == "host")
    links.remove(fabric_cable)
    links.append(dataclasses.replace(host_cable, a_port=host_cable.a_port + "x", b_port=host_cable.b_port + "x"))
    random.Random(36).shuffle(links)
    mine, theirs = plane_structure(plan, plan.fabric, links), reference.plane_structure(plan, plan.fabric, links)
    assert mine == theirs
    assert len(mine.spine_groups) > 1


@pytest.mark.parametrize("enabled", [True, False])
def test_plan_files_pause_the_collector_and_leave_it_as_they_found_it(enabled: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []

    def spy(plan: ClusterPlan) -> str:
        seen.append(gc.isenabled())
        return render_cabling(plan)

    monkeypatch.setattr(render_package, "render_cabling", spy)
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        render_plan_files(plan_of("lab"))
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
    assert seen == [False]


def test_a_node_box_is_built_once_not_once_per_host_cable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The structure's Python-level work grows with boxes, not host cables (the old code built a box per leaf-node pair)."""
    built: list[str] = []
    real = topology_structure.NodeBox

    def counted(group: str) -> topology_structure.NodeBox:
        built.append(group)
        return real(group)

    monkeypatch.setattr(topology_structure, "NodeBox", counted)
    plan = plan_of("render/cumulus-3tier")
    assert plan.fabric is not None
    structure = plane_structure(plan, plan.fabric, list(plan.fabric.links))
    boxes = [box for column in structure.columns for box in column.boxes]
    assert len(built) == len(boxes) < sum(len(box.nodes) for box in boxes)
