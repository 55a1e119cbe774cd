"""Ownership: a push changes only what gpufabric renders and removes only what its previous push had (no device here)."""

from __future__ import annotations

import json
import shlex

import pytest
import yaml
from hier_config import Platform

from fabric.apply.diff import platform_remediation
from fabric.apply.nos import ADAPTERS
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.render import render_configs
from tests.conftest import ROOT

TRANSCRIPTS = ROOT / "tests" / "data" / "transcripts"
FRR = ADAPTERS["frr"]


def rendered(case: str, switch: str) -> dict[str, str]:
    files = render_configs(plan_cluster(load_cluster(ROOT / case)))
    return {k.split("/")[-1]: v for k, v in files.items() if k.startswith(f"switches/{switch}/")}


def test_frr_a_hand_added_static_route_and_prefix_list_survive_but_a_stale_entry_of_our_list_goes() -> None:
    candidate = rendered("inventories/lab/cluster.yaml", "leaf01")["frr.conf"]
    running = (
        candidate
        + "ip route 10.99.0.0/24 Null0\nip prefix-list HAND seq 5 permit 10.99.0.0/24\n"
        + "ip prefix-list FABRIC-OUT seq 30 permit 10.99.0.0/16\nlog file /var/log/frr/frr.log\n"
    )
    assert FRR.diff(running, candidate) == ["no ip prefix-list FABRIC-OUT seq 30 permit 10.99.0.0/16"]


def test_frr_a_leaf_taken_out_removes_its_neighbor_whole_and_empties_its_port() -> None:
    spine3 = rendered("inventories/lab/cluster.yaml", "spine01")["frr.conf"]
    with_leaf3 = spine3.replace(
        " neighbor swp2 description leaf02\n",
        " neighbor swp2 description leaf02\n neighbor swp3 interface peer-group FABRIC\n neighbor swp3 description leaf03\n",
    ).replace("interface lo\n", "interface swp3\n description leaf03:swp3\nexit\n!\ninterface lo\n")
    running = with_leaf3 + "interface swp9\n description spare, hand-made\nexit\n"
    diff = FRR.diff(running, spine3, previous=with_leaf3)
    assert diff == ["interface swp3", "  no description", "  exit", "router bgp 65100", "  no neighbor swp3", "  exit"]
    assert FRR.diff(running, spine3) == [], "without the previous push, swp3 is not known to be ours: untouched"


@pytest.mark.parametrize(("name", "platform"), [("eos-commit", Platform.ARISTA_EOS), ("nxos-postcheck-rollback", Platform.CISCO_NXOS)])
def test_a_whole_config_remediation_would_have_removed_users_aaa_and_snmp(name: str, platform: Platform) -> None:
    """The negative control of the transcripts' untouchable check: without ownership the diff locks the operator out."""
    script = yaml.safe_load((TRANSCRIPTS / f"{name}.yaml").read_text(encoding="utf-8"))
    running = script["steps"][0]["reply"]
    whole = platform_remediation(running, script["candidate"], platform)
    assert any(line.startswith("no username") for line in whole)
    assert any("snmp-server" in line for line in whole)
    owned = ADAPTERS[script["nos"]].diff(running, script["candidate"])
    assert not [line for line in owned for word in script["untouchable"] if word.lower() in line.lower()]


def test_sonic_the_rendered_leaf_on_a_production_sn5600_patches_only_owned_fields() -> None:
    script = yaml.safe_load((TRANSCRIPTS / "sonic-commit.yaml").read_text(encoding="utf-8"))
    running_db = json.loads(script["steps"][0]["reply"])
    sonic = ADAPTERS["sonic"]
    running = sonic.candidate({"config_db.json": json.dumps(running_db), "frr.conf": ""})
    candidate = sonic.candidate(rendered("tests/data/render/sonic/cluster.yaml", "leaf01"))
    ops = [json.loads(line) for line in sonic.diff(running, candidate) if line.startswith("{")]
    assert ops, "the rendered leaf differs from the switch's config"
    assert {op["op"] for op in ops} <= {"add", "replace"}, "nothing is removed on a first push"
    paths = [op["path"] for op in ops]
    for field in ("/lanes", "/alias", "/index", "/mac", "/platform", "/fec"):  # speed and mtu are rendered: owned
        assert not [p for p in paths if p.endswith(field)], field
    assert not [p for p in paths if p.startswith(("/BUFFER_POOL", "/SNMP", "/TACPLUS", "/AAA", "/FEATURE", "/PORT/Ethernet504"))]
    assert not [op for op in ops if op["path"] in {"/PORT", "/DEVICE_METADATA", "/BUFFER_PROFILE"}], "a table is never replaced whole"


def test_cumulus_commands_are_quoted_for_the_shell_and_users_are_never_unset() -> None:
    cumulus = ADAPTERS["cumulus"]
    candidate = "nv set interface swp1 description 'to spine01; rm -rf / \"a\"'\n"
    running = "nv set system aaa user cumulus role system-admin\nnv set interface swp1 description old\n"
    (line,) = cumulus.diff(running, candidate)
    assert shlex.split(line) == ["nv", "set", "interface", "swp1", "description", 'to spine01; rm -rf / "a"']
    assert cumulus.diff(running, "", previous=candidate) == ["nv unset interface swp1 description"]
