"""The lint's NIC half (issue 34): each switch classifies what the NICs cabled to it send. Each kind of disagreement
(RoCE or CNP DSCP in the wrong class, or on the wrong priority), on SONiC, Cumulus and EOS, is one finding naming the
switch port, the node, its RDMA device and the NIC model; the rendered configs are the clean control. On SONiC a
DSCP's priority is its traffic class (gpufabric's identity maps), so a priority disagreement there is a class one."""

from __future__ import annotations

import pytest

from fabric.lint import lint_configs
from fabric.lint.parse.qos import CONFIG_FILE
from tests.render.conftest import files_of, plan_of

NIC_CASES = ["render/mixed-nic", "render/thor2-cumulus", "render/thor2-eos"]


def edited(case: str, switch: str, edits: list[tuple[str, str]]) -> dict[str, str | None]:
    plan, files = plan_of(case), files_of(case)
    assert plan.fabric is not None
    found: dict[str, str | None] = {}
    for s in plan.fabric.switches:
        text = files[f"switches/{s.name}/{CONFIG_FILE[s.nos]}"]
        for old, new in edits if s.name == switch else []:
            assert old in text, f"{old!r} not in {s.name}'s config"
            text = text.replace(old, new)
        found[s.name] = text
    return found


@pytest.mark.parametrize("case", NIC_CASES)
def test_the_rendered_configs_agree_with_every_cabled_nic(case: str) -> None:
    plan = plan_of(case)
    assert plan.nics  # the control is not vacuous: the plan knows the NICs
    assert lint_configs(plan, edited(case, "", [])) == []


CNP_6 = "the switch prioritises CNP on priority 6, the NIC sends CNP with DSCP 48 → priority 7 (expected dscp 48 on priority 7, found dscp 48 on priority 6)"
BREAKS = [
    # (case, switch, edits, the NIC findings among all findings)
    pytest.param(
        "render/thor2-eos",
        "leaf01",
        [("qos map traffic-class 7 to cos 7", "qos map traffic-class 7 to cos 6")],
        [f"leaf01: port Ethernet1/1 (amd01 bnxt_re0, Broadcom thor2) and 3 more ports of that NIC: {CNP_6}"],
        id="eos-cnp-priority",
    ),
    pytest.param(
        "render/thor2-eos",
        "leaf02",
        [("qos map traffic-class 3 to cos 3", "qos map traffic-class 3 to cos 4")],
        [
            "leaf02: port Ethernet1/1 (amd03 bnxt_re0, Broadcom thor2) and 3 more ports of that NIC: the switch puts RoCE on priority 4, "
            "the NIC sends RoCE with DSCP 26 → priority 3 (expected dscp 26 on priority 3, found dscp 26 on priority 4)"
        ],
        id="eos-roce-priority",
    ),
    pytest.param(
        "render/thor2-eos",
        "leaf01",
        [("qos map dscp 48 to traffic-class 7", "qos map dscp 48 to traffic-class 0")],
        [
            "leaf01: port Ethernet1/1 (amd01 bnxt_re0, Broadcom thor2) and 3 more ports of that NIC: the NIC sends CNP with DSCP 48; the switch "
            "must put it in the CNP traffic class 7, it puts it in traffic-class 0 (expected dscp 48 in traffic-class 7, found dscp 48 in traffic-class 0)"
        ],
        id="eos-cnp-class",
    ),
    pytest.param(
        "render/thor2-cumulus",
        "leaf01",
        [
            ("dscp 48 switch-priority 7", "dscp 48 switch-priority 6"),
            ("switch-priority 7 traffic-class 7", "switch-priority 6 traffic-class 7"),
        ],
        [f"leaf01: port swp1 (amd01 bnxt_re0, Broadcom thor2) and 3 more ports of that NIC: {CNP_6}"],
        id="cumulus-cnp-priority",
    ),
    pytest.param(
        "render/thor2-cumulus",
        "leaf02",
        [("dscp 26 switch-priority 3", "dscp 26 switch-priority 2")],
        [
            "leaf02: port swp1 (amd03 bnxt_re0, Broadcom thor2) and 3 more ports of that NIC: the NIC sends RoCE with DSCP 26; the switch "
            "must put it in the lossless traffic class 3, it puts it in traffic-class 2 (expected dscp 26 in traffic-class 3, found dscp 26 in traffic-class 2)"
        ],
        id="cumulus-roce-class",
    ),
    pytest.param(
        "render/thor2-eos",
        "leaf02",
        [("qos map dscp 26 to traffic-class 3", "qos map dscp 26 to traffic-class 1")],
        [
            "leaf02: port Ethernet1/1 (amd03 bnxt_re0, Broadcom thor2) and 3 more ports of that NIC: the NIC sends RoCE with DSCP 26; the switch "
            "must put it in the lossless traffic class 3, it puts it in traffic-class 1 (expected dscp 26 in traffic-class 3, found dscp 26 in traffic-class 1)"
        ],
        id="eos-roce-class",
    ),
    pytest.param(
        "render/thor2-cumulus",
        "leaf02",
        [("switch-priority 7 traffic-class 7", "switch-priority 7 traffic-class 0")],
        [
            "leaf02: port swp1 (amd03 bnxt_re0, Broadcom thor2) and 3 more ports of that NIC: the NIC sends CNP with DSCP 48; the switch "
            "must put it in the CNP traffic class 7, it puts it in traffic-class 0 (expected dscp 48 in traffic-class 7, found dscp 48 in traffic-class 0)"
        ],
        id="cumulus-cnp-class",
    ),
    pytest.param(
        "render/thor2-cumulus",
        "leaf01",
        [("dscp 26 switch-priority 3", "dscp 26 switch-priority 2"), ("switch-priority 3 traffic-class 3", "switch-priority 2 traffic-class 3")],
        [
            "leaf01: port swp1 (amd01 bnxt_re0, Broadcom thor2) and 3 more ports of that NIC: the switch puts RoCE on priority 2, "
            "the NIC sends RoCE with DSCP 26 → priority 3 (expected dscp 26 on priority 3, found dscp 26 on priority 2)"
        ],
        id="cumulus-roce-priority",
    ),
    pytest.param(
        "render/mixed-nic",
        "leaf01",
        [('"48": "6"', '"48": "0"')],
        [
            "leaf01: port Ethernet0 (nv01 mlx5_0, NVIDIA connectx-7) and 1 more port of that NIC: the NIC sends CNP with DSCP 48; the switch "
            "must put it in the CNP traffic class 6, it puts it in traffic-class 0 (expected dscp 48 in traffic-class 6, found dscp 48 in traffic-class 0)",
            "leaf01: port Ethernet16 (amd01 bnxt_re0, Broadcom thor2) and 1 more port of that NIC: the NIC sends CNP with DSCP 48; the switch "
            "must put it in the CNP traffic class 6, it puts it in traffic-class 0 (expected dscp 48 in traffic-class 6, found dscp 48 in traffic-class 0)",
        ],
        id="sonic-cnp-class-both-nics",
    ),
    pytest.param(
        "render/mixed-nic",
        "leaf02",
        [('"26": "3"', '"26": "1"')],
        [
            "leaf02: port Ethernet0 (amd02 bnxt_re0, Broadcom thor2) and 3 more ports of that NIC: the NIC sends RoCE with DSCP 26; the switch "
            "must put it in the lossless traffic class 3, it puts it in traffic-class 1 (expected dscp 26 in traffic-class 3, found dscp 26 in traffic-class 1)"
        ],
        id="sonic-roce-class",
    ),
]


@pytest.mark.parametrize(("case", "switch", "edits", "expected"), BREAKS)
def test_each_disagreement_names_the_nic_and_the_port(case: str, switch: str, edits: list[tuple[str, str]], expected: list[str]) -> None:
    findings = [str(f) for f in lint_configs(plan_of(case), edited(case, switch, edits))]
    assert [f for f in findings if " of that NIC: " in f] == expected


def test_the_mixed_leaf_classifies_both_nics_and_the_thor2s_are_set_to_the_contract() -> None:
    plan = plan_of("render/mixed-nic")
    assert [(n.group, n.model, n.tool, n.sets, n.cnp_priority) for n in plan.nics] == [
        ("nv", "connectx-7", "mlnx", ("roce_dscp", "roce_priority"), 6),
        ("amd", "thor2", "bnxt", ("cnp_priority",), 6),  # Thor2 sends CNP on 7 out of the box: the roles set 6
    ]
