"""Breakout cages: a split port exists on the switch only when its cage is broken out, so the render says so per cage."""

from __future__ import annotations

from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.render import render_configs
from fabric.render.breakout import eos_speed
from tests.conftest import DATA


def nvue(switch: str) -> list[str]:
    plan = plan_cluster(load_cluster(DATA / "plan" / "reference-2x400" / "cluster.yaml"))
    return render_configs(plan)[f"switches/{switch}/nvue.sh"].splitlines()


def test_each_split_cage_is_broken_out_once_and_native_cages_are_not() -> None:
    lines = nvue("leaf01")
    breakouts = [line for line in lines if " link breakout " in line]
    # 32 hosts x 2 ports at 400G over 2 x 400G per SN5600 cage: 16 cages swp1..swp16, then 800G uplinks from swp17
    assert breakouts == [f"nv set interface swp{c} link breakout 2x" for c in range(1, 17)]
    assert "nv set interface swp1s0 link speed 400G" in lines
    assert "nv set interface swp1s1 link speed 400G" in lines
    uplinks = [line for line in lines if line.endswith(" link speed 800G")]
    assert uplinks
    cages = {line.split()[3] for line in uplinks}
    assert not cages & {b.split()[3] for b in breakouts}


def test_a_native_speed_switch_has_no_breakout() -> None:
    assert not [line for line in nvue("spine01") if " link breakout " in line]


def test_nxos_breaks_out_each_cage_its_split_ports_use() -> None:
    plan = plan_cluster(load_cluster(DATA / "render" / "nxos" / "cluster.yaml"))
    files = render_configs(plan)
    for switch in plan.fabric.switches if plan.fabric else ():
        lines = files[f"switches/{switch.name}/running-config"].splitlines()
        cages = sorted({int(line.split("/")[1]) for line in lines if line.startswith("interface Ethernet1/") and line.count("/") == 2})
        assert cages, switch.name  # the case runs 4 x 100G on the 400G cages
        breakouts = [line for line in lines if line.startswith("interface breakout ")]
        assert breakouts == [f"interface breakout module 1 port {c} map 100g-4x" for c in cages], switch.name
        assert lines.index(breakouts[-1]) < min(i for i, line in enumerate(lines) if line.startswith("interface Ethernet1/"))


def test_eos_split_ports_name_their_lanes_and_native_ports_do_not() -> None:
    plan = plan_cluster(load_cluster(DATA / "render" / "eos" / "cluster.yaml"))
    text = render_configs(plan)["switches/leaf01/startup-config"]
    # 7060X5-64S: 8-lane 400G cages run as 4 x 100G (Ethernet<cage>/1, /3, /5, /7), two lanes each
    assert "interface Ethernet1/3\n" in text
    assert "   speed 100g-2\n" in text
    assert "   speed 100g\n" not in text
    assert eos_speed("7060x6-64pe", 400) == "400g-4"
    assert eos_speed("7060x6-64pe", 200) == "200g-2"
    assert eos_speed("7060x6-64pe", 800) == "800g"
