"""The physical-layer linter (issue 28): clean on what render writes, and a hand-edited config or cabling list is caught
with the device, port, cable and both values; ``python -m fabric lint`` counts the ports and cables it checked."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import NamedTuple

import pytest

from fabric.__main__ import main
from fabric.errors import InputError
from fabric.lint.phys import PHYS_FILE, PhysReport, lint_phys, switch_inventory
from fabric.model import load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from fabric.render import render_configs
from tests.conftest import DATA, ROOT

CASES = {
    "onprem-roce": ROOT / "inventories" / "onprem-roce",  # Cumulus storage / OOB, SONiC compute
    "onprem-ib": ROOT / "inventories" / "onprem-ib",  # SONiC OOB
    "lab": ROOT / "inventories" / "lab",
    "storage/sonic": DATA / "storage" / "sonic",
    "storage/eos": DATA / "storage" / "eos",
    "storage/nxos": DATA / "storage" / "nxos",
    "render/eos": DATA / "render" / "eos",
    "render/nxos": DATA / "render" / "nxos",
}


@cache
def _plan(case: str) -> ClusterPlan:
    return plan_cluster(load_cluster(CASES[case] / "cluster.yaml"))


@cache
def _files(case: str) -> dict[str, str]:
    return render_configs(_plan(case))


def _configs(case: str) -> dict[str, str | None]:
    files = _files(case)
    return {n: files.get(f"switches/{n}/{PHYS_FILE[nos]}") for n, (_, nos) in switch_inventory(_plan(case)).items() if nos in PHYS_FILE}


def _lint(case: str, switch: str = "", old: str = "", new: str = "", *, cabling: tuple[str, str] | None = None) -> PhysReport:
    configs = _configs(case)
    if switch:
        text = configs[switch] or ""
        assert old in text, old
        configs[switch] = text.replace(old, new, 1)
    table = _files(case)["cabling.csv"]
    if cabling is not None:
        assert cabling[0] in table
        table = table.replace(*cabling, 1)
    return lint_phys(_plan(case), configs, table)


@pytest.mark.parametrize("case", sorted(CASES))
def test_rendered_configs_agree_with_their_cables(case: str) -> None:
    """Negative control: before the storage speed fix, onprem-roce gave 70 findings (its in-band ports at 200G)."""
    report = _lint(case)
    assert [str(f) for f in report.findings] == []
    assert report.ports > report.cables / 2 > 0


def test_a_hand_edited_nvue_speed_names_device_port_cable_and_both_values() -> None:
    report = _lint("onprem-roce", "stor-su1-1-a", "nv set interface swp1s1 link speed 100G", "nv set interface swp1s1 link speed 200G")
    assert [str(f) for f in report.findings] == [
        "stor-su1-1-a: swp1s1: cable stor-su1-1-a swp1s1 - gpu001 enp170s0f1np1 runs 100G (cabling.csv) but stor-su1-1-a swp1s1 "
        "is set to 200G: the link will not come up (expected speed 100G, found speed 200G)"
    ]


def test_an_edited_cabling_list_is_checked_against_the_configs_and_the_nic() -> None:
    row = "stor-su1-1-a,swp1s1,gpu001,enp170s0f1np1,100,"
    report = _lint("onprem-roce", cabling=(row, row.replace(",100,", ",200,")))
    assert [f.device for f in report.findings] == ["stor-su1-1-a", "gpu001"]
    assert report.findings[1].actual == "NIC 100G"  # the DGX H100's in-band port (fabric/catalog/data/nodes/dgx-h100.yaml)


def test_both_ends_of_a_switch_cable_set_one_mtu() -> None:
    old = "nv set interface swp64s2 link mtu 9000"
    report = _lint("onprem-roce", "stor-su1-1-a", old, old.replace("9000", "1500"))
    assert [str(f) for f in report.findings] == [
        "stor-su1-1-a: swp64s2: the two ends of cable stor-su1-1-a swp64s2 - stor-su1-1-b swp64s2 set different MTUs "
        "(stor-su1-1-a swp64s2 1500, stor-su1-1-b swp64s2 9000): frames between them are dropped (expected mtu 9000 (as stor-su1-1-b swp64s2), found mtu 1500)"
    ]


def test_sonic_port_speed_breakout_mode_and_fec() -> None:
    speed = _lint("storage/sonic", "stor-su1-1-a", '"speed": "200000",\n      "subport": "1"', '"speed": "400000",\n      "subport": "1"')
    assert any(f.where == "Ethernet0" and f.expected == "speed 200G" and f.actual == "speed 400G" for f in speed.findings)
    assert any("4x200G breakout mode on the sn5600 does not allow" in f.message for f in speed.findings)  # platform.json: 4x200G[100G,...]
    mode = _lint("storage/sonic", "stor-su1-1-a", '"brkout_mode": "4x200G[100G,50G,25G,10G]"', '"brkout_mode": "4x200G[400G]"')
    assert [(f.where, f.actual) for f in mode.findings] == [("Ethernet0", "4x200G[400G]")]
    fec = _lint(
        "storage/sonic", "stor-su1-1-a", '"mtu": "9000",\n      "speed": "200000"', '"fec": "none",\n      "mtu": "9000",\n      "speed": "200000"'
    )
    assert [(f.where, f.expected, f.actual) for f in fec.findings] == [("Ethernet0", "fec rs", "fec none")]


def test_eos_and_nxos_speeds_are_parsed_back() -> None:
    eos = _lint("storage/eos", "stor-su1-1-a", "interface Ethernet64/5\n   description stor-su1-1-b peerlink\n   speed 200g-2", "interface Ethernet64/5\n   description stor-su1-1-b peerlink\n   speed 100g-2")  # fmt: skip
    assert [(f.device, f.where, f.expected, f.actual) for f in eos.findings] == [("stor-su1-1-a", "Ethernet64/5", "speed 200G", "speed 100G")]
    assert "stor-su1-1-a Ethernet64/5 - stor-su1-1-b Ethernet64/5" in eos.findings[0].message
    nxos = _lint("storage/nxos", "stor-su1-1-a", "interface Ethernet1/1/1\n  description gpu001 storage\n  mtu 9000\n  speed 100000", "interface Ethernet1/1/1\n  description gpu001 storage\n  mtu 9000\n  speed 40000")  # fmt: skip
    assert [(f.where, f.expected, f.actual) for f in nxos.findings] == [("Ethernet1/1/1", "speed 100G", "speed 40G")]


def test_eos_lane_one_port_of_a_split_cage_is_configured() -> None:
    """EOS splits a cage by its lane-1 port's speed: the uplinks on Ethernet62/5 and /7 need Ethernet62/1 set (render fix)."""
    lane_one = "interface Ethernet62/1\n   description breakout lane 1\n   shutdown\n   speed 200g-2\n!\n"
    report = _lint("storage/eos", "stor-su1-1-a", lane_one, "")
    assert {(f.where, f.actual) for f in report.findings} >= {("Ethernet62/5", "1x"), ("Ethernet62/7", "no such port")}


def test_a_cabling_list_without_its_header_is_refused() -> None:
    with pytest.raises(InputError, match=r"cabling\.csv: the header must name"):
        lint_phys(_plan("lab"), _configs("lab"), "a,b\n1,2\n")


def test_the_lint_command_counts_ports_and_cables_and_fails_on_an_edit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    definition = CASES["onprem-roce"] / "cluster.yaml"
    assert main(["render", str(definition), "-o", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["lint", str(definition), "--configs", str(tmp_path)]) == 0
    assert "physical layer: 1952 ports on 1384 cables" in capsys.readouterr().out
    nvue = tmp_path / "switches" / "stor-svc-a" / "nvue.sh"
    nvue.write_text(nvue.read_text(encoding="utf-8").replace("swp1s1 link speed 25G", "swp1s1 link speed 200G"), encoding="utf-8")
    assert main(["lint", str(definition), "--configs", str(tmp_path), "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["physical"] == {"ports": 1952, "cables": 1384, "unconfirmed": 0}
    assert [(f["device"], f["where"], f["expected"], f["actual"]) for f in result["findings"]] == [
        ("stor-svc-a", "swp1s1", "speed 25G", "speed 200G"),
        ("stor-svc-a", "swp1s1", "fec rs", "no fec"),  # 200G over 2 lanes needs RS-FEC (IEEE 802.3cd), which a 25G port was not given
    ]


class FecEdit(NamedTuple):
    """A hand edit of one NOS's FEC line on a cabled port whose speed needs RS-FEC (fabric/catalog/fec.py): the
    rendered line, its port and cable, speed over lanes, the IEEE 802.3 clause, and a wrong FEC with what it parses as."""

    case: str
    switch: str
    line: str
    port: str
    cable: str
    speed: str
    clause: str
    wrong: tuple[str, str]


FEC_EDITS = {
    "cumulus": FecEdit(
        "onprem-roce", "stor-su1-1-a", "nv set interface swp1s1 link fec rs\n", "swp1s1", "stor-su1-1-a swp1s1 - gpu001 enp170s0f1np1",
        "100G over 2 lane(s)", "IEEE 802.3cd-2018 clause 91", ("nv set interface swp1s1 link fec baser\n", "fec fc"),
    ),
    "sonic": FecEdit(
        "storage/sonic", "stor-su1-1-a", '"fec": "rs",\n', "Ethernet0", "stor-su1-1-a Ethernet0 - gpu001 enp170s0f0np0",
        "200G over 2 lane(s)", "IEEE 802.3ck-2022 clause 119", ('"fec": "none",\n', "fec none"),
    ),
    "eos": FecEdit(
        "render/eos", "leaf01", "   error-correction encoding reed-solomon\n", "Ethernet1/1", "leaf01 Ethernet1/1 - node1 eth1",
        "100G over 2 lane(s)", "IEEE 802.3cd-2018 clause 91", ("   error-correction encoding fire-code\n", "fec fc"),
    ),
    "nxos": FecEdit(
        "render/nxos", "leaf01", "  fec rs-fec\n", "Ethernet1/1/1", "leaf01 Ethernet1/1/1 - node1 eth1",
        "100G over 2 lane(s)", "IEEE 802.3cd-2018 clause 91", ("  fec off\n", "fec none"),
    ),
}  # fmt: skip


@pytest.mark.parametrize("nos", sorted(FEC_EDITS))
def test_a_cabled_port_that_needs_rs_fec_and_leaves_it_unset_or_wrong_is_a_finding(nos: str) -> None:
    """Negative control: the rendered config (with the line) is clean (test_rendered_configs_agree_with_their_cables)."""
    e = FEC_EDITS[nos]
    unset = _lint(e.case, e.switch, e.line, "")
    assert [(f.device, f.where, f.expected, f.actual) for f in unset.findings] == [(e.switch, e.port, "fec rs", "no fec")]
    message = unset.findings[0].message
    assert f"(cable {e.cable})" in message
    assert f"runs {e.speed}: RS-FEC required by {e.clause}" in message
    edited = _lint(e.case, e.switch, e.line, e.wrong[0])
    assert [(f.device, f.where, f.expected, f.actual) for f in edited.findings] == [(e.switch, e.port, "fec rs", e.wrong[1])]
    assert f"RS-FEC required by {e.clause}" in edited.findings[0].message


def test_fec_auto_on_a_port_that_needs_rs_is_left_to_the_nos_and_a_finding() -> None:
    line = "nv set interface swp1s1 link fec rs\n"
    report = _lint("onprem-roce", "stor-su1-1-a", line, line.replace(" rs", " auto"))
    assert [(f.where, f.actual) for f in report.findings] == [("swp1s1", "fec auto")]


def test_a_port_whose_speed_leaves_fec_optional_needs_none() -> None:
    """A 25G single-lane port (25GBASE-CR, IEEE 802.3by clause 108: FEC optional) sets no FEC and is clean."""
    text = _configs("onprem-roce")["stor-svc-a"] or ""
    assert "nv set interface swp1s1 link speed 25G" in text
    assert "nv set interface swp1s1 link fec" not in text
