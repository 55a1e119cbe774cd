"""The OOB linter: clean on what render writes for every OOB NOS; an ACL open to another plane, a BMC or switch
management port off the OOB VLAN and a relay to the wrong server are each found, with the switch and port."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from fabric.__main__ import main
from fabric.lint.oob import lint_oob, oob_config_files
from fabric.model import load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from fabric.render import render_configs
from tests.conftest import DATA, ROOT

CASES = {
    "cumulus": ROOT / "inventories" / "onprem-roce",
    "sonic": ROOT / "inventories" / "onprem-ib",
    "eos": DATA / "render" / "eos",
    "nxos": DATA / "render" / "nxos",
}


@cache
def _plan(nos: str) -> ClusterPlan:
    return plan_cluster(load_cluster(CASES[nos] / "cluster.yaml"))


@cache
def _configs(nos: str) -> dict[str, str]:
    files = render_configs(_plan(nos))
    return {name: files[f"switches/{name}/{file}"] for name, file in oob_config_files(_plan(nos)).items()}


def _lint(nos: str, switch: str, old: str, new: str) -> list[str]:
    configs = dict(_configs(nos))
    assert old in configs[switch], old
    configs[switch] = configs[switch].replace(old, new)
    return [str(f) for f in lint_oob(_plan(nos), configs)]


@pytest.mark.parametrize("nos", sorted(CASES))
def test_rendered_oob_configs_are_clean(nos: str) -> None:
    plan = _plan(nos)
    assert plan.oob is not None
    assert {s.nos for s in plan.oob.switches} == {nos}
    assert lint_oob(plan, _configs(nos)) == []


def test_an_acl_that_lets_the_inband_plane_in_is_found() -> None:
    found = _lint("cumulus", "oob-su1", "rule 10 match ip source-ip 10.103.0.0/16", "rule 10 match ip source-ip 10.102.0.0/16")
    assert found == [
        "oob-su1: management ACL: the management ACL lets a source outside the OOB plane in (expected sources inside 10.103.0.0/16, found 10.102.0.0/16)"
    ]


def test_an_acl_not_applied_to_ssh_is_found() -> None:
    found = _lint("eos", "oob-mgmt", "management ssh\n   ip access-group MGMT-SSH in\n", "management ssh\n")
    assert found == [
        "oob-mgmt: management ACL: the OOB switch takes SSH from any plane "
        "(expected SSH permitted only from 10.103.0.0/16, found no ACL on the switch's SSH)"
    ]


def test_a_sonic_acl_accepting_any_source_is_found() -> None:
    db = json.loads(_configs("sonic")["oob-su1-r1"])
    db["ACL_RULE"]["SSH_ONLY|RULE_10"]["SRC_IP"] = "0.0.0.0/0"
    configs = dict(_configs("sonic")) | {"oob-su1-r1": json.dumps(db)}
    assert [str(f) for f in lint_oob(_plan("sonic"), configs)] == [
        "oob-su1-r1: management ACL: the management ACL lets a source outside the OOB plane in (expected sources inside 10.203.0.0/16, found 0.0.0.0/0)"
    ]


def test_a_bmc_port_off_the_oob_vlan_is_found() -> None:
    found = _lint("cumulus", "oob-su1", "swp5 bridge domain br_default access 100", "swp5 bridge domain br_default access 101")
    assert found == ["oob-su1: swp5: the gpu005 bmc port is not on the OOB plane's VLAN (expected untagged on VLAN 100, found VLAN 101)"]


def test_a_sonic_bmc_port_tagged_instead_of_untagged_is_found() -> None:
    db = json.loads(_configs("sonic")["oob-su1-r1"])
    db["VLAN_MEMBER"]["Vlan100|Ethernet1"] = {"tagging_mode": "tagged"}
    configs = dict(_configs("sonic")) | {"oob-su1-r1": json.dumps(db)}
    found = [str(f) for f in lint_oob(_plan("sonic"), configs)]
    assert found == [
        "oob-su1-r1: Ethernet1: the dgx02 bmc port is not on the OOB plane's VLAN (expected untagged on VLAN 100, found no untagged VLAN)"
    ]


def test_a_switch_management_port_missing_on_eos_is_found() -> None:
    block = "interface Ethernet3\n   description leaf01 Management1\n   switchport access vlan 100\n"
    found = _lint("eos", "oob-mgmt", block, block.replace("vlan 100", "vlan 102"))
    assert found == [
        "oob-mgmt: Ethernet3: the leaf01 switch-mgmt port is not on the OOB plane's VLAN (expected untagged on VLAN 100, found VLAN 102)"
    ]


def test_an_nxos_vty_acl_open_to_everything_is_found() -> None:
    found = _lint("nxos", "oob-mgmt", "10 permit tcp 10.103.0.0/16 any eq 22", "10 permit tcp 0.0.0.0/0 any eq 22")
    assert found == [
        "oob-mgmt: management ACL: the management ACL lets a source outside the OOB plane in (expected sources inside 10.103.0.0/16, found 0.0.0.0/0)"
    ]


def test_a_relay_to_another_server_is_found() -> None:
    found = _lint("cumulus", "oob-mgmt", "server-group OOB server 10.104.0.10", "server-group OOB server 10.102.0.10")
    assert found == ["oob-mgmt: dhcp relay: the DHCP relay does not forward to the OOB DHCP server (expected 10.104.0.10, found 10.102.0.10)"]
    eos = _lint("eos", "oob-mgmt", "   ip helper-address 10.103.0.10\n", "")
    assert eos == ["oob-mgmt: dhcp relay: the DHCP relay does not forward to the OOB DHCP server (expected 10.103.0.10, found no relay)"]


def test_the_lint_command_reads_the_oob_configs_render_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    definition = CASES["cumulus"] / "cluster.yaml"
    assert main(["render", str(definition), "-o", str(tmp_path)]) == 0
    path = tmp_path / "switches" / "oob-su2" / "nvue.sh"
    path.write_text(path.read_text(encoding="utf-8").replace("source-ip 10.103.0.0/16", "source-ip 0.0.0.0/0"), encoding="utf-8")
    capsys.readouterr()
    assert main(["lint", str(definition), "--configs", str(tmp_path)]) != 0
    captured = capsys.readouterr()
    assert "lint: oob-su2: management ACL: the management ACL lets a source outside the OOB plane in" in captured.err
    assert captured.out == "1 finding(s): 31 switch configs checked; physical layer: 1952 ports on 1384 cables\n"  # compute 20, storage 8, oob 3
