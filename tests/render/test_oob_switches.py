"""The OOB management switches' configs: valid per NOS reference, and their DHCP relay agrees with the Kea config.

Checked against the same references as the compute switches: SONiC's YANG models (libyang, ``sonic_yang.py``) and the
cited NVUE command forms of every supported Cumulus release (``fabric/lint/forms/cumulus.yaml``).
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from pyavd import get_device_config, validate_structured_config

from fabric.catalog.releases import NOS_RELEASES
from fabric.errors import InputError, RenderError
from fabric.lint.forms import unknown_commands
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.plan.oob.facts import build_oob_facts
from fabric.render.kea import KEA_FILE
from fabric.render.nos.eos.oob import build_oob_structured_config
from fabric.render.oob import render_oob_switch
from tests.render.conftest import definition, files_of, plan_of
from tests.render.sonic_yang import check_config_db
from tests.render.test_avd_reference import commands


def _oob_files(case: str) -> dict[str, str]:
    return {path.split("/")[1]: text for path, text in files_of(case).items() if path.startswith("switches/oob-")}


def _kea_tests(case: str) -> dict[str, str]:
    """Kea class name (``<switch>-<port>``) → its test expression."""
    conf = json.loads(files_of(case)[KEA_FILE])["Dhcp4"]
    return {c["name"]: c["test"] for c in conf["client-classes"]}


def test_every_management_switch_gets_a_config_per_its_nos() -> None:
    assert sorted(_oob_files("onprem-roce")) == ["oob-mgmt", "oob-su1", "oob-su2"]
    assert all(p.endswith("/nvue.sh") for p in files_of("onprem-roce") if p.startswith("switches/oob-"))
    ib = [p for p in files_of("onprem-ib") if p.startswith("switches/oob-")]
    assert len(ib) == 10
    assert all(p.endswith("/config_db.json") for p in ib)


@pytest.mark.parametrize("release", NOS_RELEASES["cumulus"].supported)
def test_every_cumulus_oob_line_matches_a_cited_form(release: str) -> None:
    for facts in build_oob_facts(plan_of("onprem-roce")):
        again = dataclasses.replace(facts, switch=dataclasses.replace(facts.switch, nos_version=release))
        text = render_oob_switch(again)["nvue.sh"]
        assert f"Cumulus Linux {release}" in text
        assert unknown_commands("cumulus", release, text) == [], facts.switch.name


def test_every_sonic_oob_config_db_passes_sonic_yang() -> None:
    claimed = {f.switch.name: f.switch.nos_version for f in build_oob_facts(plan_of("onprem-ib"))}
    found = {name: [str(p) for p in check_config_db(json.loads(text), release=claimed[name])] for name, text in _oob_files("onprem-ib").items()}
    assert len(found) == 10
    assert {s: p for s, p in found.items() if p} == {}


def test_the_yang_check_catches_a_broken_oob_config() -> None:
    db: dict[str, Any] = json.loads(_oob_files("onprem-ib")["oob-su1-r1"])
    db["VLAN_MEMBER"]["Vlan100|Ethernet99"] = {"tagging_mode": "untagged"}
    problems = [str(p) for p in check_config_db(db)]
    assert len(problems) == 1
    assert problems == ['VLAN_MEMBER|Vlan100|Ethernet99: port: Invalid union value "Ethernet99" - no matching subtype found.']


def test_cumulus_access_ports_uplink_bond_svi_and_relay() -> None:
    lines = _oob_files("onprem-roce")["oob-su1"].splitlines()
    access = [line for line in lines if line.endswith("bridge domain br_default access 100")]
    assert len(access) == 42  # 32 BMC slots + 8 rail leaves' eth0 + the SU's storage leaf pair
    assert "nv set interface swp5 description 'gpu005 bmc'" in lines
    assert "nv set interface swp5 bridge domain br_default stp bpdu-guard on" in lines
    assert "nv set interface swp33 description 'leaf-su01-r1 eth0'" in lines
    assert [line for line in lines if " bond member " in line] == [
        "nv set interface core bond member swp49",
        "nv set interface core bond member swp50",
    ]
    assert "nv set interface core bridge domain br_default vlan 100" in lines
    assert "nv set interface vlan100 ip address 10.103.255.1/16" in lines
    assert "nv set vrf default router static 0.0.0.0/0 via 10.103.0.1" in lines
    # CL 5.14 (the OOB tier's release here): server groups, no `interface` / `server` (NVUE reference, DHCP-Relay)
    assert "nv set service dhcp-relay default server-group OOB server 10.104.0.10" in lines
    assert "nv set service dhcp-relay default server-group OOB upstream-interface vlan100" in lines
    assert "nv set service dhcp-relay default downstream-interface vlan100 server-group-name OOB" in lines
    assert not [line for line in lines if " dhcp-relay default interface " in line or " dhcp-relay default server " in line]
    assert "nv set acl MGMT-SSH rule 10 match ip source-ip 10.103.0.0/16" in lines
    assert lines[-1] == "nv set system control-plane acl MGMT-SSH inbound"


def _cumulus_option82(text: str) -> tuple[str, bool]:
    remote = re.search(r"^nv set service dhcp-relay default agent remote-id (\S+)$", text, re.MULTILINE)
    assert remote is not None
    pif = {f"nv set service dhcp-relay default agent use-pif-circuit-id {w}" for w in ("enable on", "state enabled")}  # CL <= 5.13, >= 5.14
    return remote.group(1), any(line in pif for line in text.splitlines())


def test_the_cumulus_relay_sends_what_each_kea_class_tests() -> None:
    tests = _kea_tests("onprem-roce")
    seen = 0
    for switch, text in _oob_files("onprem-roce").items():
        remote_id, pif = _cumulus_option82(text)
        assert pif
        for port in re.findall(r"^nv set interface (swp\d+) bridge domain br_default access 100$", text, re.MULTILINE):
            assert tests[f"{switch}-{port}"] == f"relay4[2].hex == '{remote_id}' and relay4[1].hex == '{port}'"
            seen += 1
    assert seen == len(tests)


def test_the_sonic_relay_circuit_id_is_hostname_and_alias_as_each_kea_class_tests() -> None:
    tests = _kea_tests("onprem-ib")
    seen = 0
    for switch, text in _oob_files("onprem-ib").items():
        db = json.loads(text)
        assert db["VLAN"]["Vlan100"]["dhcp_servers"] == ["10.204.0.10"]
        hostname = db["DEVICE_METADATA"]["localhost"]["hostname"]
        for key, member in db["VLAN_MEMBER"].items():
            port = key.split("|")[1]
            if member["tagging_mode"] == "untagged":
                assert tests[f"{switch}-{port}"] == f"relay4[1].hex == '{hostname}:{db['PORT'][port]['alias']}'"
                seen += 1
        assert db["VLAN_MEMBER"]["Vlan100|PortChannel1"] == {"tagging_mode": "tagged"}
        assert sorted(db["PORTCHANNEL_MEMBER"]) == ["PortChannel1|Ethernet48", "PortChannel1|Ethernet52"]
    assert seen == len(tests)


def test_a_nos_without_an_oob_renderer_is_a_render_error() -> None:
    facts = build_oob_facts(plan_of("onprem-roce"))[0]
    with pytest.raises(RenderError, match="no OOB switch renderer for mlnx-os"):
        render_oob_switch(dataclasses.replace(facts, switch=dataclasses.replace(facts.switch, nos="mlnx-os")))


EOS_CASE = "render/eos"


@pytest.mark.parametrize("release", NOS_RELEASES["eos"].supported)
def test_eos_oob_text_is_what_avd_renders_from_the_structured_config(release: str) -> None:
    all_facts = [f for f in build_oob_facts(plan_of(EOS_CASE)) if f.switch.nos == "eos"]
    assert all_facts
    for original in all_facts:
        facts = dataclasses.replace(original, switch=dataclasses.replace(original.switch, nos_version=release))
        structured = build_oob_structured_config(facts)
        violations = validate_structured_config(structured).validation_result.violations
        assert not violations, [f"{'.'.join(map(str, v.path))}: {v.message}" for v in violations]
        ours = render_oob_switch(facts)["startup-config"]
        assert f"for EOS {release}" in ours
        assert commands(ours) == commands(get_device_config(structured)), facts.switch.name


def test_eos_oob_ports_uplinks_relay_and_ssh_acl() -> None:
    text = _oob_files(EOS_CASE)["oob-mgmt"]
    assert "interface Ethernet1\n   description spine01 Management1\n   switchport access vlan 100\n   switchport mode access\n" in text
    assert "interface Ethernet49\n   description uplink to oob-core\n   channel-group 1 mode active\n" in text
    assert "interface Ethernet50\n   description uplink to oob-core\n   channel-group 1 mode active\n" in text
    assert "   ip helper-address 10.103.0.10\n" in text
    assert "ip dhcp snooping information option circuit-id type 0 format %h:%p\n" in text
    assert "ip access-list standard MGMT-SSH\n   10 permit 10.103.0.0/16\n" in text
    assert "management ssh\n   ip access-group MGMT-SSH in\n" in text


def test_the_eos_circuit_id_is_hostname_and_interface_as_each_kea_class_tests() -> None:
    tests = _kea_tests(EOS_CASE)
    seen = 0
    for switch, text in _oob_files(EOS_CASE).items():
        hostname = re.findall(r"^hostname (\S+)$", text, re.MULTILINE)
        assert hostname == [switch]
        assert "ip dhcp snooping information option circuit-id type 0 format %h:%p\n" in text
        ports = re.findall(r"^interface (Ethernet\d+)\n   description .*\n   switchport access vlan 100$", text, re.MULTILINE)
        assert {tests[f"{switch}-{p}"] for p in ports} == {f"relay4[1].hex == '{switch}:{p}'" for p in ports}
        seen += len(ports)
    assert seen == len(tests) == 10  # 4 BMCs, 2 spines, 2 leaves, the storage pair


NXOS_CASE = "render/nxos"


@pytest.mark.parametrize("release", NOS_RELEASES["nxos"].supported)
def test_every_nxos_oob_line_matches_a_cited_form(release: str) -> None:
    all_facts = [f for f in build_oob_facts(plan_of(NXOS_CASE)) if f.switch.nos == "nxos"]
    assert all_facts
    for facts in all_facts:
        again = dataclasses.replace(facts, switch=dataclasses.replace(facts.switch, nos_version=release))
        text = render_oob_switch(again)["running-config"]
        assert f"for NX-OS {release}" in text
        assert unknown_commands("nxos", release, text) == [], facts.switch.name


def test_nxos_oob_ports_uplinks_and_vty_acl() -> None:
    text = _oob_files(NXOS_CASE)["oob-mgmt"]
    access = "  switchport\n  switchport mode access\n  switchport access vlan 100\n"
    access += "  spanning-tree port type edge\n  spanning-tree bpduguard enable\n"
    assert "interface Ethernet1/3\n  description leaf01 mgmt0\n" + access in text
    assert "interface Ethernet1/49\n  description uplink to oob-core\n  channel-group 1 mode active\n" in text
    trunk = "  switchport\n  switchport mode trunk\n  switchport trunk allowed vlan 100\n"
    assert "interface port-channel1\n  description uplinks to oob-core\n" + trunk in text
    assert "ip access-list MGMT-SSH\n  10 permit tcp 10.103.0.0/16 any eq 22\n" in text
    assert "line vty\n  access-class MGMT-SSH in\n" in text
    assert "dhcp" not in text  # no relay on NX-OS (option 82 in binary ifindex format); the plan refuses dhcp_servers there
    assert _kea_tests(NXOS_CASE) == {}  # so Kea keys no port of it


def test_an_nxos_oob_network_with_dhcp_servers_is_refused(tmp_path: Path) -> None:
    text = definition(NXOS_CASE).read_text(encoding="utf-8").replace("core: oob-core}", "core: oob-core, dhcp_servers: [10.103.0.10]}")
    path = tmp_path / "cluster.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        plan_cluster(load_cluster(path))
    assert [(f.path, f.message.split(" (")[0]) for f in caught.value.findings] == [
        (("planes", "oob", "network", "dhcp_servers"), "an NX-OS relay puts option 82 in a binary ifindex format by default")
    ]
