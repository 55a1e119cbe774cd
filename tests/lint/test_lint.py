"""The contract linter: clean on what we render, and each rule reports a config edited to break it, exactly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fabric.lint import lint_configs, read_configs
from fabric.lint.parse.qos import CONFIG_FILE
from tests.conftest import DATA, ROOT
from tests.render.conftest import CASES, files_of, plan_of


def configs(case: str, edits: dict[str, tuple[str, str]] | None = None) -> dict[str, str | None]:
    plan, files = plan_of(case), files_of(case)
    assert plan.fabric is not None
    found: dict[str, str | None] = {}
    for s in plan.fabric.switches:
        text = files.get(f"switches/{s.name}/{CONFIG_FILE.get(s.nos, '')}")
        if text is not None and edits and s.name in edits:
            old, new = edits[s.name]
            assert old in text, f"{old!r} not in {s.name}'s config"
            text = text.replace(old, new)
        found[s.name] = text
    return found


@pytest.mark.parametrize("case", CASES)
def test_rendered_configs_are_clean(case: str) -> None:
    assert lint_configs(plan_of(case), configs(case)) == []


BREAKS = [
    # (case, switch, old, new, expected findings)
    (
        "render/eos",
        "leaf01",
        "qos map dscp 26 to traffic-class 3",
        "qos map dscp 26 to traffic-class 1",
        ["leaf01: dscp 26: the RoCE DSCP must map to the lossless traffic class (expected traffic-class 3, found traffic-class 1)"],
    ),
    (
        "render/eos",
        "leaf01",
        "qos map dscp 48 to traffic-class 6",
        "qos map dscp 48 to traffic-class 6\nqos map dscp 24 to traffic-class 3",
        ["leaf01: traffic-class 3: other traffic shares the lossless class (expected only dscp 26, found also dscp [24])"],
    ),
    (
        "render/eos",
        "leaf01",
        "   qos trust dscp\n",
        "",
        ["leaf01: qos trust: the switch does not classify by DSCP, so RoCE lands in the default class (expected dscp, found not trusted)"],
    ),
    (
        "render/eos",
        "spine01",
        "priority-flow-control priority 3 no-drop",
        "priority-flow-control priority 4 no-drop",
        ["spine01: pfc: PFC must run on exactly the RoCE priority (expected priorities 3, found priorities 4)"],
    ),
    (
        "render/eos",
        "leaf02",
        "maximum-threshold 1500 kbytes",
        "maximum-threshold 3000 kbytes",
        [
            "leaf02: ecn traffic-class 3: ECN marking on the lossless queue differs from the contract; ecn_min 150000 B = NVIDIA's qos roce "
            "default at every speed; ecn_max 1500000 B = NVIDIA's qos roce default at every speed (expected 150000-1500000 B at 100%, "
            "found 150000-3000000 B at 100%)"
        ],
    ),
    (
        "render/eos",
        "leaf01",
        "      priority strict\n",
        "",
        ["leaf01: scheduler traffic-class 6: CNPs must be served first (expected strict, found not strict)"],
    ),
    (
        "render/eos",
        "leaf01",
        "qos map dscp 48 to traffic-class 6",
        "qos map dscp 48 to traffic-class 0",
        ["leaf01: dscp 48: CNPs must reach their own class (expected traffic-class 6, found traffic-class 0)"],
    ),
    (
        "render/eos",
        "leaf01",
        "   priority-flow-control pause watchdog\n   priority-flow-control pause watchdog port action drop\n",
        "",
        [
            f"leaf01: port {p}: PFC without a watchdog can spread a pause storm (expected watchdog on, found watchdog off)"
            for p in (
                "Ethernet1/1 (node1:eth1)",
                "Ethernet1/3 (node2:eth1)",
                "Ethernet2/1 (spine01:Ethernet1/1)",
                "Ethernet2/3 (spine02:Ethernet1/1)",
            )
        ],
    ),
    (
        "render/eos",
        "leaf02",
        "   description node3:eth1\n   mtu 9214",
        "   description node3:eth1\n   mtu 1500",
        ["leaf02: port Ethernet1/1 (node3:eth1): hosts send 9000-byte packets plus headers (expected mtu >= 9022, found mtu 1500)"],
    ),
    (
        "render/eos",
        "spine02",
        "   description leaf02:Ethernet2/3\n   mtu 9214",
        "   description leaf02:Ethernet2/3\n   mtu 9100",
        [
            "leaf02: port Ethernet2/3 (spine02:Ethernet1/3): both ends of a fabric link need one MTU (expected mtu 9100 (as spine02:Ethernet1/3), found mtu 9214)",
            "spine02: port Ethernet1/3 (leaf02:Ethernet2/3): both ends of a fabric link need one MTU (expected mtu 9214 (as leaf02:Ethernet2/3), found mtu 9100)",
        ],
    ),
    (
        "render/eos",
        "leaf02",
        "   description node3:eth1\n   mtu 9214",
        "   description node3:eth1\n   mtu 9216",
        ["leaf02: port Ethernet1/1 (node3:eth1): eos on 7060x5-64s refuses an MTU above 9214 (expected mtu <= 9214, found mtu 9216)"],
    ),
    (
        "render/sonic",
        "leaf01",
        '"26": "3"',
        '"26": "1"',
        ["leaf01: dscp 26: the RoCE DSCP must map to the lossless traffic class (expected traffic-class 3, found traffic-class 1)"],
    ),
    (
        "render/sonic",
        "spine01",
        '"pfc_enable": "3"',
        '"pfc_enable": "3,4"',
        ["spine01: pfc: PFC must run on exactly the RoCE priority (expected priorities 3, found priorities 3,4)"],
    ),
    (
        "render/nxos",
        "leaf01",
        "  match dscp 26",
        "  match dscp 24",
        [
            "leaf01: dscp 26: the RoCE DSCP must map to the lossless traffic class (expected traffic-class 3, found unmapped)",
            "leaf01: traffic-class 3: other traffic shares the lossless class (expected only dscp 26, found also dscp [24])",
        ],
    ),
    (
        "render/nxos",
        "leaf02",
        "  description node3:eth1\n  no switchport\n  mtu 9216\n  speed 100000\n  fec rs-fec\n  ip address 10.100.0.4/31\n  priority-flow-control mode on\n",
        "  description node3:eth1\n  no switchport\n  mtu 9216\n  speed 100000\n  fec rs-fec\n  ip address 10.100.0.4/31\n",
        ["leaf02: port Ethernet1/1/1 (node3:eth1): a RoCE port without PFC drops on congestion (expected PFC on, found PFC off)"],
    ),
    (
        "render/cumulus",
        "leaf01",
        "nv set qos egress-scheduler default-global traffic-class 6 mode strict",
        "nv set qos egress-scheduler default-global traffic-class 6 mode dwrr",
        ["leaf01: scheduler traffic-class 6: CNPs must be served first (expected strict, found not strict)"],
    ),
]


_XOFF = "xoff = (301 + 216*cable_m/100) * 100 Gb/s + 272*9216/100 (Linux mlx5 calculate_xoff, NVIDIA); frames in flight after PAUSE are dropped"
BREAKS += [  # a switch told a shorter cable than the plan's reserves too little PFC headroom (fabric.plan.buffers)
    (
        "render/cumulus",
        "leaf01",
        "cable-length 40",
        "cable-length 10",
        [
            f"leaf01: port {port} ({peer}:swp1) cable-length: the switch sizes PFC headroom for 10 m (57267 B), but the cable is 40 m "
            f"and needs 63767 B: {_XOFF} (expected cable-length >= 40 m, found cable-length 10 m)"
            for port, peer in (("swp3", "spine01"), ("swp4", "spine02"))
        ],
    ),
    (
        "render/sonic",
        "leaf01",
        '"Ethernet10": "40m"',
        '"Ethernet10": "5m"',
        [
            "leaf01: port Ethernet10 (spine02:Ethernet0) cable-length: the switch sizes PFC headroom for 5 m (56167 B), but the cable "
            f"is 40 m and needs 63767 B: {_XOFF} (expected cable-length >= 40 m, found cable-length 5 m)"
        ],
    ),
]


@pytest.mark.parametrize(("case", "switch", "old", "new", "expected"), BREAKS, ids=[f"{b[0]}-{i}" for i, b in enumerate(BREAKS)])
def test_each_rule_reports_a_config_edited_to_break_it(case: str, switch: str, old: str, new: str, expected: list[str]) -> None:
    got = [str(f) for f in lint_configs(plan_of(case), configs(case, {switch: (old, new)}))]
    assert sorted(got) == sorted(expected)


def test_missing_config_is_a_finding() -> None:
    found = configs("render/eos")
    found["spine02"] = None
    assert [str(f) for f in lint_configs(plan_of("render/eos"), found)] == [
        "spine02: startup-config: the switch has no config to check (expected a config, found no file)"
    ]


def test_lint_command_reads_a_directory_of_configs_and_exits_1_on_findings(tmp_path: Path) -> None:
    definition = DATA / "render" / "sonic" / "cluster.yaml"
    run = [sys.executable, "-m", "fabric"]
    subprocess.run([*run, "render", str(definition), "-o", str(tmp_path)], cwd=ROOT, check=True, capture_output=True, timeout=60)
    clean = subprocess.run(
        [*run, "lint", str(definition), "--configs", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert clean.returncode == 0, clean.stderr
    db = tmp_path / "switches" / "leaf02" / "config_db.json"
    db.write_text(db.read_text(encoding="utf-8").replace('"green_max_threshold": "1500000"', '"green_max_threshold": "900000"'), encoding="utf-8")
    broken = subprocess.run(
        [*run, "lint", str(definition), "--configs", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert broken.returncode == 1
    assert "leaf02: ecn traffic-class 3: ECN marking on the lossless queue differs" in " ".join(broken.stderr.split())
    assert read_configs(plan_of("render/sonic"), tmp_path)["leaf02"] is not None
