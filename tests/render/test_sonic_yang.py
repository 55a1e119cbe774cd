"""Every rendered SONiC config_db is valid against SONiC's own YANG models (libyang), and the checker catches breakage.

The models are sonic-buildimage's ``src/sonic-yang-models`` (``tests/data/sonic-yang/SOURCE``); the checker is
``tests/render/sonic_yang.py``. Beyond YANG, the port layout is compared with rows of the SKUs' port_config.ini.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.render.conftest import CASES, files_of, plan_of
from tests.render.sonic_yang import check_config_db


def _runs_sonic(case: str) -> bool:
    fabric = plan_of(case).fabric
    return fabric is not None and any(s.nos == "sonic" for s in fabric.switches)


SONIC_CASES = [c for c in CASES if _runs_sonic(c)]


def config_dbs(case: str) -> dict[str, dict[str, Any]]:
    return {path.split("/")[1]: json.loads(text) for path, text in files_of(case).items() if path.endswith("config_db.json")}


def test_the_examples_and_golden_cases_include_sonic() -> None:
    assert {"onprem-roce", "render/sonic", "render/sonic-202405"} <= set(SONIC_CASES)


def test_the_release_picks_the_lossless_traffic_pattern_of_its_branch() -> None:
    # files/build_templates/buffers_config.j2: small_packet_percentage "100" on 202405, "50" on 202411
    for case, percent in (("render/sonic-202405", "100"), ("render/sonic", "50")):
        assert config_dbs(case)["leaf01"]["LOSSLESS_TRAFFIC_PATTERN"] == {"AZURE": {"mtu": "1024", "small_packet_percentage": percent}}


def releases(case: str) -> dict[str, str]:
    """Each SONiC switch's release, as its tier declares it (``nos_version`` or the default)."""
    fabric = plan_of(case).fabric
    assert fabric is not None
    return {s.name: s.nos_version for s in fabric.switches if s.nos == "sonic"}


@pytest.mark.parametrize("case", SONIC_CASES)
def test_every_config_db_passes_the_yang_of_the_release_it_claims(case: str) -> None:
    claimed = releases(case)
    found = {switch: [str(p) for p in check_config_db(db, release=claimed[switch])] for switch, db in config_dbs(case).items()}
    assert found
    assert {s: p for s, p in found.items() if p} == {}


def test_both_claimed_releases_are_checked() -> None:
    assert {r for case in SONIC_CASES for r in releases(case).values()} == {"202405", "202411"}


def test_a_release_with_no_vendored_models_is_an_error_not_a_fallback() -> None:
    with pytest.raises(ValueError, match=r"no SONiC YANG models vendored for release '202511'"):
        check_config_db(_leaf01(), release="202511")


@pytest.mark.parametrize(
    ("release", "table", "entry"),
    [
        # neither branch has sonic-static-anycast-gateway.yang (master got it 2026-06-22, buildimage#27543)
        ("202405", "SAG", {"GLOBAL": {"gateway_mac": "00:00:5e:00:01:01"}}),
        ("202411", "SAG", {"GLOBAL": {"gateway_mac": "00:00:5e:00:01:01"}}),
        # 202405 has no sonic-tc-dscp-map.yang
        ("202405", "TC_TO_DSCP_MAP", {"AZURE": {"3": "26"}}),
    ],
)
def test_a_table_the_branch_lacks_is_refused(release: str, table: str, entry: dict[str, Any]) -> None:
    db = {**_leaf01(), table: entry}
    expected = f"{table}: (entry): no YANG model has this table on SONiC {release}; SONiC refuses it"
    assert [str(p) for p in check_config_db(db, release=release)] == [expected]


def test_tc_to_dscp_map_is_known_on_202411() -> None:
    db = {**_leaf01(), "TC_TO_DSCP_MAP": {"AZURE": {"3": "26"}}}
    assert check_config_db(db, release="202411") == []


def _leaf01() -> dict[str, Any]:
    return config_dbs("render/sonic")["leaf01"]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda db: db["PORT"]["Ethernet0"].pop("lanes"),
            ['PORT|Ethernet0: lanes: Mandatory node "lanes" instance does not exist.'],
        ),
        (
            lambda db: db["BUFFER_PROFILE"]["q_lossy_profile"].update(pool="egress_missing_pool"),
            [
                'BUFFER_PROFILE|q_lossy_profile: pool: Invalid leafref value "egress_missing_pool" - no target instance '
                '"/bpl:sonic-buffer-pool/bpl:BUFFER_POOL/bpl:BUFFER_POOL_LIST/bpl:name" with the same value.'
            ],
        ),
        (
            lambda db: db.pop("MGMT_PORT"),
            [
                'MGMT_INTERFACE|eth0|10.103.252.129/16: name: Invalid leafref value "eth0" - no target instance '
                '"/mgmtprt:sonic-mgmt_port/mgmtprt:MGMT_PORT/mgmtprt:MGMT_PORT_LIST/mgmtprt:name" with the same value.'
            ],
        ),
        (
            lambda db: db["PORT"]["Ethernet2"].update(mtu="9300", speeed="1"),
            [
                'PORT|Ethernet2: mtu: Unsatisfied range - value "9300" is out of the allowed range.',
                "PORT|Ethernet2: speeed: no leaf 'speeed' in the YANG model of PORT",
            ],
        ),
        (
            lambda db: db.update(PORT_BREAKOUT={"Ethernet0": {}}),
            ["PORT_BREAKOUT: (entry): no YANG model has this table on SONiC 202411; SONiC refuses it"],
        ),
        (
            lambda db: db["CABLE_LENGTH"]["AZURE"].update(Ethernet999="5m"),
            [
                'CABLE_LENGTH|AZURE: Ethernet999: Invalid leafref value "Ethernet999" - no target instance '
                '"/port:sonic-port/port:PORT/port:PORT_LIST/port:name" with the same value.'
            ],
        ),
    ],
    ids=["port-without-lanes", "profile-to-missing-pool", "mgmt-interface-without-port", "bad-and-unknown-field", "unknown-table", "map-entry"],
)
def test_a_config_db_broken_on_purpose_is_named_by_table_key_and_field(edit: Any, expected: list[str]) -> None:
    db = _leaf01()
    edit(db)
    assert [str(p) for p in check_config_db(db) if "follows from" not in p.message] == expected


def test_dropping_an_entry_names_what_follows_from_it() -> None:
    db = _leaf01()
    db["BUFFER_PROFILE"]["q_lossy_profile"]["pool"] = "egress_missing_pool"
    problems = [str(p) for p in check_config_db(db)]
    assert problems[0].startswith("BUFFER_PROFILE|q_lossy_profile: pool:")
    assert all(p.endswith("(follows from BUFFER_PROFILE|q_lossy_profile, refused above)") for p in problems[1:])


@pytest.mark.parametrize(
    ("case", "switch", "port", "row"),
    [
        # device/mellanox/x86_64-mlnx_msn4700-r0/Mellanox-SN4700-C128/port_config.ini: Ethernet254 254,255 etp32d 32 100000
        ("render/sonic", "leaf01", "Ethernet254", ("254,255", "etp32d", "32", "100000")),
        # device/mellanox/x86_64-nvidia_sn5600-r0/Mellanox-SN5600-O128/port_config.ini: Ethernet4 4,5,6,7 etp1b 1 400000
        ("onprem-roce", "spine01", "Ethernet4", ("4,5,6,7", "etp1b", "1", "400000")),
        # same file, the SKU's 65th port: Ethernet512 512 etp65 65 25000
        ("onprem-roce", "spine01", "Ethernet512", ("512", "etp65", "65", "25000")),
    ],
)
def test_ports_follow_the_sku_port_config(case: str, switch: str, port: str, row: tuple[str, str, str, str]) -> None:
    entry = config_dbs(case)[switch]["PORT"][port]
    assert (entry["lanes"], entry["alias"], entry["index"], entry["speed"]) == row


def test_unused_ports_are_present_and_down_and_metadata_names_the_sku() -> None:
    db = config_dbs("onprem-roce")["spine01"]
    assert len(db["PORT"]) == 129  # Mellanox-SN5600-O128: 64 cages x 2 + Ethernet512
    cabled = {p for p, e in db["PORT"].items() if e["admin_status"] == "up"}
    assert cabled
    assert all(db["PORT"][p]["mtu"] == "9100" for p in set(db["PORT"]) - cabled)
    assert db["BREAKOUT_CFG"]["Ethernet8"] == {"brkout_mode": "2x400G[200G,100G,50G,40G,25G,10G]"}
    # portconfig.py BreakoutCfg: 'subport': "0" if total_num_ports == 1 else str(alias_id + 1)
    assert [db["PORT"][p]["subport"] for p in ("Ethernet0", "Ethernet4", "Ethernet512")] == ["1", "2", "0"]
    metadata = db["DEVICE_METADATA"]["localhost"]
    assert (metadata["hwsku"], metadata["platform"]) == ("Mellanox-SN5600-O128", "x86_64-nvidia_sn5600-r0")
    assert set(db["MGMT_PORT"]) == {k.split("|")[0] for k in db["MGMT_INTERFACE"]}


def test_frr_on_sonic_is_one_file_with_the_policy_sonic_needs() -> None:
    text = files_of("render/sonic")["switches/leaf01/frr.conf"]
    lines = text.splitlines()
    assert "frr defaults traditional" in lines
    assert " no bgp ebgp-requires-policy" in lines
    assert {"no fpm use-next-hop-groups", "fpm address 127.0.0.1", "service integrated-vtysh-config"} <= set(lines)


def test_a_port_speed_without_a_sonic_sku_is_a_render_error() -> None:
    from dataclasses import replace

    from fabric.errors import RenderError
    from fabric.plan.compute.facts import build_switch_facts
    from fabric.render.nos.sonic.compute import render_sonic

    facts = build_switch_facts(plan_of("render/sonic"))[0]
    slow = replace(facts, ports=tuple(replace(p, speed_gbps=50) for p in facts.ports))
    with pytest.raises(RenderError, match=r"spine01: SONiC on sn4700 has SKUs for \[400, 200, 100\] Gb/s ports, not for \[50\] Gb/s"):
        render_sonic(slow)
