"""Derived ECN thresholds and PFC headroom (fabric.plan.buffers), pins kept, and what each NOS renders of them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabric.errors import InputError, PlanError
from fabric.lint.rules import lint_configs
from fabric.model import load_cluster
from fabric.model.qos import EcnSpec
from fabric.plan import plan_cluster
from fabric.plan.buffers import XOFF_FORMULA, ecn_thresholds, pfc_headroom, xoff_bytes
from fabric.plan.serialize import plan_to_data
from fabric.plan.types import ClusterPlan
from fabric.render import render_configs
from tests.conftest import DATA, ROOT


def _plan(case: str, tmp_path: Path, ecn: dict[str, Any] | None = None, **fabric: Any) -> ClusterPlan:
    """The render test ``case`` with ``roce.ecn`` and fabric fields replaced."""
    data = yaml.safe_load((DATA / "render" / case / "cluster.yaml").read_text())
    if ecn is not None:
        data.setdefault("roce", {})["ecn"] = ecn
    data["fabric"].update(fabric)
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(data))
    return plan_cluster(load_cluster(path))


def test_xoff_follows_nvidia_formula_by_hand() -> None:
    # (301 + 216*len/100) * speed + 272*MTU/100, speed in Gb/s floored at 40 (mlx5 calculate_xoff, integer steps)
    assert xoff_bytes(400, 5, 9216) == (301 + 10) * 400 + 25067 == 149467
    assert xoff_bytes(800, 100, 9216) == (301 + 216) * 800 + 25067 == 438667
    assert xoff_bytes(25, 3, 1500) == xoff_bytes(40, 3, 1500) == (301 + 6) * 40 + 4080  # floored at 40 Gb/s
    assert xoff_bytes(400, 40, 9216) > xoff_bytes(400, 5, 9216)  # longer cable: more in flight
    assert pfc_headroom(400, 5, 9216, 2).inputs == "speed 400 Gb/s, cable 5 m, MTU 9216 B, 2 ports"


def test_queue_delay_scales_with_speed_and_nvidia_does_not() -> None:
    delay = EcnSpec(derive="queue-delay")
    assert [d.value for d in ecn_thresholds(delay, 400)] == [150_000, 1_500_000]  # 3 / 30 µs at 400 Gb/s: NVIDIA's pair
    assert [d.value for d in ecn_thresholds(delay, 800)] == [300_000, 3_000_000]
    assert [d.value for d in ecn_thresholds(delay, 100)] == [38_000, 375_000]  # 37500 B rounded up to whole kbytes
    assert [d.value for d in ecn_thresholds(EcnSpec(), 800)] == [150_000, 1_500_000]


def test_a_pin_is_kept_and_the_other_threshold_derived() -> None:
    low, high = ecn_thresholds(EcnSpec(derive="queue-delay", min_threshold_bytes=200_000), 800)
    assert (low.value, low.pinned, high.value, high.pinned) == (200_000, True, 3_000_000, False)
    assert low.explain().startswith("ecn_min 200000 B pinned in the definition; derived would be 300000 B")


def test_pinned_and_derived_thresholds_that_cross_are_refused() -> None:
    with pytest.raises(PlanError, match="minimum threshold 2000000 B \\(pinned\\) is not below the maximum 1500000 B \\(derived\\)"):
        ecn_thresholds(EcnSpec(min_threshold_bytes=2_000_000), 400)


def test_a_crossing_pin_is_a_definition_error_naming_roce_ecn(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"roce\.ecn"):
        _plan("cumulus", tmp_path, {"min_threshold_bytes": 2_000_000})


def test_every_nos_renders_the_derived_thresholds_in_its_own_units(tmp_path: Path) -> None:
    """100 Gb/s ports, derive: queue-delay 3-30 µs: 38000 / 375000 B; Cumulus and SONiC in bytes, EOS and NX-OS in kbytes."""
    ecn = {"derive": "queue-delay"}
    cumulus = render_configs(_plan("cumulus", tmp_path, ecn))["switches/leaf01/nvue.sh"]
    assert "nv set qos congestion-control default-global traffic-class 3 min-threshold 38000" in cumulus
    assert "nv set qos congestion-control default-global traffic-class 3 max-threshold 375000" in cumulus
    sonic = render_configs(_plan("sonic", tmp_path, ecn))["switches/leaf01/config_db.json"]
    assert '"green_min_threshold": "38000"' in sonic
    assert '"green_max_threshold": "375000"' in sonic
    eos = render_configs(_plan("eos", tmp_path, ecn))["switches/leaf01/startup-config"]
    assert "random-detect ecn minimum-threshold 38 kbytes maximum-threshold 375 kbytes max-mark-probability 100 weight 0" in eos
    nxos = render_configs(_plan("nxos", tmp_path, ecn))["switches/leaf01/running-config"]
    assert "random-detect minimum-threshold 38 kbytes maximum-threshold 375 kbytes drop-probability 100 weight 0 ecn" in nxos


def test_plan_shows_each_switch_headroom_with_its_inputs(tmp_path: Path) -> None:
    plan = _plan("cumulus", tmp_path, cable_length_m={"host": 3, "fabric": 100})
    leaf = plan.buffers_of("leaf01")
    assert leaf is not None
    assert [(h.value, h.inputs) for h in leaf.headroom] == [
        (xoff_bytes(100, 100, 9216), "speed 100 Gb/s, cable 100 m, MTU 9216 B, 2 ports"),
        (xoff_bytes(100, 3, 9216), "speed 100 Gb/s, cable 3 m, MTU 9216 B, 2 ports"),
    ]
    cumulus = render_configs(plan)["switches/leaf01/nvue.sh"]
    assert "nv set qos pfc default-global cable-length 100" in cumulus  # the switch sizes the headroom the plan shows


def test_plan_command_prints_each_derived_value_with_its_formula() -> None:
    lab = str(ROOT / "inventories" / "lab" / "cluster.yaml")
    out = subprocess.run([sys.executable, "-m", "fabric", "plan", lab], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert "ecn_min 150000 B = NVIDIA's qos roce default at every speed [4 switches]" in out
    assert f"pfc_headroom 63767 B = {XOFF_FORMULA} with speed 100 Gb/s, cable 40 m, MTU 9216 B" in out


def test_lint_explains_the_derived_threshold_a_hand_edit_contradicts(tmp_path: Path) -> None:
    plan = _plan("cumulus", tmp_path, {"derive": "queue-delay"})
    files = render_configs(plan)
    configs: dict[str, str | None] = {s.name: files[f"switches/{s.name}/nvue.sh"] for s in plan.fabric.switches} if plan.fabric else {}
    text = configs["leaf01"] or ""
    configs["leaf01"] = text.replace("traffic-class 3 max-threshold 375000", "traffic-class 3 max-threshold 1500000")
    assert configs["leaf01"] != text
    found = [str(f) for f in lint_configs(plan, configs)]
    assert found == [
        "leaf01: ecn traffic-class 3: ECN marking on the lossless queue differs from the contract; ecn_min 38000 B = "
        "delay_us * speed_Gbps * 125, up to 1000 B with min_delay_us 3, speed 100 Gb/s; ecn_max 375000 B = delay_us * "
        "speed_Gbps * 125, up to 1000 B with max_delay_us 30, speed 100 Gb/s (expected 38000-375000 B at 100%, found "
        "38000-1500000 B at 100%)"
    ]


def _ib_with_roce_storage(tmp_path: Path, ecn: dict[str, Any] | None = None) -> ClusterPlan:
    """onprem-ib: an InfiniBand compute fabric whose Cumulus storage network runs RoCE."""
    data = yaml.safe_load((ROOT / "inventories" / "onprem-ib" / "cluster.yaml").read_text())
    if ecn is not None:
        data.setdefault("roce", {})["ecn"] = ecn
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(data))
    return plan_cluster(load_cluster(path))


def test_storage_switches_are_in_the_plan_buffers_with_their_inputs() -> None:
    plan = plan_cluster(load_cluster(ROOT / "inventories" / "onprem-ib" / "cluster.yaml"))
    storage = [s.name for net in plan.storage for s in net.switches]
    assert storage
    assert {b.switch for b in plan.buffers} == set(storage)  # the InfiniBand compute switches have no lossless port
    spine = plan.buffers_of("stor-spine-a")
    assert spine is not None
    assert [(h.value, h.inputs) for h in spine.headroom] == [
        (xoff_bytes(200, 30, 9000), "speed 200 Gb/s, cable 30 m, MTU 9000 B, 16 ports"),
        (xoff_bytes(200, 5, 9000), "speed 200 Gb/s, cable 5 m, MTU 9000 B, 2 ports"),
    ]
    data = plan_to_data(plan)
    assert "stor-spine-a" in {b["switch"] for b in data["buffers"]}  # plan.json carries them


def test_a_storage_switch_renders_the_thresholds_the_plan_shows(tmp_path: Path) -> None:
    plan = _ib_with_roce_storage(tmp_path, {"derive": "queue-delay"})
    spine = plan.buffers_of("stor-spine-a")
    assert spine is not None
    assert (spine.ecn_min.value, spine.ecn_max.value) == (3 * 200 * 125, 30 * 200 * 125)
    assert spine.ecn_min.inputs == "min_delay_us 3, speed 200 Gb/s"
    text = render_configs(plan)["switches/stor-spine-a/nvue.sh"]
    assert "nv set qos congestion-control default-global traffic-class 3 min-threshold 75000" in text
    assert "nv set qos congestion-control default-global traffic-class 3 max-threshold 750000" in text
