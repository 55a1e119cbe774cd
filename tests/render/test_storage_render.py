"""Storage / in-band switch configs: every NVUE line matches a cited form in every supported release, the MLAG pair agrees."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from pyavd import get_device_config, validate_structured_config

from fabric.catalog.releases import NOS_RELEASES
from fabric.catalog.switches import SWITCH_MODELS
from fabric.lint.forms import unknown_commands
from fabric.model import ClusterSpec, load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from fabric.plan.storage.facts import StorageSwitchFacts, build_storage_facts
from fabric.render import render_configs
from fabric.render.avd.storage import build_storage_structured_config
from fabric.render.nos.cumulus.storage import render_storage_cumulus
from fabric.render.nos.eos.storage import render_storage_eos
from fabric.render.nos.nxos.storage import render_storage_nxos
from tests.conftest import DATA, ROOT, check_golden
from tests.render.sonic_yang import check_config_db
from tests.render.test_avd_reference import commands

EXAMPLES = ["onprem-roce", "onprem-ib"]
CASES = [*EXAMPLES, "storage/sonic", "storage/eos", "storage/nxos"]  # the examples run Cumulus storage switches; storage/<nos> the others


@cache
def _plan(case: str) -> ClusterPlan:
    path = ROOT / "inventories" / case / "cluster.yaml" if case in EXAMPLES else DATA / case / "cluster.yaml"
    return plan_cluster(load_cluster(path))


@cache
def _facts(example: str) -> tuple[StorageSwitchFacts, ...]:
    return build_storage_facts(_plan(example))


def _lines(text: str, word: str) -> list[str]:
    return [line for line in text.splitlines() if word in line]


@pytest.mark.parametrize("release", NOS_RELEASES["cumulus"].supported)
def test_every_storage_nvue_line_matches_a_cited_form(release: str) -> None:
    cumulus = [f for f in _facts("onprem-roce") if f.switch.nos == "cumulus"]
    assert cumulus
    for facts in cumulus:
        text = render_storage_cumulus(dataclasses.replace(facts, nos_version=release))["nvue.sh"]
        assert unknown_commands("cumulus", release, text) == [], facts.switch.name


def test_the_storage_switches_are_in_the_rendered_tree() -> None:
    files = render_configs(_plan("onprem-roce"))
    names = sorted(p.split("/")[1] for p in files if p.startswith("switches/stor-"))
    assert names == sorted(s.switch.name for s in _facts("onprem-roce"))


@pytest.mark.parametrize("case", CASES)
def test_every_storage_port_runs_the_speed_of_its_cable(case: str) -> None:
    """Issue 28: a host port runs its NIC's speed (the cable's, as cabling.csv says), not the network's; the cage keeps
    the network's breakout speed (negative control: main configured the DGX's 100G in-band port at 200G)."""
    plan = _plan(case)
    cable = {(x.a_device, x.a_port): x.speed_gbps for net in plan.storage for x in net.links}
    cable |= {(x.b_device, x.b_port): x.speed_gbps for net in plan.storage for x in net.links if x.kind in ("peerlink", "uplink")}
    slower = 0
    for f in _facts(case):
        for p in f.ports:
            assert p.speed_gbps == cable[f.switch.name, p.name], (f.switch.name, p.name)
            assert p.mode_gbps == next(n.speed_gbps for n in plan.storage if n.name == f.switch.network)
            slower += p.speed_gbps < p.mode_gbps
    assert slower, "every case cables a host NIC slower than its network"


def test_both_switches_of_a_pair_carry_the_same_bonds_with_the_same_mlag_ids() -> None:
    facts = {f.switch.name: f for f in _facts("onprem-roce")}
    for name, f in facts.items():
        peer = facts[f.switch.peer]
        assert {(b.name, b.mlag_id, b.vlan, b.trunk, len(b.members)) for b in f.bonds} == {
            (b.name, b.mlag_id, b.vlan, b.trunk, len(b.members)) for b in peer.bonds
        }, name
        assert f.mlag_mac == peer.mlag_mac


def test_a_dual_homed_host_bond_and_a_single_homed_port() -> None:
    text = render_storage_cumulus(next(f for f in _facts("onprem-roce") if f.switch.name == "stor-su1-1-a"))["nvue.sh"]
    assert _lines(text, "interface bond1 ") == [
        "nv set interface bond1 bond member swp1s0",
        "nv set interface bond1 description 'gpu001 storage'",
        "nv set interface bond1 bond mlag id 1",
        "nv set interface bond1 link mtu 9000",
        "nv set interface bond1 bridge domain br_default access 101",
    ]
    assert _lines(text, "swp1s1 ") == [
        "nv set interface swp1s1 description 'gpu001 inband'",
        "nv set interface swp1s1 link speed 100G",  # the DGX H100's 100G in-band port, on a port of a 4 x 200G cage
        "nv set interface swp1s1 link mtu 1500",
        "nv set interface swp1s1 link fec rs",  # 100G over the 2 x 50G lanes of a 4 x 200G cage's port: RS-FEC (IEEE 802.3cd)
        "nv set interface swp1s1 bridge domain br_default access 102",
    ]
    assert "nv set mlag backup 10.103.254.5 vrf mgmt" in text


def test_the_gateway_is_only_on_the_spines_in_its_vrf() -> None:
    for facts in _facts("onprem-roce"):
        text = render_storage_cumulus(facts)["nvue.sh"]
        svi = _lines(text, "vlan102 ")
        if facts.switch.role == "spine":
            assert "nv set interface vlan102 ip vrf vrf-inband" in svi
            assert "nv set interface vlan102 ip vrr address 10.102.0.1/16" in svi
        else:
            assert svi == []
        assert _lines(text, "vlan101 ") == []  # the storage plane has no gateway: it routes nowhere


GOLDEN_LOCATIONS = ("spine", "svc", "su1-1")  # one pair stands for each kind; both sides of it


def test_the_cases_cover_cumulus_and_sonic() -> None:
    assert {f.switch.nos for case in CASES for f in _facts(case)} == {"cumulus", "sonic", "eos", "nxos"}


@pytest.mark.parametrize("example", CASES)
def test_storage_switch_configs_match_golden(example: str, update_golden: bool) -> None:
    files = render_configs(_plan(example))
    kept = {f.switch.name for f in _facts(example) if f.switch.location in GOLDEN_LOCATIONS}
    assert len(kept) == 6
    for path, text in files.items():
        if path.startswith("switches/") and path.split("/")[1] in kept:
            check_golden(DATA / example / "golden" / "storage" / path.removeprefix("switches/"), text, update_golden)


def _sonic_dbs() -> dict[str, dict[str, Any]]:
    files = render_configs(_plan("storage/sonic"))
    return {f.switch.name: json.loads(files[f"switches/{f.switch.name}/config_db.json"]) for f in _facts("storage/sonic")}


@pytest.mark.parametrize("release", NOS_RELEASES["sonic"].supported)
def test_every_storage_config_db_passes_the_yang_of_each_release(release: str) -> None:
    """The storage tier on each supported SONiC release (its own ``nos_version``), every config_db against that
    branch's models: a form only one branch has would fail on the other."""
    data = yaml.safe_load((DATA / "storage" / "sonic" / "cluster.yaml").read_text(encoding="utf-8"))
    network = data["planes"]["storage"]["network"]
    for tier in ("leaf", "spine"):
        network[tier]["nos_version"] = release
    plan = plan_cluster(ClusterSpec.model_validate(data))
    facts = build_storage_facts(plan)
    assert {f.nos_version for f in facts if f.switch.nos == "sonic"} == {release}
    files = render_configs(plan)
    dbs = {f.switch.name: json.loads(files[f"switches/{f.switch.name}/config_db.json"]) for f in facts if f.switch.nos == "sonic"}
    assert len(dbs) == 6
    found = {name: [str(p) for p in check_config_db(db, release=release)] for name, db in dbs.items()}
    assert {name: problems for name, problems in found.items() if problems} == {}


def test_every_storage_config_db_passes_sonic_yang() -> None:
    claimed = {f.switch.name: f.nos_version for f in _facts("storage/sonic")}
    found = {name: [str(p) for p in check_config_db(db, release=claimed[name])] for name, db in _sonic_dbs().items()}
    assert len(found) == 6
    assert {name: problems for name, problems in found.items() if problems} == {}


@pytest.mark.parametrize(
    ("tier", "message"),
    [
        ("{model: sn5600, nos: sonic}", "needs docker-iccpd; community SONiC images are built without it"),
        ("{model: sn5600, nos: cumulus, sonic_iccpd: true}", "sonic_iccpd applies to SONiC tiers only"),
    ],
)
def test_a_sonic_storage_tier_must_declare_an_image_with_iccpd(tier: str, message: str) -> None:
    from fabric.model.storage import EthernetTierSpec

    with pytest.raises(ValueError, match=message):
        EthernetTierSpec.model_validate(yaml.safe_load(tier))
    assert EthernetTierSpec.model_validate(yaml.safe_load("{model: sn5600, nos: sonic, sonic_iccpd: true}")).sonic_iccpd


def test_sonic_storage_leaf_tables() -> None:
    db = _sonic_dbs()["stor-su1-1-a"]
    assert db["PORTCHANNEL_MEMBER"]["PortChannel1|Ethernet0"] == {}
    assert db["VLAN_MEMBER"]["Vlan101|PortChannel1"] == {"tagging_mode": "untagged"}
    assert db["VLAN_MEMBER"]["Vlan102|Ethernet2"] == {"tagging_mode": "untagged"}  # the single in-band port: an access port
    assert db["VLAN_MEMBER"]["Vlan102|PortChannel9998"] == {"tagging_mode": "tagged"}
    assert db["MCLAG_DOMAIN"] == {"1": {"source_ip": "169.254.0.4", "peer_ip": "169.254.0.5", "peer_link": "PortChannel9999"}}
    assert db["MCLAG_INTERFACE"]["1|PortChannel9998"] == {"if_type": "PortChannel"}
    spine = _sonic_dbs()["stor-spine-b"]
    # MCLAG same-IP gateway (SONiC MCLAG Enhancements HLD §2.1.9), no SAG: 202405/202411 have no SAG model and community
    # sonic-swss does not implement it (sonic-swss PRs #1974, #3167 open)
    assert spine["VLAN_INTERFACE"]["Vlan102"] == {"vrf_name": "Vrf-inband"}
    assert "SAG" not in spine
    assert "Vlan102|10.102.0.1/16" in spine["VLAN_INTERFACE"]
    assert "Vlan102|10.102.0.1/16" in _sonic_dbs()["stor-spine-a"]["VLAN_INTERFACE"]
    assert "Vlan102" not in spine.get("MCLAG_UNIQUE_IP", {})  # same-IP mode: iccpd syncs the gateway MAC


@pytest.mark.parametrize(
    ("switch", "edit", "expected"),
    [
        ("stor-su1-1-a", lambda db: db["PORTCHANNEL"].pop("PortChannel1"), "PortChannel1"),
        ("stor-su1-1-a", lambda db: db["MCLAG_DOMAIN"]["1"].update(peer_link="PortChannel77"), "peer_link"),
        ("stor-spine-a", lambda db: db["VLAN_INTERFACE"]["Vlan102"].update(vrf_name="Vrf-nowhere"), "vrf_name"),
    ],
)
def test_the_yang_check_refuses_a_broken_storage_config_db(switch: str, edit: Callable[[dict[str, Any]], object], expected: str) -> None:
    db = _sonic_dbs()[switch]
    edit(db)
    problems = [str(p) for p in check_config_db(db)]
    assert problems
    assert any(expected in p for p in problems), problems


@pytest.mark.parametrize("release", NOS_RELEASES["eos"].supported)
def test_eos_storage_text_is_what_avd_renders_from_the_structured_config(release: str) -> None:
    for original in _facts("storage/eos"):
        facts = dataclasses.replace(original, nos_version=release)
        structured = build_storage_structured_config(facts)
        violations = validate_structured_config(structured).validation_result.violations
        assert not violations, [f"{'.'.join(map(str, v.path))}: {v.message}" for v in violations]
        ours = commands(render_storage_eos(facts)["startup-config"])
        assert ours == commands(get_device_config(structured)), facts.switch.name
        assert ("interface Vlan4094", "no autostate") in ours


def test_eos_storage_pair_runs_mlag_with_varp_on_the_spines() -> None:
    text = render_storage_eos(next(f for f in _facts("storage/eos") if f.switch.name == "stor-spine-b"))["startup-config"]
    assert "   ip virtual-router address 10.102.0.1\n" in text
    assert "mlag configuration\n   domain-id spine\n   local-interface Vlan4094\n   peer-address 169.254.0.0\n   peer-link Port-Channel2000\n" in text
    leaf = render_storage_eos(next(f for f in _facts("storage/eos") if f.switch.name == "stor-su1-1-a"))["startup-config"]
    assert "interface Port-Channel1\n   description gpu001 storage\n   switchport access vlan 101\n" in leaf


def test_eos_l2_mtu_only_where_the_platform_has_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Audit E2: `l2 mtu` only on a model whose catalog entry says EOS has it there (none of the bundled ones does)."""
    facts = next(f for f in _facts("storage/eos") if f.switch.name == "stor-su1-1-a")
    assert "l2 mtu" not in render_storage_eos(facts)["startup-config"]
    assert "l2_mtu" not in json.dumps(build_storage_structured_config(facts))
    assert SWITCH_MODELS[facts.switch.model].nos["eos"].l2_mtu is False
    for module in ("fabric.render.nos.eos.storage", "fabric.render.avd.storage"):  # a model whose entry says it has the CLI
        monkeypatch.setattr(f"{module}.eos_l2_mtu", lambda _model: True)
    text = render_storage_eos(facts)["startup-config"]
    assert "interface Port-Channel1\n   description gpu001 storage\n   l2 mtu 9000\n" in text
    assert build_storage_structured_config(facts)["port_channel_interfaces"][-1]["l2_mtu"] > 0


def test_per_port_attach_renders_each_host_port_as_an_access_port(tmp_path: Path) -> None:
    text = (ROOT / "inventories" / "onprem-roce" / "cluster.yaml").read_text(encoding="utf-8")
    path = tmp_path / "cluster.yaml"
    path.write_text(text.replace("network: {converged: true,", "network: {converged: true, attach: per-port,"), encoding="utf-8")
    facts = next(f for f in build_storage_facts(plan_cluster(load_cluster(path))) if f.switch.name == "stor-su1-1-b")
    nvue = render_storage_cumulus(facts)["nvue.sh"]
    assert "nv set interface swp1s0 bridge domain br_default access 101" in nvue
    assert "bond mlag id" not in nvue.replace("interface uplink bond mlag id", "")


@pytest.mark.parametrize("release", NOS_RELEASES["nxos"].supported)
def test_every_nxos_storage_line_matches_a_cited_form(release: str) -> None:
    facts = _facts("storage/nxos")
    assert len(facts) == 6
    for original in facts:
        text = render_storage_nxos(dataclasses.replace(original, nos_version=release))["running-config"]
        assert f"for NX-OS {release}" in text
        assert unknown_commands("nxos", release, text) == [], original.switch.name


def test_nxos_storage_pair_runs_vpc_with_hsrp_on_the_spines() -> None:
    facts = {f.switch.name: f for f in _facts("storage/nxos")}
    spine = render_storage_nxos(facts["stor-spine-b"])["running-config"]
    assert "vpc domain 1\n  peer-keepalive destination 10.103.254.0 source 10.103.254.1 vrf management\n  peer-gateway\n" in spine
    assert "interface Vlan102\n  description inband gateway\n  no shutdown\n  vrf member vrf-inband\n" in spine
    assert "  hsrp 1\n    ip 10.102.0.1\n" in spine
    assert "interface port-channel2000\n" in spine
    assert "  vpc peer-link\n" in spine
    leaf = render_storage_nxos(facts["stor-su1-1-a"])["running-config"]
    assert "vpc domain 3\n" in leaf
    bond = "interface port-channel1\n  description gpu001 storage\n  switchport\n  switchport mode access\n  switchport access vlan 101\n"
    assert bond + "  mtu 9000\n  vpc 1\n" in leaf
    assert "interface Vlan" not in leaf  # the leaves route nothing: the planes meet no SVI there
    peer = render_storage_nxos(facts["stor-su1-1-b"])["running-config"]
    assert "vpc domain 3\n" in peer
    assert "  vpc 1\n" in peer
