"""Juniper's Apstra AI back-end designs, template by template: planned on Arista EOS switches where a fixed model has the
ports, checked against their own arithmetic everywhere, and refused by the planner, with the reason, where the spine is a
chassis.

Source: Juniper/terraform-apstra-examples, ``ai-cluster-designs/`` at commit 28d884d38a64fe8388b3976eed033a5a6a554490
(https://github.com/Juniper/terraform-apstra-examples/tree/28d884d38a64fe8388b3976eed033a5a6a554490/ai-cluster-designs):
``ai_backend_templates.tf`` ("AI Compute "Backend" fabric designs for rail-optimzed racks of various sizes", "64/128/256
server fabrics have 512/1024/2048 GPUs"): eight ``apstra_template_rack_based`` with a spine count, a spine logical device
and a rack type with its count (``TEMPLATES`` below, as printed); ``ai_backend_racks.tf`` ("rail-optimzed for NVIDIA
A100/H100 GPU DGX and HGX-based servers of 8 GPUs and 8 ports each ... 200GE access for A100s and 400GE for H100s"):
every rack type has leaves Leaf1 to Leaf8, server link N to Leaf N, a server count and a ``spine_link_count`` per leaf
(``RACK_TYPES``); ``logical_device.tf``: the port panels (``LEAVES``, ``SPINES``). The definitions are
``tests/data/plan/apstra-ai-backend/cluster.yaml`` (128 DGX-H100) and, rendered, ``tests/data/render/eos-apstra-ai``
(64 DGX-H100).

Why a Juniper design on Arista. No Arista-published AI back-end design with switch and cable counts was found in the
stored corpus (searched: arista.com product and solution pages, Arista's "AI Network Fabric Deployment Guide", whose
stored copy has no numbers, and the aristanetworks/avd examples, where no AI back-end inventory turned up); Juniper's
is the one found with every count stated. Its templates are Apstra logical devices: port panels with a count and a speed, no vendor (the file's
comments give Juniper examples: QFX5220-32C, QFX5230-64C, PTX10008/10016 with 36 x 400GE cards). Apstra deploys the leaf
and spine roles on EOS as on Junos ("HPE Networking Apstra Data Center Director Feature Matrix", Apstra 6.2, Fabric
Roles: leaf and "Spine or Superspine" Yes for EOS,
https://www.juniper.net/documentation/us/en/software/apstra6.2/apstra-user-guide/topics/ref/feature-matrix-600.html),
and Junos is not rendered here, so each logical device is realised on the catalog's Arista model with at least its ports
at its speed: 7060X5-64S (64 x 400G) for the 16+16 / 16+32 leaves and the 32- and 64-port spines, 7060X6-64PE (64 x 800G
cages, 128 x 400G) for a spine that needs 128 ports (port counts: fabric/catalog/data/switches/README.md [netbox-7060dx5],
[netbox-7060x6]). The counts the test asserts (servers, GPUs, leaves, spines, links,
oversubscription) follow from the logical devices alone, whichever vendor fills them.

Readings. A DGX-A100 is not in the node catalog: its group describes the logical device "AI-A100-Server 8x200G" (8 x
200G; the port names ``gpu0_eth`` to ``gpu7_eth`` are the Juniper JVD's, "Table 10. GPU Servers to Leaf Nodes
Connections", jvd-ai-dc-evpn-multitenancy) and an in-band port, which is ours (the planner needs one). A "link" here is
one port-to-port cable: the templates count links per leaf and spine (``spine_link_count``), so links and cables agree.

Where the templates contradict their own arithmetic. "AI Cluster 64 DGX-A100 (512 GPUs)" has 8 spines: each leaf
("AI-Leaf 16x400+32x200", 32 x 200G down, 16 x 400G fabric ports) takes 8 of its 16 fabric ports, 3,200G up for 6,400G
down, 2:1, while every other template is 1:1. The same file's commit 531fef1 ("Fix spine count", 2023-10-16) raised "AI
Cluster 64 DGX-H100" from 8 to 16 spines, which took that template from 2:1 to 1:1, and left this one. The repository
states no ratio; Juniper's JVD asks for 1:1 ("maintain a 1:1 relation with bandwidth subscription", "Recommendations
Summary", https://www.juniper.net/documentation/us/en/software/jvd/jvd-ai-dc-qpp-bgp-dpf/recommendations_summary.html).
The test follows the arithmetic: 2:1, and the planner plans it as written.

What the planner refuses. Three templates put 256 to 320 leaf links on each spine ("AI-Spine 288x400" / "576x400": a
PTX10008 or PTX10016 chassis full of 36 x 400GE cards). Arista's analogue, the 7800R4, is a modular chassis and refused
by the model (``fabric/catalog/switch_refused.py``); the largest fixed model, the 7060X6-64PE, has 128 x 400G, and the
planner refuses the template's spine count on it with the count it would need. Those rows are checked by arithmetic.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, NamedTuple

import pytest
import yaml
from pydantic import ValidationError

from fabric.errors import InputError
from fabric.model import ClusterSpec
from fabric.plan import plan_cluster
from fabric.plan.types import FabricPlan
from tests.conftest import DATA
from tests.render.conftest import unsampled_switches

APSTRA_AI = DATA / "plan" / "apstra-ai-backend" / "cluster.yaml"


class RackType(NamedTuple):
    """An ``apstra_rack_type`` of ai_backend_racks.tf: 8 leaves (Leaf1-Leaf8), ``servers`` of 8 links at ``gbps``."""

    servers: int
    gbps: int
    leaf: str  # logical device of every leaf
    spine_links: int  # spine_link_count: links from each leaf to each spine


class Template(NamedTuple):
    """An ``apstra_template_rack_based`` of ai_backend_templates.tf, as printed."""

    name: str
    spines: int
    spine: str  # logical device
    rack_type: str
    racks: int


# logical_device.tf: leaf (fabric ports, access ports, access speed); spine ports (all 400G)
LEAVES = {"AI-Leaf 16+16x400": (16, 16, 400), "AI-Leaf 16x400+32x200": (16, 32, 200)}
SPINES = {"AI-Spine 32x400": 32, "AI-Spine 64x400": 64, "AI-Spine 288x400": 288, "AI-Spine 576x400": 576}

RACK_TYPES = {
    "AI 16xH100": RackType(16, 400, "AI-Leaf 16+16x400", 1),
    "AI 16xH100-2": RackType(16, 400, "AI-Leaf 16+16x400", 2),  # AI_16xH100_2_spine_uplinks
    "AI 32xA100": RackType(32, 200, "AI-Leaf 16x400+32x200", 1),
    "AI 32xA100-2": RackType(32, 200, "AI-Leaf 16x400+32x200", 2),  # AI_32xA100_2_spine_uplinks
}

TEMPLATES = [
    Template("AI Cluster 64 DGX-A100 (512 GPUs)", 8, "AI-Spine 32x400", "AI 32xA100", 2),
    Template("AI Cluster 64 DGX-H100 (512 GPUs)", 16, "AI-Spine 32x400", "AI 16xH100", 4),
    Template("AI Cluster 128 DGX-A100 (1024 GPUs)", 16, "AI-Spine 32x400", "AI 32xA100", 4),
    Template("AI Cluster 128 DGX-H100 (1024 GPUs)", 16, "AI-Spine 64x400", "AI 16xH100", 8),
    Template("AI Cluster 256 DGX-A100 (2048 GPUs)", 8, "AI-Spine 288x400", "AI 32xA100-2", 8),
    Template("AI Cluster 256 DGX-H100 (2048 GPUs)", 8, "AI-Spine 288x400", "AI 16xH100-2", 16),
    Template("AI Cluster 640 DGX-H100 (5120 GPUs)", 16, "AI-Spine 576x400", "AI 16xH100", 40),
    Template("AI Cluster 1152 DGX-A100 (9216 GPUs)", 16, "AI-Spine 288x400", "AI 32xA100", 36),
]

# The catalog's Arista models and their 400G ports (7060X5-64S: 64 native; 7060X6-64PE: 64 cages x 2 x 400G)
ARISTA_400G = {"7060x5-64s": 64, "7060x6-64pe": 128}


class Expected(NamedTuple):
    """What a template's own numbers give: the name's counts, then the fabric."""

    servers: int
    gpus: int
    leaves: int
    uplinks: int  # per leaf
    node_leaf: int
    leaf_spine: int
    spine_ports: int  # used on each spine
    ratio: str


def expected(t: Template) -> Expected:
    rack = RACK_TYPES[t.rack_type]
    servers = t.racks * rack.servers
    leaves = 8 * t.racks  # Leaf1..Leaf8 per rack
    uplinks = t.spines * rack.spine_links
    down, up = rack.servers * rack.gbps, uplinks * 400
    ratio = f"{down // up}:1" if down % up == 0 else f"1:{up // down}"
    return Expected(servers, 8 * servers, leaves, uplinks, 8 * servers, leaves * uplinks, leaves * rack.spine_links, ratio)


def spine_model(t: Template) -> str | None:
    """The smallest catalog Arista model with the ports the template puts on each spine; None where none has."""
    need = expected(t).spine_ports
    fits = [m for m, ports in sorted(ARISTA_400G.items(), key=lambda kv: kv[1]) if ports >= need]
    return fits[0] if fits else None


def definition(t: Template, spine: str) -> ClusterSpec:
    """The template as a definition: the 128 DGX-H100 file with the template's racks, spines and servers."""
    data: dict[str, Any] = yaml.safe_load(APSTRA_AI.read_text(encoding="utf-8"))
    rack, exp = RACK_TYPES[t.rack_type], expected(t)
    data["fabric"].update(su_size=rack.servers, spines=t.spines, uplinks_per_leaf=exp.uplinks, oversubscription=exp.ratio)
    data["fabric"]["spine"]["model"] = spine
    group = data["nodes"][0]
    group["count"] = exp.servers
    if rack.gbps == 200:  # "AI-A100-Server 8x200G": 8 x 200G, 8 GPUs (module docstring); uplinks stay 400G
        del group["hardware"]
        group.update(gpus=8, hostname="a100-{index:04d}")
        group["ports"] = {
            "compute": {"count": 8, "speed_gbps": 200, "names": [f"gpu{n}_eth" for n in range(8)]},
            "inband": {"count": 1, "speed_gbps": 100, "names": ["eno1"]},
        }
        data["fabric"]["uplink_speed_gbps"] = 400
    return ClusterSpec.model_validate(data)


def links(fabric: FabricPlan) -> Counter[tuple[str, int]]:
    """Links by the tiers they join ("node-leaf", "leaf-spine") and speed."""
    tier = {s.name: s.tier for s in fabric.switches}
    ends = {"leaf": "node-leaf", "leaf+spine": "leaf-spine"}
    return Counter((ends["+".join(sorted(tier[d] for d in (k.a_device, k.b_device) if d in tier))], k.speed_gbps) for k in fabric.links)


PLANNED = [t for t in TEMPLATES if spine_model(t) is not None]
REFUSED = [t for t in TEMPLATES if spine_model(t) is None]


def test_every_template_follows_its_own_arithmetic_but_the_64_a100_ratio() -> None:
    for t in TEMPLATES:
        rack, exp = RACK_TYPES[t.rack_type], expected(t)
        fabric_ports, access_ports, access_gbps = LEAVES[rack.leaf]
        # The name's servers and GPUs: racks x servers, 8 GPUs each.
        assert f"AI Cluster {exp.servers} " in t.name
        assert f"({exp.gpus} GPUs)" in t.name
        assert (rack.servers, rack.gbps) == (access_ports, access_gbps)  # every access port takes one server's link N
        assert exp.uplinks <= fabric_ports  # the leaf has the fabric ports
        assert exp.spine_ports <= SPINES[t.spine]  # the spine has the ports
        assert exp.ratio == ("2:1" if t.name.startswith("AI Cluster 64 DGX-A100") else "1:1")
    # The 64 DGX-A100 leaf uses 8 of its 16 fabric ports; the other 200G templates use all 16 (module docstring).
    assert [expected(t).uplinks for t in TEMPLATES if RACK_TYPES[t.rack_type].gbps == 200] == [8, 16, 16, 16]


@pytest.mark.parametrize("template", PLANNED, ids=[t.name.split(" (")[0] for t in PLANNED])
def test_the_planner_builds_the_template_on_arista(template: Template) -> None:
    exp, rack = expected(template), RACK_TYPES[template.rack_type]
    spine = spine_model(template)
    assert spine is not None
    plan = plan_cluster(definition(template, spine))
    fabric = plan.fabric
    assert fabric is not None
    assert (len(plan.nodes), sum(n.gpus for n in plan.nodes)) == (exp.servers, exp.gpus)
    assert (len(fabric.leaves), len(fabric.spines), len(fabric.super_spines)) == (exp.leaves, template.spines, 0)
    assert links(fabric) == {("node-leaf", rack.gbps): exp.node_leaf, ("leaf-spine", 400): exp.leaf_spine}
    # spine_link_count: every leaf reaches every spine with that many links
    pairs = Counter(frozenset((k.a_device, k.b_device)) for k in fabric.links if k.kind == "fabric")
    assert set(pairs.values()) == {rack.spine_links}
    assert len(pairs) == exp.leaves * template.spines
    leaf, spine_tier = fabric.tiers
    assert leaf.oversubscription == exp.ratio
    assert (leaf.downlink_gbps, leaf.uplink_gbps) == (rack.servers * rack.gbps, exp.uplinks * 400)
    assert spine_tier.ports_used_per_switch == exp.spine_ports
    assert {s.nos for s in fabric.switches} == {"eos"}


def test_rail_n_of_every_server_goes_to_leaf_n_of_its_rack() -> None:
    """ai_backend_racks.tf: link1 to Leaf1 ... link8 to Leaf8, in every rack group."""
    plan = plan_cluster(definition(TEMPLATES[3], "7060x5-64s"))  # 128 DGX-H100, 8 racks of 16
    assert plan.fabric is not None
    seen = {(k.b_device, k.b_port): k.a_device for k in plan.fabric.links if k.kind == "host"}
    names = ["enp24s0np0", "enp64s0np0", "enp79s0np0", "enp94s0np0", "enp154s0np0", "enp192s0np0", "enp206s0np0", "enp220s0np0"]
    for node, rack in (("dgx0001", 1), ("dgx0016", 1), ("dgx0017", 2), ("dgx0128", 8)):
        assert [seen[(node, port)] for port in names] == [f"leaf-su{rack:02d}-r{n}" for n in range(1, 9)]


@pytest.mark.parametrize("template", REFUSED, ids=[t.name.split(" (")[0] for t in REFUSED])
def test_a_chassis_spine_template_is_refused_with_the_reason(template: Template) -> None:
    exp = expected(template)
    assert exp.spine_ports > max(ARISTA_400G.values())  # 256, 320 or 288 ports at 400G per spine
    # The Arista chassis is refused by the model: no plan is built.
    with pytest.raises(ValidationError) as modular:
        definition(template, "7800r4")
    assert "switch model '7800r4' is not supported: the Arista 7800R4 is a modular chassis" in str(modular.value)
    # The largest fixed model is refused at the template's spine count, with the count it would need.
    with pytest.raises(InputError) as short:
        plan_cluster(definition(template, "7060x6-64pe"))
    need = -(-exp.leaves * exp.uplinks // 128)
    wanted = f"{template.spines} spines of 128 ports cannot take {exp.leaves * exp.uplinks} leaf uplinks (they need at least {need})"
    assert [e.path for e in short.value.errors] == [("fabric", "spines")]
    assert wanted in str(short.value)


def test_the_render_case_is_the_64_h100_template_and_its_vendor_checks_sample_it() -> None:
    """tests/data/render/eos-apstra-ai is "AI Cluster 64 DGX-H100" (same counts); pyavd and the arista.eos parsers read
    the first two switches of each tier (tests/render/conftest.py SAMPLE_ABOVE), a small case every switch."""
    from tests.render.conftest import plan_of

    exp = expected(TEMPLATES[1])
    fabric = plan_of("render/eos-apstra-ai").fabric
    assert fabric is not None
    assert (len(fabric.leaves), len(fabric.spines)) == (exp.leaves, TEMPLATES[1].spines)
    assert links(fabric) == {("node-leaf", 400): exp.node_leaf, ("leaf-spine", 400): exp.leaf_spine}
    checked = {s.name for s in fabric.switches} - unsampled_switches("render/eos-apstra-ai")
    assert checked == {"leaf-su01-r1", "leaf-su01-r2", "spine01", "spine02"}
    assert unsampled_switches("render/eos") == frozenset()
