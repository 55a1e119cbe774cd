"""Load-balancing intent (fabric.load_balancing): Cumulus renders ECMP hash and Spectrum-4 adaptive routing, every line on
NVIDIA's NVUE schema of its release; SONiC renders the generic hash (SWITCH_HASH), valid on the YANG of its release; other
NOSes and ASICs refuse it with the reason; NCCL exports the queue pairs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from pyavd import get_device_config

from fabric.catalog.releases import NOS_RELEASES
from fabric.errors import InputError
from fabric.export.nccl import export_nccl
from fabric.lint.forms import unknown_commands
from fabric.lint.nvue_schema import available
from fabric.lint.rules import lint_configs, schema_findings
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.plan.types import ClusterPlan
from fabric.render import render_avd_configs, render_configs
from tests.conftest import DATA, ROOT
from tests.render.sonic_yang import check_config_db
from tests.render.test_avd_reference import avd_rendering, compare

FIVE = ["source-ip", "destination-ip", "ip-protocol", "source-port", "destination-port"]


def _plan(tmp_path: Path, source: Path, lb: dict[str, Any], **tiers: dict[str, Any]) -> ClusterPlan:
    data = yaml.safe_load(source.read_text())
    data["fabric"]["load_balancing"] = lb
    for tier, fields in tiers.items():
        data["fabric"][tier].update(fields)
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(data))
    return plan_cluster(load_cluster(path))


RELEASES = [("5.9", "on", "off", "enable on"), ("5.14", "on", "off", "enable on"), ("5.15", "enabled", "disabled", "state enabled")]


@pytest.mark.parametrize(("release", "on", "off", "ar"), RELEASES)
def test_cumulus_renders_hash_and_adaptive_routing_the_schema_accepts(tmp_path: Path, release: str, on: str, off: str, ar: str) -> None:
    tier = {"model": "sn5600", "nos": "cumulus", "nos_version": release}
    lb = {"ecmp_hash": ["source-ip", "destination-ip", "source-port"], "adaptive_routing": True}
    plan = _plan(tmp_path, DATA / "render" / "cumulus" / "cluster.yaml", lb, leaf=tier, spine=tier)
    text = render_configs(plan)["switches/leaf01/nvue.sh"]
    lines = text.splitlines()
    hashed = [line for line in lines if "ecmp-hash" in line]
    assert hashed == [f"nv set system forwarding ecmp-hash {f} {on if f in lb['ecmp_hash'] else off}" for f in FIVE]
    assert f"nv set router adaptive-routing {ar}" in lines
    fabric_ports = [p for p in plan.fabric.links if p.kind == "fabric" and p.a_device == "leaf01"] if plan.fabric else []
    assert fabric_ports
    assert [line for line in lines if line.endswith(f"router adaptive-routing {ar}") and "interface" in line] == [
        f"nv set interface {link.a_port} router adaptive-routing {ar}" for link in fabric_ports
    ]
    if available():  # NVIDIA's NVUE OpenAPI schema of the release (requirements-dev.txt: nvueschema)
        assert schema_findings("leaf01", "cumulus", release, text) == []


def test_nothing_is_rendered_or_exported_without_intent() -> None:
    plan = plan_cluster(load_cluster(DATA / "render" / "cumulus" / "cluster.yaml"))
    assert "ecmp-hash" not in render_configs(plan)["switches/leaf01/nvue.sh"]
    assert "adaptive-routing" not in render_configs(plan)["switches/leaf01/nvue.sh"]


@pytest.mark.parametrize(
    ("case", "lb", "tier", "reason"),
    [
        ("cumulus", {"adaptive_routing": True}, {}, "sn4600c (NVIDIA Spectrum-3 SN4600C, 64 x 100GbE QSFP28) is not Spectrum-4"),
        ("cumulus", {"ecmp_hash": ["source-port", "bth-destination-qp"]}, {}, "NVUE's `system forwarding ecmp-hash` has no BTH"),
        ("eos", {"ecmp_hash": FIVE}, {}, "pyavd 6.4's eos_cli_config_gen schema has no key for the ECMP hash fields"),
        ("nxos", {"ecmp_hash": ["source-ip", "source-port"]}, {}, "NX-OS `ip load-sharing address` hashes on one of"),
        ("nxos", {"ecmp_hash": [*FIVE, "bth-destination-qp"]}, {}, "NX-OS `ip load-sharing address` has no BTH"),
        ("sonic", {"adaptive_routing": True}, {}, "community SONiC 202405/202411 carry no adaptive-routing table"),
        ("sonic", {"ecmp_hash": ["source-port", "bth-destination-qp"]}, {}, "sonic-hash.yang's hash-field"),
    ],
)
def test_a_nos_without_the_feature_refuses_it_with_the_reason(
    tmp_path: Path, case: str, lb: dict[str, Any], tier: dict[str, Any], reason: str
) -> None:
    with pytest.raises(InputError) as raised:
        _plan(tmp_path, DATA / "render" / case / "cluster.yaml", lb, leaf=tier)
    messages = [f.message for f in raised.value.findings]
    assert any(reason in m and m.startswith("leaf (") for m in messages), messages
    assert all(f.dotted_path.startswith("fabric.load_balancing.") for f in raised.value.findings)


def test_nccl_exports_the_queue_pairs_and_adaptive_routing(tmp_path: Path) -> None:
    lb = {"nccl_qps_per_connection": 4, "nccl_split_data_on_qps": False, "adaptive_routing": True}
    tier = {"model": "sn5600", "nos": "cumulus"}
    plan = _plan(tmp_path, ROOT / "inventories" / "onprem-roce" / "cluster.yaml", lb, leaf=tier, spine=tier)
    env = export_nccl(plan)["nccl/gpu.env"].splitlines()
    assert {"NCCL_IB_QPS_PER_CONNECTION=4", "NCCL_IB_SPLIT_DATA_ON_QPS=0", "NCCL_IB_ADAPTIVE_ROUTING=1"} <= set(env)
    plain = export_nccl(plan_cluster(load_cluster(ROOT / "inventories" / "onprem-roce" / "cluster.yaml")))["nccl/gpu.env"]
    assert "QPS_PER_CONNECTION" not in plain
    assert "ADAPTIVE_ROUTING" not in plain


@pytest.mark.parametrize(("case", "release"), [("sonic", "202411"), ("sonic-202405", "202405")])
def test_sonic_renders_the_generic_hash_the_yang_of_its_release_accepts(tmp_path: Path, case: str, release: str) -> None:
    lb = {"ecmp_hash": ["source-ip", "destination-ip", "ip-protocol", "source-port", "destination-port"]}
    plan = _plan(tmp_path, DATA / "render" / case / "cluster.yaml", lb)
    assert plan.fabric is not None
    assert {s.nos_version for s in plan.fabric.switches} == {release}
    for switch in plan.fabric.switches:
        db = json.loads(render_configs(plan)[f"switches/{switch.name}/config_db.json"])
        assert db["SWITCH_HASH"] == {"GLOBAL": {"ecmp_hash": ["SRC_IP", "DST_IP", "IP_PROTOCOL", "L4_SRC_PORT", "L4_DST_PORT"]}}
        assert [str(p) for p in check_config_db(db, release=release)] == []
        # negative control: the model is loaded and reads the field's values (a name outside hash-field is refused)
        db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"] = ["SRC_IP", "BTH_DST_QP"]
        assert any('Invalid enumeration value "BTH_DST_QP"' in str(p) for p in check_config_db(db, release=release))


def test_sonic_without_intent_has_no_hash_table() -> None:
    db = json.loads(render_configs(plan_cluster(load_cluster(DATA / "render" / "sonic" / "cluster.yaml")))["switches/leaf01/config_db.json"])
    assert "SWITCH_HASH" not in db


DLB = "ip hardware fib load-balance distribution dynamic"


@pytest.mark.parametrize("case", ["eos", "eos-unnumbered"])
def test_eos_renders_dlb_as_pyavd_does(tmp_path: Path, case: str) -> None:
    plan = _plan(tmp_path, DATA / "render" / case / "cluster.yaml", {"adaptive_routing": True})
    files = render_configs(plan)
    assert plan.fabric is not None
    for switch in plan.fabric.switches:
        text = files[f"switches/{switch.name}/startup-config"]
        assert DLB in text.splitlines()
        # pyavd validates the structured config (avd_rendering asserts no violations) and renders the same commands
        assert compare(text, avd_rendering(f"render/{case}", switch.name, plan)) == [], switch.name
    structured = yaml.safe_load(render_avd_configs(plan)["structured_configs/leaf01.yml"])
    assert structured["ip_hardware"] == {"fib": {"load_balance_distribution": {"dynamic": {"enabled": True}}}}
    # negative control: the same line without the structured key is named as a difference
    del structured["ip_hardware"]
    text = files["switches/leaf01/startup-config"]
    assert f"only in our EOS text: {DLB}" in compare(text, get_device_config(structured))


def test_eos_without_intent_has_no_dlb() -> None:
    plan = plan_cluster(load_cluster(DATA / "render" / "eos" / "cluster.yaml"))
    assert DLB not in render_configs(plan)["switches/leaf01/startup-config"]
    assert "ip_hardware" not in render_avd_configs(plan)["structured_configs/leaf01.yml"]


# The syntax Cisco quotes (Nexus 9000 Interfaces Configuration Guide 10.3(x), "Configuring ECMP Load Balancing"), options
# this project renders: ip load-sharing address {destination port destination | source-destination [port source-destination]}
NXOS_SYNTAX = r"ip load-sharing address (destination port destination|source-destination( port source-destination)?)"


@pytest.mark.parametrize(
    ("fields", "line"),
    [
        (FIVE, "ip load-sharing address source-destination port source-destination"),
        (["source-ip", "destination-ip"], "ip load-sharing address source-destination"),
        (["destination-ip", "destination-port"], "ip load-sharing address destination port destination"),
    ],
)
@pytest.mark.parametrize("release", NOS_RELEASES["nxos"].supported)
def test_nxos_renders_ip_load_sharing_in_the_quoted_shape(tmp_path: Path, fields: list[str], line: str, release: str) -> None:
    tier = {"nos_version": release}
    plan = _plan(tmp_path, DATA / "render" / "nxos" / "cluster.yaml", {"ecmp_hash": fields}, leaf=tier, spine=tier)
    text = render_configs(plan)["switches/leaf01/running-config"]
    found = [x for x in text.splitlines() if x.startswith("ip load-sharing")]
    assert found == [line]
    assert re.fullmatch(NXOS_SYNTAX, line)
    assert unknown_commands("nxos", release, text) == []  # the whole config, the new line included, matches cited forms
    # negative control: a misspelled option is an unknown command
    assert unknown_commands("nxos", release, text.replace(line, line.replace("address", "addresses"))) != []


def test_nxos_without_intent_has_no_load_sharing_line() -> None:
    text = render_configs(plan_cluster(load_cluster(DATA / "render" / "nxos" / "cluster.yaml")))["switches/leaf01/running-config"]
    assert "ip load-sharing" not in text


SN5600 = {"model": "sn5600"}
CONFIG_FILE = {"cumulus": "nvue.sh", "sonic": "config_db.json", "eos": "startup-config", "nxos": "running-config"}
LINT_CASES = [
    *(("cumulus", {"ecmp_hash": FIVE[:3], "adaptive_routing": True}, SN5600 | {"nos_version": r}) for r in NOS_RELEASES["cumulus"].supported),
    *(("nxos", {"ecmp_hash": FIVE}, {"nos_version": r}) for r in NOS_RELEASES["nxos"].supported),
    ("sonic", {"ecmp_hash": FIVE}, {}),
    ("eos", {"adaptive_routing": True}, {}),
]


@pytest.mark.parametrize(("case", "lb", "tier"), LINT_CASES, ids=[f"{c}-{t.get('nos_version', '')}" for c, _, t in LINT_CASES])
def test_lint_accepts_what_the_intent_renders(tmp_path: Path, case: str, lb: dict[str, Any], tier: dict[str, Any]) -> None:
    plan = _plan(tmp_path, DATA / "render" / case / "cluster.yaml", lb, leaf=tier, spine=tier)
    files = render_configs(plan)
    assert plan.fabric is not None
    configs = {s.name: files[f"switches/{s.name}/{CONFIG_FILE[case]}"] for s in plan.fabric.switches}
    assert [str(f) for f in lint_configs(plan, configs)] == []
    if case == "cumulus":  # negative control: a misspelled hash line is an unknown command
        broken = {n: t.replace("forwarding ecmp-hash", "forwarding ecmp-hsh") for n, t in configs.items()}
        assert any("ecmp-hsh" in str(f) for f in lint_configs(plan, broken))


def test_an_empty_hash_field_list_is_a_definition_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as raised:
        _plan(tmp_path, DATA / "render" / "sonic" / "cluster.yaml", {"ecmp_hash": []})
    assert any(f.dotted_path == "fabric.load_balancing.ecmp_hash" for f in raised.value.findings), raised.value.findings
