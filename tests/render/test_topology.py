"""The topology diagram as a person sees it: rendered to PNG by a real SVG renderer (librsvg's rsvg-convert), it fits a
screen for 1 to 8 scalable units, names every switch in readable text, orders leaves by SU and rail, and stays small."""

from __future__ import annotations

import dataclasses
import re
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path

import pytest

from fabric.model.loader import parse_cluster
from fabric.plan import ClusterPlan, plan_cluster
from fabric.plan.compute.planes import plane_of
from fabric.plan.natural import natural_key
from fabric.render.diagrams.topology import topology_svgs
from tests.conftest import ROOT
from tests.render.conftest import CASES, plan_of

SVG = "{http://www.w3.org/2000/svg}"
SCREEN = (1920, 1080)


@cache
def eight_su_plan() -> ClusterPlan:
    """onprem-roce grown to 8 scalable units (256 DGX H100, 64 leaves): the largest size that must fit a screen."""
    text = (ROOT / "inventories" / "onprem-roce" / "cluster.yaml").read_text(encoding="utf-8")
    text = text.replace("{group: gpu, role: gpu, count: 64,", "{group: gpu, role: gpu, count: 256,")
    spec, _ = parse_cluster(text, "onprem-roce-8su.yaml")
    return plan_cluster(spec)


FAT_TREE_128 = """name: eos16x128
target: onprem
planes:
  compute: {transport: roce, cidr: 10.0.0.0/12, mtu: 9000, max_ports_per_node: 4}
  storage: {cidr: 10.16.0.0/16, mtu: 9000}
  inband: {cidr: 10.17.0.0/16, gateway: 10.17.0.1}
  oob: {cidr: 10.18.0.0/16, gateway: 10.18.0.1}
fabric:
  topology: fat-tree
  leaf: {model: 7060x5-64s, nos: eos}
  spine: {model: 7060x6-64pe, nos: eos}
  su_size: 8
  host_ports_per_leaf: 32
  uplinks_per_leaf: 16
  spines: 16
  oversubscription: "2:1"
  underlay: {loopback_pool: 10.255.0.0/16, p2p_pool: 10.254.0.0/16, leaf_asn_base: 4200000001}
nodes:
  - {group: gpu, role: gpu, count: 1024, hostname: "gpu{index:05d}", hardware: hgx-h100-4x400}
"""


@cache
def fat_tree_128_plan() -> ClusterPlan:
    """16 spines x 128 EOS leaves without scalable units (the benchmark's fabric): 8 columns of 16 leaves."""
    return plan_cluster(parse_cluster(FAT_TREE_128, "eos16x128.yaml")[0])


def png_size(svg: str, tmp_path: Path) -> tuple[int, int]:
    """Render with rsvg-convert (Debian librsvg2-bin, installed by ./dev) and read the PNG's IHDR width and height."""
    tool = shutil.which("rsvg-convert")
    assert tool, "rsvg-convert is missing: install librsvg2-bin (./dev setup does)"
    source, png = tmp_path / "diagram.svg", tmp_path / "diagram.png"
    source.write_text(svg, encoding="utf-8")
    subprocess.run([tool, str(source), "-o", str(png)], check=True, timeout=60)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def texts(svg: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(svg).iter(f"{SVG}text")]


@pytest.mark.parametrize("case", ["onprem-roce", "onprem-ib", "lab", "eight-su", "fat-tree-128"])
def test_diagram_renders_to_a_png_that_fits_a_screen(case: str, tmp_path: Path) -> None:
    special = {"eight-su": eight_su_plan, "fat-tree-128": fat_tree_128_plan}
    plan = special[case]() if case in special else plan_of(case)
    svg = topology_svgs(plan)["compute"]
    width, height = png_size(svg, tmp_path)
    assert 600 <= width <= SCREEN[0], (width, height)
    assert 300 <= height <= SCREEN[1], (width, height)


@pytest.mark.parametrize("case", [*CASES, "eight-su"])
def test_every_switch_name_is_text_in_the_diagram(case: str) -> None:
    plan = eight_su_plan() if case == "eight-su" else plan_of(case)
    assert plan.fabric is not None
    # a multi-plane fabric draws each plane on its own (compute-p1, compute-p2): every switch is in one of them
    labels = {t for name, svg in topology_svgs(plan).items() if name.startswith("compute") for t in texts(svg)}
    assert {s.name for s in plan.fabric.switches} <= labels


def test_leaves_run_by_scalable_unit_then_rail_in_natural_order() -> None:
    plan = eight_su_plan()
    assert plan.fabric is not None
    leaves = [t for t in texts(topology_svgs(plan)["compute"]) if t.startswith("leaf-")]
    assert leaves == sorted(leaves, key=natural_key)
    assert leaves[:2] == ["leaf-su01-r1", "leaf-su01-r2"]
    assert len(leaves) == 64


def test_legend_carries_speeds_oversubscription_bisection_roce_and_mtu_per_plane() -> None:
    legend = " / ".join(texts(topology_svgs(plan_of("onprem-roce"))["compute"]))
    assert "512 × 400G node ↔ leaf, 512 × 400G leaf ↔ spine" in legend
    assert "oversubscription 1:1; bisection 102.4 Tb/s" in legend
    assert "RoCE: DSCP 26 (ToS 106) → priority 3 → TC 3, PFC on [3]" in legend
    assert "MTU compute 9000, storage 9000, inband 1500, oob 1500" in legend
    assert [f"r{i}" for i in range(1, 9)] == [t for t in legend.split(" / ") if re.fullmatch(r"r\d", t)]


def test_parallel_cables_are_drawn_once_per_bundle() -> None:
    """1,024 cables in onprem-roce; the picture draws lines per switch and bundle, never per cable."""
    plan = plan_of("onprem-roce")
    assert plan.fabric is not None
    svg = topology_svgs(plan)["compute"]
    lines = svg.count("<polyline")
    assert len(plan.fabric.links) == 1024
    assert lines <= 3 * len(plan.fabric.switches) + 4, lines
    assert "each leaf to each spine: 8 × 400G" in svg


def test_diagram_is_byte_identical_across_runs() -> None:
    assert topology_svgs(eight_su_plan()) == topology_svgs(eight_su_plan())


def test_spines_reaching_different_leaves_form_groups_each_with_its_bus(tmp_path: Path) -> None:
    """Spine planes (rail r's leaves reach only spine ((r-1) mod 4)+1): four spine groups, four buses, still one picture."""
    plan = plan_of("onprem-roce")
    assert plan.fabric is not None
    keep = [x for x in plan.fabric.links if x.kind == "host" or int(x.b_device[-2:]) == (int(x.a_device[-1]) - 1) % 4 + 1]
    planes = dataclasses.replace(plan, fabric=dataclasses.replace(plan.fabric, links=tuple(keep)))
    svg = topology_svgs(planes)["compute"]
    labels = texts(svg)
    assert [t.split(":")[0] for t in labels if t.startswith("spine group")] == [f"spine group {g}" for g in range(1, 5)]
    assert {s.name for s in plan.fabric.switches} <= set(labels)
    width, height = png_size(svg, tmp_path)
    assert width <= SCREEN[0]
    assert height <= SCREEN[1]


def test_diagram_grows_with_switches_not_cables() -> None:
    """Four times the scalable units (and cables): about four times the drawing, the same per leaf."""
    small, large = plan_of("onprem-roce"), eight_su_plan()
    assert small.fabric is not None
    assert large.fabric is not None
    per_leaf = [len(topology_svgs(p)["compute"]) / len(p.fabric.leaves) for p in (small, large) if p.fabric is not None]
    assert len(large.fabric.links) == 4 * len(small.fabric.links)
    assert 0.5 < per_leaf[1] / per_leaf[0] < 1.5, per_leaf


@pytest.mark.parametrize("case", ["onprem-roce", "onprem-ib", "eight-su"])
def test_oob_diagram_names_every_management_switch_counts_its_cables_and_fits_a_screen(case: str, tmp_path: Path) -> None:
    plan = eight_su_plan() if case == "eight-su" else plan_of(case)
    assert plan.oob is not None
    svg = topology_svgs(plan)["oob"]
    labels = texts(svg)
    assert {s.name for s in plan.oob.switches} | {plan.oob.core} <= set(labels)
    bmc = sum(1 for x in plan.oob.links if x.kind == "bmc")
    uplinks = sum(1 for x in plan.oob.links if x.kind == "uplink")
    legend = " / ".join(labels)
    assert f"{bmc} × 1G BMC" in legend
    assert f"{uplinks} × 100G uplink" in legend
    assert "MTU 1500" in legend
    width, height = png_size(svg, tmp_path)
    assert 600 <= width <= SCREEN[0], (width, height)
    assert 200 <= height <= SCREEN[1], (width, height)


def test_every_plane_of_every_case_has_its_own_diagram() -> None:
    """Generic over planes: one SVG per plane that has switches (fabric links' planes, and the OOB network)."""
    for case in CASES:
        plan = plan_of(case)
        planes = {x.plane for x in plan.fabric.links} if plan.fabric else set()
        fabric_planes = {f"compute-p{k}" for s in plan.fabric.leaves if (k := plane_of(s.name))} if plan.fabric else set()
        planes = (planes - {"compute"}) | fabric_planes if fabric_planes else planes
        planes |= {"oob"} if plan.oob is not None and plan.oob.switches else set()
        planes |= {net.name for net in plan.storage if net.switches}
        assert set(topology_svgs(plan)) == planes, case


@pytest.mark.parametrize("case", ["onprem-roce", "onprem-ib", "eight-su"])
def test_storage_diagram_names_every_switch_counts_its_cables_and_fits_a_screen(case: str, tmp_path: Path) -> None:
    plan = eight_su_plan() if case == "eight-su" else plan_of(case)
    net = next(n for n in plan.storage if n.name == "storage")
    svg = topology_svgs(plan)["storage"]
    labels = texts(svg)
    assert {s.name for s in net.switches} <= set(labels)
    legend = " / ".join(labels)
    storage = sum(1 for x in net.links if x.kind == "storage")
    uplinks = sum(1 for x in net.links if x.kind == "uplink")
    assert f"{storage} × 200G storage" in legend
    assert f"{uplinks} × 200G uplink" in legend
    assert f"oversubscription {net.oversubscription}" in legend
    assert all(f"MTU {seg.mtu}" in legend for seg in net.segments)
    gpu = sum(int(t.split(": ")[1].split()[0]) for t in labels if t.startswith("gpu: "))
    assert gpu == sum(1 for n in plan.nodes if n.group == "gpu"), "every GPU node sits under exactly one leaf pair"
    width, height = png_size(svg, tmp_path)
    assert 600 <= width <= SCREEN[0], (width, height)
    assert 250 <= height <= SCREEN[1], (width, height)


@pytest.mark.parametrize("nos", ["eos", "sonic"])
def test_three_tiers_draw_super_spines_above_the_pods_and_only_leaves_as_leaves(nos: str, tmp_path: Path) -> None:
    plan = plan_of(f"render/{nos}-3tier")
    assert plan.fabric is not None
    svg = topology_svgs(plan)["compute"]
    labels = texts(svg)
    tiers = {s.name: s.tier for s in plan.fabric.switches}
    assert set(tiers) <= set(labels)
    assert [t.split(":")[0] for t in labels if t.startswith(("super-spines", "spine group"))] == ["super-spines", "spine group 1", "spine group 2"]
    leaf_boxes = re.findall(r'fill="#e3f2d9"[^>]*/><text[^>]*>([^<]+)</text>', svg)
    assert sorted(leaf_boxes) == sorted(n for n, t in tiers.items() if t == "leaf")
    supers = [x for x in plan.fabric.links if tiers[x.a_device] == "spine"]
    assert f"{len(supers)} × {supers[0].speed_gbps}G spine ↔ super-spine" in " / ".join(labels)
    width, height = png_size(svg, tmp_path)
    assert width <= SCREEN[0]
    assert height <= SCREEN[1]


def test_a_multi_plane_fabric_draws_each_plane_alone_with_its_own_figures(tmp_path: Path) -> None:
    plan = plan_of("two-plane")
    svgs = topology_svgs(plan)
    assert "compute" not in svgs
    assert sorted(n for n in svgs if n.startswith("compute")) == ["compute-p1", "compute-p2"]
    for k in (1, 2):
        shown = texts(svgs[f"compute-p{k}"])
        names = {t for t in shown if t.startswith(("p1-", "p2-"))}
        assert names == {f"p{k}-spine01", f"p{k}-spine02", *(f"p{k}-leaf-su01-r{r}" for r in range(1, 9))}
        legend = " / ".join(shown)
        assert f"two-plane: compute plane p{k}, rail-optimized ethernet" in legend
        assert "leaf tier: 8 × sn5600 (sonic)" in legend  # per plane, not the 16 of both
        assert "fabric: bisection 12.8 Tb/s" in legend  # the plane's cut, half the fabric's 25.6
        width, height = png_size(svgs[f"compute-p{k}"], tmp_path)
        assert 600 <= width <= SCREEN[0], (width, height)


def test_the_diagrams_escape_is_html_escape() -> None:
    """``fabric.render.diagrams._svg.escape`` (no ``html`` import) writes what ``html.escape`` writes, hostile text included."""
    import html
    import random

    from fabric.render.diagrams._svg import escape

    pick = random.Random(36)
    alphabet = "&<>\"'ab;#x27amp \n\u00e9\u2014"
    for _ in range(2000):
        text = "".join(pick.choice(alphabet) for _ in range(pick.randrange(0, 24)))
        assert escape(text) == html.escape(text)
