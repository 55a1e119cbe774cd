"""Shared spines rendered (fabric.plane_spines: shared): every spine port in its leaf's plane's VRF, BGP only per VRF,
and each NOS's reference refuses the broken forms (the negative controls of the cases' vtysh and YANG checks)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fabric.plan.compute.planes import plane_of
from tests.render.ansible_rm import round_trip
from tests.render.conftest import files_of, plan_of
from tests.render.sonic_yang import check_config_db
from tests.render.test_avd_reference import avd_rendering, compare
from tests.render.test_vendor_parsers import COLLECTIONS

CASES = ("render/frr-shared", "render/sonic-shared")


@pytest.mark.parametrize("case", CASES)
def test_every_spine_port_is_in_its_leafs_planes_vrf_and_bgp_runs_only_per_vrf(case: str) -> None:
    plan, files = plan_of(case), files_of(case)
    assert plan.fabric is not None
    ups = [x for x in plan.fabric.links if x.kind == "fabric"]
    for spine in plan.fabric.spines:
        conf = files[f"switches/{spine.name}/frr.conf"]
        for x in (x for x in ups if x.b_device == spine.name):
            assert f"interface {x.b_port} vrf Vrf-plane{plane_of(x.a_device)}\n" in conf
        routers = [line for line in conf.splitlines() if line.startswith("router bgp")]
        assert routers == [f"router bgp {spine.asn} vrf Vrf-plane1", f"router bgp {spine.asn} vrf Vrf-plane2"]
    leaves = [files[f"switches/{s.name}/frr.conf"] for s in plan.fabric.leaves]
    assert all("vrf" not in text.replace("no zebra nexthop kernel enable", "") for text in leaves)  # leaves as on separate spines


def config_db(case: str, switch: str) -> dict[str, Any]:
    return json.loads(files_of(case)[f"switches/{switch}/config_db.json"])


def test_sonic_puts_each_port_and_loopback_in_its_planes_vrf() -> None:
    db = config_db("render/sonic-shared", "spine01")
    assert db["VRF"] == {"Vrf-plane1": {}, "Vrf-plane2": {}}
    assert {k: v["vrf_name"] for k, v in db["INTERFACE"].items() if "|" not in k} == {
        "Ethernet0": "Vrf-plane1", "Ethernet2": "Vrf-plane1", "Ethernet4": "Vrf-plane2", "Ethernet6": "Vrf-plane2",
    }  # fmt: skip
    assert db["LOOPBACK_INTERFACE"] == {
        "Loopback1": {"vrf_name": "Vrf-plane1"}, "Loopback1|10.255.0.1/32": {},
        "Loopback2": {"vrf_name": "Vrf-plane2"}, "Loopback2|10.255.128.1/32": {},
    }  # fmt: skip
    assert "LOOPBACK_INTERFACE" in config_db("render/sonic-shared", "p1-leaf01")  # leaves keep Loopback0
    assert "VRF" not in config_db("render/sonic-shared", "p1-leaf01")


@pytest.mark.parametrize(
    "broken",
    [
        "a VRF name without SONiC's Vrf prefix",
        "a port in a VRF that does not exist",
    ],
)
def test_sonic_yang_refuses_a_broken_vrf(broken: str) -> None:
    db = config_db("render/sonic-shared", "spine01")
    assert check_config_db(db, release="202411") == []
    if broken.startswith("a VRF name"):
        db["VRF"]["plane1"] = db["VRF"].pop("Vrf-plane1")
        for entry in db["INTERFACE"].values():
            if entry.get("vrf_name") == "Vrf-plane1":
                entry["vrf_name"] = "plane1"
        db["LOOPBACK_INTERFACE"]["Loopback1"]["vrf_name"] = "plane1"
    else:
        db["INTERFACE"]["Ethernet4"]["vrf_name"] = "Vrf-plane9"
    assert check_config_db(db, release="202411") != []


def dry_run(text: str, tmp_path: Path) -> str:
    """``vtysh --dryrun``'s complaints about ``text``: its exit status alone misses some (FRR 8.4.4 exits 0 after an
    unknown top-level command), so every ``%`` line counts."""
    vtysh = shutil.which("vtysh")
    assert vtysh, "FRR is missing: ./dev installs the frr package (run it as root)"
    conf = tmp_path / "frr.conf"
    conf.write_text(text, encoding="utf-8")
    result = subprocess.run([vtysh, "--dryrun", "-f", str(conf)], capture_output=True, text=True, timeout=30, check=False)
    complaints = [line for line in (result.stdout + result.stderr).splitlines() if "% " in line]
    return "\n".join(complaints) if complaints or result.returncode == 0 else f"exit {result.returncode}"


@pytest.mark.parametrize("case", CASES)
def test_frr_accepts_every_shared_spine_without_a_word(case: str, tmp_path: Path) -> None:
    for path, text in files_of(case).items():
        if path.endswith("frr.conf"):
            assert dry_run(text, tmp_path) == "", path


def test_frr_refuses_a_bgp_instance_in_an_unknown_form(tmp_path: Path) -> None:
    text = files_of("render/frr-shared")["switches/spine01/frr.conf"]
    assert "Unknown command" in dry_run(text.replace("router bgp 65100 vrf Vrf-plane2", "router bgp 65100 vrfs Vrf-plane2"), tmp_path)


def test_pyavd_names_an_eos_port_left_out_of_its_vrf() -> None:
    ours = files_of("render/eos-shared")["switches/spine01/startup-config"]
    assert compare(ours, avd_rendering("render/eos-shared", "spine01")) == []
    broken = ours.replace("   vrf Vrf-plane2\n   ip address 10.254.128.0/31", "   ip address 10.254.128.0/31", 1)
    assert broken != ours
    found = compare(broken, avd_rendering("render/eos-shared", "spine01"))
    assert found == ["only in pyavd's rendering: interface Ethernet1/5 > vrf Vrf-plane2"], found


def test_arista_eos_parser_still_drops_a_vrf_after_another_vrfs_address_family() -> None:
    """Why render/eos-shared is not in test_vendor_parsers' cases: arista.eos 12.0.0's eos_bgp_global loses the second
    vrf block (its router-id and sessions) once the first has an address-family block, as EOS writes them. When this
    fails, the module reads it: add render/eos-shared to test_vendor_parsers.CASES."""
    collection, resources = COLLECTIONS["eos"]
    bgp_global = tuple(r for r in resources if r.module == "eos_bgp_global")
    text = (
        "router bgp 65100\n   neighbor FABRIC peer group\n   !\n   vrf Vrf-plane1\n      router-id 10.255.0.1\n"
        "      neighbor 10.254.0.1 remote-as 65101\n      !\n      address-family ipv4\n         neighbor 10.254.0.1 activate\n"
        "   !\n   vrf Vrf-plane2\n      router-id 10.255.128.1\n      neighbor 10.254.128.1 remote-as 65103\n!"
    )
    back = {line for _, line in round_trip(collection, bgp_global, text).lines}
    assert "router-id 10.255.0.1" in back
    assert "router-id 10.255.128.1" not in back
