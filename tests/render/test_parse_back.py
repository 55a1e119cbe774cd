"""Rendered configs parse back with real tools and carry the contract's values where each NOS keeps them."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hier_config import Platform, get_hconfig
from hier_config.child import HConfigChild
from hier_config.root import HConfig

from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.render import render_configs
from tests.render.conftest import CASES, definition, files_of, plan_of

FRR_FILES = [(case, path) for case in CASES for path in files_of(case) if path.endswith("frr.conf")]


def children(node: HConfig | HConfigChild, prefix: str) -> list[HConfigChild]:
    return [c for c in node.children if c.text.startswith(prefix)]


def only(node: HConfig | HConfigChild, text: str) -> HConfigChild:
    (found,) = [c for c in node.children if c.text == text]
    return found


def texts(node: HConfigChild) -> set[str]:
    return {c.text for c in node.children}


def cabling(case: str) -> dict[tuple[str, str], str]:
    rows = csv.DictReader(io.StringIO(files_of(case)["cabling.csv"]))
    peers: dict[tuple[str, str], str] = {}
    for row in rows:
        peers[row["device"], row["port"]] = f"{row['peer_device']}:{row['peer_port']}"
        peers[row["peer_device"], row["peer_port"]] = f"{row['device']}:{row['port']}"
    return peers


@pytest.mark.parametrize(("case", "path"), FRR_FILES, ids=[f"{c}:{p}" for c, p in FRR_FILES])
def test_frr_accepts_the_config(case: str, path: str, tmp_path: Path) -> None:
    vtysh = shutil.which("vtysh")
    assert vtysh, "FRR is missing: ./dev installs the frr package (run it as root)"
    conf = tmp_path / "frr.conf"
    conf.write_text(files_of(case)[path], encoding="utf-8")
    result = subprocess.run([vtysh, "--dryrun", "-f", str(conf)], capture_output=True, text=True, timeout=30, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert complaints(result) == [], "vtysh --dryrun complained (its exit status alone misses an unknown top-level command)"


def complaints(result: subprocess.CompletedProcess[str]) -> list[str]:
    """``vtysh --dryrun``'s ``%`` lines: FRR 8.4.4 exits 0 after an unknown top-level command, so its exit status alone
    does not prove a file clean."""
    return [line for line in (result.stdout + result.stderr).splitlines() if "% " in line]


def test_frr_dry_run_names_an_unknown_top_level_command_it_exits_0_on(tmp_path: Path) -> None:
    vtysh = shutil.which("vtysh")
    assert vtysh
    conf = tmp_path / "frr.conf"
    conf.write_text(files_of("lab")["switches/leaf01/frr.conf"] + "frobnicate the fabric\n", encoding="utf-8")
    result = subprocess.run([vtysh, "--dryrun", "-f", str(conf)], capture_output=True, text=True, timeout=30, check=False)
    assert complaints(result), result.stdout + result.stderr


def test_frr_dry_run_catches_a_broken_line(tmp_path: Path) -> None:
    vtysh = shutil.which("vtysh")
    assert vtysh
    conf = tmp_path / "frr.conf"
    conf.write_text(files_of("lab")["switches/leaf01/frr.conf"].replace("maximum-paths", "maximum-pathz"), encoding="utf-8")
    result = subprocess.run([vtysh, "--dryrun", "-f", str(conf)], capture_output=True, text=True, timeout=30, check=False)
    assert result.returncode != 0
    assert "maximum-pathz" in result.stdout + result.stderr


def test_eos_hierarchy_carries_the_contract_and_the_cabling() -> None:
    plan, peers = plan_of("render/eos"), cabling("render/eos")
    assert plan.fabric is not None
    compute = {s.name for s in plan.fabric.switches}
    checked: set[str] = set()
    for path, text in files_of("render/eos").items():
        switch = path.split("/")[1] if path.startswith("switches/") else ""
        if not path.endswith("startup-config") or switch not in compute:
            continue  # the OOB and storage switches carry no RoCE contract; their own tests check them
        checked.add(switch)
        config = get_hconfig(Platform.ARISTA_EOS, text)
        profile = only(config, "qos profile ROCE")
        assert {
            "qos trust dscp",
            "priority-flow-control on",
            "priority-flow-control priority 3 no-drop",
            "priority-flow-control pause watchdog",
        } <= texts(profile)
        assert texts(only(profile, "uc-tx-queue 3")) == {
            "bandwidth guaranteed percent 50",
            "random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 100 weight 0",
        }
        assert texts(only(profile, "uc-tx-queue 6")) == {"priority strict"}
        assert only(config, "qos map dscp 26 to traffic-class 3")
        for port in children(config, "interface Ethernet"):
            name = port.text.removeprefix("interface ")
            assert {"mtu 9214", "service-profile ROCE", f"description {peers[switch, name]}"} <= texts(port), port.text
        switch_plan = next(s for s in plan.fabric.switches if s.name == switch) if plan.fabric else None
        assert switch_plan is not None
        bgp = only(config, f"router bgp {switch_plan.asn}")
        assert len([c for c in bgp.children if c.text.endswith("peer group FABRIC") and c.text != "neighbor FABRIC peer group"]) == 2
    assert checked == compute


def nxos_compute_configs() -> dict[str, str]:
    """render/nxos's compute switches' running-configs (its OOB switch carries no RoCE contract; test_oob_switches checks it)."""
    plan = plan_of("render/nxos")
    assert plan.fabric is not None
    files = files_of("render/nxos")
    configs = {s.name: files[f"switches/{s.name}/running-config"] for s in plan.fabric.switches}
    assert len(configs) == len(plan.fabric.switches) > 0
    return configs


def test_nxos_hierarchy_carries_the_contract() -> None:
    for text in nxos_compute_configs().values():
        config = get_hconfig(Platform.CISCO_NXOS, text)
        assert texts(only(config, "class-map type qos match-all ROCE")) == {"match dscp 26"}
        assert texts(only(config, "class-map type qos match-all CNP")) == {"match dscp 48"}
        network = only(only(config, "policy-map type network-qos QOS_NETWORK"), "class type network-qos c-8q-nq3")
        assert {"pause pfc-cos 3", "mtu 9216"} <= texts(network)
        queuing = only(config, "policy-map type queuing QOS_EGRESS")
        assert "priority level 1" in texts(only(queuing, "class type queuing c-out-8q-q6"))
        assert any(t.endswith("weight 0 ecn") for t in texts(only(queuing, "class type queuing c-out-8q-q3")))
        for port in children(config, "interface Ethernet"):
            assert {"priority-flow-control mode on", "service-policy type qos input QOS_CLASSIFY", "mtu 9216"} <= texts(port), port.text


def test_sonic_config_db_has_the_shape_sonic_expects_and_the_contract() -> None:
    for path, text in files_of("render/sonic").items():
        if not path.endswith("config_db.json"):
            continue
        db = json.loads(text)
        assert set(db["DSCP_TO_TC_MAP"]["ROCE"]) == {str(d) for d in range(64)}
        assert db["DSCP_TO_TC_MAP"]["ROCE"]["26"] == "3", "SONiC's default map would put DSCP 26 in lossy TC 1"
        assert db["DSCP_TO_TC_MAP"]["ROCE"]["48"] == "6"
        ports = {name for name, port in db["PORT"].items() if port["admin_status"] == "up"}
        assert len(db["PORT"]) == 128, "every port of Mellanox-SN4700-C128 (32 cages x 4)"
        assert set(db["PORT_QOS_MAP"]) == ports
        assert {q["pfc_enable"] for q in db["PORT_QOS_MAP"].values()} == {"3"}
        assert {q["pfcwd_sw_enable"] for q in db["PORT_QOS_MAP"].values()} == {"3"}
        assert {db["PORT"][p]["mtu"] for p in ports} == {"9216"}
        assert db["WRED_PROFILE"]["ROCE_LOSSLESS"]["green_min_threshold"] == "150000"
        assert db["SCHEDULER"]["scheduler.cnp"] == {"type": "STRICT"}
        assert all(db["QUEUE"][f"{p}|3"]["wred_profile"] == "ROCE_LOSSLESS" for p in ports)
        assert all(db["BUFFER_PG"][f"{p}|3"] == {"profile": "NULL"} for p in ports), "dynamic model: the switch sizes lossless headroom"
        assert all(db["BUFFER_QUEUE"][f"{p}|3"] == {"profile": "egress_lossless_profile"} for p in ports)
        assert set(db["PFC_WD"]) == {"GLOBAL", *ports}
        metadata = db["DEVICE_METADATA"]["localhost"]
        assert (metadata["docker_routing_config_mode"], metadata["buffer_model"]) == ("split-unified", "dynamic")
        assert (metadata["hwsku"], metadata["platform"]) == ("Mellanox-SN4700-C128", "x86_64-mlnx_msn4700-r0")


def test_nvue_is_only_nv_set_commands_with_the_roce_contract() -> None:
    for path, text in files_of("render/cumulus").items():
        if not path.endswith("nvue.sh"):
            continue
        lines = [line for line in text.splitlines() if line and not line.startswith("#")]
        assert all(line.startswith("nv set ") for line in lines)
        for expected in (
            "nv set qos roce mode lossless",
            "nv set qos mapping default-global dscp 26 switch-priority 3",
            "nv set qos pfc default-global switch-priority 3",
            "nv set qos mapping default-global trust l3",
            "nv set qos congestion-control default-global traffic-class 3 min-threshold 150000",
            "nv set qos congestion-control default-global traffic-class 3 max-threshold 1500000",
            "nv set qos congestion-control default-global traffic-class 3 probability 100",
            "nv set qos egress-scheduler default-global traffic-class 6 mode strict",
        ):
            assert expected in lines, expected


def test_nxos_bfd_ports_drop_redirects_unnumbered_gets_its_tcam_carve_and_the_watchdog_its_timers() -> None:
    for text in nxos_compute_configs().values():
        config = get_hconfig(Platform.CISCO_NXOS, text)
        top = {c.text for c in config.children}
        assert "hardware access-list tcam region ing-sup 768" in top, "unnumbered BGP needs the ing-sup carve (and a reload)"
        # detection 200 ms and restoration 200 ms at a 100 ms polling interval
        assert {
            "priority-flow-control watch-dog interval 100",
            "priority-flow-control watch-dog shutdown-multiplier 2",
            "priority-flow-control auto-restore multiplier 2",
        } <= top
        fabric_ports = [p for p in children(config, "interface Ethernet") if any(t.startswith("bfd interval") for t in texts(p))]
        assert fabric_ports
        for port in fabric_ports:
            assert {"no ip redirects", "no ipv6 redirects", "ipv6 link-local use-bia"} <= texts(port), port.text


def test_mlnxos_switch_sm_names_quantum2_ports_its_priority_and_partition_members() -> None:
    spine = files_of("render/mlnxos")["switches/spine01/running-config"].splitlines()
    leaf = files_of("render/mlnxos")["switches/leaf-su01-r1/running-config"].splitlines()
    assert all(re.fullmatch(r"interface ib 1/\d+/[12] description \S+", line) for line in spine if line.startswith("interface ib"))
    assert "ib sm sm-priority 15" in spine
    assert "ib sm sm-priority 14" in leaf
    assert [line for line in spine if line.startswith("ib partition")] == [
        "ib partition tenant_a pkey 0x0002",
        # not `member 0x<guid> type full`: "% Invalid port GUID" in a field log (MLNX-OS 3.6); NVIDIA WinOF-2 docs' form
        "ib partition tenant_a member all type full",
    ]
    assert not [line for line in spine if re.search(r"member (0x)?[0-9a-f]{4}", line)]
    other = files_of("render/mlnxos")["switches/leaf-su01-r2/running-config"].splitlines()
    assert "no ib sm" in other
    assert not [line for line in other if line.startswith("ib partition")], "partitions belong to switches that run the SM"


@pytest.mark.parametrize(("action", "line"), [("drop", "port action drop"), ("alert", "port action notify-only")])
def test_eos_watchdog_actions_stay_apart(action: str, line: str) -> None:
    spec = load_cluster(definition("render/eos"))
    roce = spec.roce.model_copy(update={"pfc_watchdog": spec.roce.pfc_watchdog.model_copy(update={"action": action})})
    text = render_configs(plan_cluster(spec.model_copy(update={"roce": roce})))["switches/leaf01/startup-config"]
    profile = only(get_hconfig(Platform.ARISTA_EOS, text), "qos profile ROCE")
    assert [t for t in texts(profile) if "port action" in t] == [f"priority-flow-control pause watchdog {line}"]
