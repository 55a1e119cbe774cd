"""SHARP and adaptive routing in the definition: the example carries both cleanly, and every way a fabric cannot carry
them is refused with its reason (the SM, the routing engine, the switches, where the aggregation manager runs, rails)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.catalog import ib_features
from fabric.model import load_cluster
from fabric.model.rules import check_spec
from tests.conftest import ROOT

EXAMPLE = ROOT / "inventories" / "onprem-ib-sharp" / "cluster.yaml"


def _findings(tmp_path: Path, *edits: tuple[str, str]) -> list[tuple[str, str, str]]:
    text = EXAMPLE.read_text(encoding="utf-8")
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / "cluster.yaml"
    path.write_text(text, encoding="utf-8")
    return [(f.dotted_path, f.severity, f.message) for f in check_spec(load_cluster(path))]


def test_the_example_carries_sharp_and_adaptive_routing_cleanly(tmp_path: Path) -> None:
    assert _findings(tmp_path) == []
    spec = load_cluster(EXAMPLE)
    assert spec.infiniband is not None
    assert (spec.infiniband.sharp, spec.infiniband.adaptive_routing, spec.infiniband.subnet_manager.routing_engine) == (True, True, "ar_updn")


@pytest.mark.parametrize(
    ("edits", "path", "message"),
    [
        (
            [
                ("kind: opensm", "kind: switch"),
                ("{host: sm01, priority: 15}", "{host: spine01, priority: 15}"),
                ("{host: sm02, priority: 14}", "{host: spine02, priority: 14}"),
            ],
            "infiniband.subnet_manager.kind",
            "the switch-hosted subnet manager (MLNX-OS) does not support SHARP or adaptive routing",
        ),
        (
            [("nvidia_opensm: true", "nvidia_opensm: false"), ("routing_engine: ar_updn", "routing_engine: updn")],
            "infiniband.subnet_manager.nvidia_opensm",
            "SHARP and adaptive routing need NVIDIA's OpenSM (SHARP_am needs OpenSM v5.20 or later",
        ),
        (
            [("routing_engine: ar_updn", "routing_engine: ftree")],
            "infiniband.subnet_manager.routing_engine",
            "adaptive routing is programmed by the ar_* routing engines; routing_engine ftree",
        ),
        (
            [("adaptive_routing: true", "adaptive_routing: false"), ("routing_engine: ar_updn", "routing_engine: minhop")],
            "infiniband.subnet_manager.routing_engine",
            "routing_engine minhop is not one",
        ),
        (
            [("{host: sm01, priority: 15}", "{host: gb01, priority: 15}")],
            "infiniband.subnet_manager.nodes[0].host",
            "'gb01' is a GPU node (group gpu); SHARP's aggregation manager runs beside the master SM",
        ),
        (
            [("topology: rail-optimized", "topology: fat-tree"), ("  su_size: 18\n", "")],
            "fabric.topology",
            "topology fat-tree mixes rails on a leaf",
        ),
        (
            [
                ("kind: opensm", "kind: switch"),
                ("sharp: true", "sharp: false"),
                ("adaptive_routing: true", "adaptive_routing: false"),
                ("{host: sm01, priority: 15}", "{host: spine01, priority: 15}"),
                ("{host: sm02, priority: 14}", "{host: spine02, priority: 14}"),
            ],
            "infiniband.subnet_manager.routing_engine",
            "ar_updn is an adaptive-routing engine and the switch-hosted SM (MLNX-OS) does not support adaptive routing",
        ),
    ],
)
def test_a_fabric_that_cannot_carry_them_is_refused_with_the_reason(tmp_path: Path, edits: list[tuple[str, str]], path: str, message: str) -> None:
    errors = [(p, m) for p, severity, m in _findings(tmp_path, *edits) if severity == "error"]
    assert any(p == path and message in m for p, m in errors), errors


def test_a_switch_model_without_a_cited_feature_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ib_features.IB_SWITCH_FEATURES, "qm9700", ib_features.IbSwitchFeatures("Quantum-2 (NDR)", 3, adaptive_routing=False))
    errors = [(p, m) for p, severity, m in _findings(tmp_path) if severity == "error"]
    assert (
        "fabric.leaf.model",
        "qm9700: no source in fabric/catalog/ib_features.py says its ASIC does adaptive routing; "
        "use a Quantum, Quantum-2 or Quantum-X800 model (qm8700, qm9700), or turn the feature off",
    ) in errors
    monkeypatch.delitem(ib_features.IB_SWITCH_FEATURES, "qm9700")
    errors = [(p, m) for p, severity, m in _findings(tmp_path) if severity == "error"]
    assert any(p == "fabric.spine.model" and "does SHARP or adaptive routing" in m for p, m in errors), errors


def test_with_both_off_no_feature_rule_speaks(tmp_path: Path) -> None:
    found = _findings(
        tmp_path,
        ("sharp: true", "sharp: false"),
        ("adaptive_routing: true", "adaptive_routing: false"),
        ("{host: sm01, priority: 15}", "{host: gb01, priority: 15}"),
    )
    assert [f for f in found if "SHARP" in f[2] or "adaptive" in f[2]] == []


def test_the_catalog_cites_a_sharp_generation_for_every_infiniband_model() -> None:
    from fabric.catalog.switches import SWITCH_MODELS

    infiniband = {name for name, m in SWITCH_MODELS.items() if m.link_layer == "infiniband"}
    assert set(ib_features.IB_SWITCH_FEATURES) == infiniband
    assert {n: f.sharp for n, f in ib_features.IB_SWITCH_FEATURES.items()} == {"qm8700": 2, "qm9700": 3, "q3400": 4}


def test_every_switch_of_the_example_keeps_its_onboard_sm_off() -> None:
    # SHARP Rev 3.3.0, "Setting up NVIDIA SHARP Environment": "Make sure onboard Subnet Manager is disabled in the managed
    # switches" (the aggregation manager runs beside the master SM on a host).
    from fabric.plan import plan_cluster
    from fabric.render import render_configs

    files = render_configs(plan_cluster(load_cluster(EXAMPLE)))
    configs = {path: text for path, text in files.items() if path.startswith("switches/")}
    assert len(configs) == 18
    assert all("\nno ib sm\n" in text for text in configs.values())
    assert not any("\nib sm\n" in text for text in configs.values())
