"""Golden configs: every example and every NOS; any change in rendered text shows up as a reviewable diff."""

from __future__ import annotations

import pytest

from fabric.render import render_configs
from tests.conftest import DATA, check_golden
from tests.render.conftest import CASES, files_of, plan_of

GOLDEN_SWITCHES_PER_TIER = 2  # large examples: the first switches of each tier stand for the rest


def golden_files(case: str) -> dict[str, str]:
    plan = plan_of(case)
    assert plan.fabric is not None
    tiers = (plan.fabric.super_spines, plan.fabric.spines, plan.fabric.leaves)
    keep = {s.name for tier in tiers for s in tier[:GOLDEN_SWITCHES_PER_TIER]}
    keep |= {s.name for s in (plan.oob.switches if plan.oob else ())[:GOLDEN_SWITCHES_PER_TIER]}  # the OOB plane's, per NOS
    if case.startswith("render/"):  # the storage / in-band pair per NOS (the examples keep theirs in golden/storage)
        keep |= {s.name for net in plan.storage for s in net.switches[:GOLDEN_SWITCHES_PER_TIER]}

    def wanted(path: str) -> bool:
        parts = path.split("/")
        if parts[0] != "switches":
            return path != "plan.json"  # plan.json has its own golden test
        return parts[1] in keep

    return {path: text for path, text in files_of(case).items() if wanted(path)}


@pytest.mark.parametrize("case", CASES)
def test_rendered_files_match_golden(case: str, update_golden: bool) -> None:
    files = golden_files(case)
    assert any(p.startswith("switches/") for p in files)
    for path, text in files.items():
        check_golden(DATA / case / "golden" / "render" / path, text, update_golden)


@pytest.mark.parametrize("case", CASES)
def test_render_is_byte_identical_across_runs(case: str) -> None:
    assert render_configs(plan_of(case)) == files_of(case)


@pytest.mark.parametrize("case", CASES)
def test_every_switch_gets_its_nos_files(case: str) -> None:
    plan = plan_of(case)
    assert plan.fabric is not None
    expected = {"frr": {"frr.conf"}, "sonic": {"config_db.json", "frr.conf"}, "eos": {"startup-config"}, "nxos": {"running-config"}}
    expected |= {"cumulus": {"nvue.sh"}, "mlnx-os": {"running-config"}}
    files = files_of(case)
    for switch in plan.fabric.switches:
        got = {p.split("/")[2] for p in files if p.startswith(f"switches/{switch.name}/")}
        shared = case == "render/frr-shared" and switch.tier == "spine"  # its Linux VRF devices (fabric.render.nos.frr)
        assert got == expected[switch.nos] | ({"vrfs.ip"} if shared else set()), switch.name
