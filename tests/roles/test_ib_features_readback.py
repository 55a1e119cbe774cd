"""SHARP and adaptive routing read back from ibdiagnet: the outputs NVIDIA publishes pass, each way a fabric can
differ from the definition is named, and hostile text is reported, never trusted or crashed on."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugins.filter.gpufabric_ib_features import ib_feature_problems, ibdiagnet_summary, opensm_version

DATA = Path(__file__).parent / "data" / "ibdiagnet"
AR = (DATA / "ar-3-switches.txt").read_text(encoding="utf-8")
SHARP = (DATA / "sharp-4-switches.txt").read_text(encoding="utf-8")


def test_the_published_outputs_read_as_both_features_on() -> None:
    ar, sharp = ibdiagnet_summary(AR), ibdiagnet_summary(SHARP)
    assert (ar["switches"], ar["ar_switches"], ar["aggregation_nodes"], ar["stages"]["Routing"]) == (3, 3, 3, {"warnings": 0, "errors": 0})
    assert (sharp["switches"], sharp["aggregation_nodes"], sharp["ll_trees"], sharp["sat_trees"]) == (4, 4, 2, 0)
    assert sharp["sharp_trees_checked"] is True
    assert sharp["stages"]["SHARP"] == {"warnings": 0, "errors": 0}
    assert sharp["stages"]["Speed / Width checks"] == {"warnings": 0, "errors": 0}  # a stage name with spaces and a slash
    assert ib_feature_problems(AR, adaptive_routing=True, switches=3) == []
    assert ib_feature_problems(SHARP, sharp=True, switches=4) == []


@pytest.mark.parametrize(
    ("text", "options", "expected"),
    [
        # AR off on one switch of three
        (AR.replace("enabled on 3", "enabled on 2"), {"adaptive_routing": True, "switches": 3}, "adaptive routing is enabled on 2 of 3"),
        # the plan has more switches than the fabric shows AR on (a switch missing from the fabric or AR-less)
        (AR, {"adaptive_routing": True, "switches": 4}, "adaptive routing is enabled on 3 of 4"),
        # no AR line at all: AR off everywhere
        (AR.replace("Adaptive Routing is enabled on 3 switches", ""), {"adaptive_routing": True}, "enabled on 0 of 3"),
        # routing stage errors (credit loops, bad AR LFTs)
        (AR.replace("-I- Routing                   0          0", "-I- Routing 0 5"), {"adaptive_routing": True}, "Routing stage reports 5 error(s)"),
        # SHARP: a switch that is no aggregation node (SHARP disabled on it: sharp_enabled not 2, or device_configuration)
        (
            SHARP.replace("IB Aggregation Nodes    : 4", "IB Aggregation Nodes    : 3"),
            {"sharp": True},
            "3 of 4 InfiniBand switches are SHARP aggregation nodes",
        ),
        # SHARP: no trees (sharp_am not running)
        (SHARP.replace("Number of LL aggregation trees: 2", "Number of LL aggregation trees: 0"), {"sharp": True}, "has built no SHARP trees"),
        (SHARP.replace("-I- SHARP check trees finished successfully", ""), {"sharp": True}, "'SHARP check trees finished successfully' missing"),
        (SHARP.replace("-I- SHARP 0 0", "-I- SHARP 2 7"), {"sharp": True}, "SHARP stage reports 7 error(s)"),
        # the AR run asked about SHARP: its output has no trees
        (AR, {"sharp": True}, "has built no SHARP trees"),
        # ibdiagnet failed
        (AR, {"adaptive_routing": True, "rc": 1}, "ibdiagnet exited 1"),
    ],
)
def test_each_difference_from_the_definition_is_named(text: str, options: dict[str, object], expected: str) -> None:
    problems = ib_feature_problems(text, **options)  # type: ignore[arg-type]
    assert any(expected in p for p in problems), problems


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, "no ibdiagnet output (got NoneType)"),
        (b"IB Switches : 3", "no ibdiagnet output (got bytes)"),
        ("x" * 4_000_001, "is not an ibdiagnet screen output"),
        # the same count twice, different: a spliced or tampered output is not trusted
        (AR + "\nIB Switches : 300\n", "switches is reported as both 3 and 300"),
        (AR + "\n-I- Routing 0 0 \n-I- Routing 1 1\n", "stage Routing is reported twice"),
        ("", "no 'IB Switches' count"),
        ("IB Switches : 12345678\nAdaptive Routing is enabled on 12345678 switches\n", "no 'IB Switches' count"),  # > 7 digits: not read
        ("IB Switches : -3\nAdaptive Routing is enabled on -3 switches\n", "no 'IB Switches' count"),
        ("IB Switches : 3\u200b\nAdaptive Routing is enabled on 3 switches\n", "no 'IB Switches' count"),  # a zero-width space
        ("IB Switches : 3\x00\nAdaptive Routing is enabled on 3 switches\n", "no 'IB Switches' count"),
    ],
)
def test_hostile_output_is_reported_not_trusted(text: object, expected: str) -> None:
    problems = ib_feature_problems(text, adaptive_routing=True)
    assert problems, "hostile text passed as AR on"
    assert any(expected in p for p in problems), problems


def test_a_huge_output_of_repeated_lines_reads_quickly_and_once() -> None:
    text = AR + "Adaptive Routing is enabled on 3 switches\n" * 50_000
    assert ib_feature_problems(text, adaptive_routing=True, switches=3) == []


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("-------------------------------------------------\nOpenSM 3.3.23\n", "3.3"),  # Debian/Ubuntu opensm 3.3.23
        ("OpenSM 5.20.0\n", "5.20"),
        ("OpenSM v5.9.1\n", "5.9"),
        ("opensm: command not found", ""),
        (None, ""),
        ("OpenSM 99999.1", ""),
    ],
)
def test_opensm_version(text: object, version: str) -> None:
    assert opensm_version(text) == version
