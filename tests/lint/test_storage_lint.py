"""The storage / in-band linter: clean on what render writes; a plane leak, an MTU mismatch on the storage path, a LAG
member missing on one side and a broken RoCE storage contract are each found, with the switch and port."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from fabric.__main__ import main
from fabric.lint.storage import lint_storage, storage_config_files
from fabric.model import load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from fabric.render import render_configs
from tests.conftest import DATA, ROOT


@cache
def _plan(example: str) -> ClusterPlan:
    return plan_cluster(load_cluster(ROOT / "inventories" / example / "cluster.yaml"))


@cache
def _configs(example: str) -> dict[str, str]:
    files = render_configs(_plan(example))
    return {name: files[f"switches/{name}/{file}"] for name, file in storage_config_files(_plan(example)).items()}


def _lint(example: str, switch: str, old: str, new: str) -> list[str]:
    configs = dict(_configs(example))
    assert old in configs[switch], old
    configs[switch] = configs[switch].replace(old, new)
    return [str(f) for f in lint_storage(_plan(example), configs)]


@pytest.mark.parametrize("example", ["onprem-roce", "onprem-ib"])
def test_rendered_configs_are_clean(example: str) -> None:
    assert lint_storage(_plan(example), _configs(example)) == []


def test_nxos_storage_configs_are_clean_and_a_missing_vpc_member_is_found() -> None:
    plan = plan_cluster(load_cluster(DATA / "storage" / "nxos" / "cluster.yaml"))
    files = render_configs(plan)
    configs = {name: files[f"switches/{name}/{file}"] for name, file in storage_config_files(plan).items()}
    assert len(configs) == 6
    assert lint_storage(plan, configs) == []
    broken = dict(configs)
    member = "interface Ethernet1/1/1\n  description gpu001 storage\n  mtu 9000\n  speed 100000\n  fec rs-fec\n  channel-group 1 mode active\n"
    assert member in broken["stor-su1-1-b"]
    broken["stor-su1-1-b"] = broken["stor-su1-1-b"].replace("  channel-group 1 mode active\n", "", 1)
    assert [str(f) for f in lint_storage(plan, broken)] == [
        "stor-su1-1-b: Ethernet1/1/1: the gpu001 storage port is not in its plane's VLAN: the planes leak into each other "
        "(expected VLAN 101 (storage), found no VLAN)",
        "stor-su1-1-b: port-channel1: LAG port-channel1 (gpu001 storage) differs from its cables on this side (Ethernet1/1/1 missing): "
        "a LAG member missing on one side (expected members Ethernet1/1/1, found members none)",
    ]


def test_a_storage_port_in_the_inband_vlan_is_a_plane_leak() -> None:
    found = _lint("onprem-roce", "stor-su1-1-a", "bond1 bridge domain br_default access 101", "bond1 bridge domain br_default access 102")
    assert found == [
        "stor-su1-1-a: swp1s0: the gpu001 storage port is not in its plane's VLAN: the planes leak into each other "
        "(expected VLAN 101 (storage), found VLAN 102 (inband))"
    ]


def test_an_svi_on_the_storage_vlan_or_a_shared_vrf_is_a_route_between_planes() -> None:
    svi = "nv set interface vlan101 type svi\nnv set interface vlan101 ip vrf vrf-inband\nnv set interface vlan101 ip address 10.101.255.253/16\n"
    found = _lint("onprem-roce", "stor-spine-a", "nv set interface vlan102 type svi\n", svi + "nv set interface vlan102 type svi\n")
    assert found == [
        "stor-spine-a: vlan101: an SVI routes the storage plane here, where the plan gives it no gateway; it could route between planes "
        "(expected no SVI, found 10.101.255.253/16)",
        "stor-spine-a: vrf vrf-inband: one VRF holds the gateways of several planes, so they route into each other "
        "(expected one plane per VRF, found inband and storage)",
    ]


def test_a_foreign_vlan_on_the_bridge_and_a_trunk_is_found() -> None:
    found = _lint("onprem-roce", "stor-svc-a", "nv set interface uplink bridge domain br_default vlan 102\n", "nv set interface uplink bridge domain br_default vlan 102\nnv set interface uplink bridge domain br_default vlan 103\nnv set bridge domain br_default vlan 103\n")  # fmt: skip
    assert found == [
        "stor-svc-a: bridge: the bridge carries a VLAN that is not a plane of the storage network (expected VLANs [101, 102], found VLAN 103 (no plane))",
        "stor-svc-a: uplink: a trunk carries a VLAN of no plane of this network (expected VLANs [101, 102], found VLAN 103 (no plane))",
    ]


def test_an_mtu_mismatch_on_the_storage_path_is_found() -> None:
    found = _lint("onprem-roce", "stor-su1-1-b", "nv set interface bond1 link mtu 9000", "nv set interface bond1 link mtu 1500")
    assert found == [
        "stor-su1-1-b: swp1s0: MTU mismatch on the storage path: gpu001 enp41s0f0np0 sends 9000-byte packets the port drops "
        "(expected mtu >= 9000, found mtu 1500)",
        "stor-su1-1-b: swp1s0: a member's MTU differs from its bond bond1's (expected mtu 1500, found mtu 9000)",
    ]


def test_an_uplink_mtu_mismatch_between_tiers_is_found() -> None:
    found = _lint("onprem-roce", "stor-spine-b", "nv set interface down2 link mtu 9000", "nv set interface down2 link mtu 1500")
    assert len(found) == 8  # the 4 uplink cables of each su1 leaf to spine b
    assert found[0] == (
        "stor-su1-1-a: swp63s2: MTU mismatch on the storage path: both ends of a uplink cable take the largest plane MTU "
        "(expected mtu 9000 on both ends, found stor-su1-1-a swp63s2 9000 vs stor-spine-b swp3s0 1500)"
    )


def test_a_lag_member_missing_on_one_side_is_found() -> None:
    found = _lint("onprem-roce", "stor-su1-1-b", "nv set interface bond1 bond member swp1s0\n", "")
    assert found == [
        "stor-su1-1-b: swp1s0: the gpu001 storage port is not in its plane's VLAN: the planes leak into each other (expected VLAN 101 (storage), found no VLAN)",
        "stor-su1-1-b: bond1: LAG bond1 (gpu001 storage) differs from its cables on this side (swp1s0 missing): a LAG member missing on one side "
        "(expected members swp1s0, found members none)",
    ]


def test_an_uplink_member_missing_on_the_spine_side_is_found() -> None:
    found = _lint("onprem-roce", "stor-spine-a", "nv set interface down2 bond member swp3s0\n", "")
    assert "stor-spine-a: swp3s0: the uplink cable stor-su1-1-a swp62s2 - stor-spine-a swp3s0 is in its LAG on one side only (expected member of down2, found member of no bond)" in found  # fmt: skip
    assert any("LAG down2" in f and "swp3s0 missing" in f for f in found)


def test_the_storage_roce_contract_is_checked() -> None:
    found = _lint("onprem-ib", "stor-su1-1-a", "nv set interface swp1s0 qos pfc-watchdog\n", "")
    assert found == [
        "stor-su1-1-a: swp1s0: a lossless storage port has no PFC watchdog, so a PFC storm stalls the storage plane (expected pfc-watchdog, found none)"
    ]
    found = _lint("onprem-ib", "stor-svc-b", "nv set qos pfc default-global switch-priority 3\n", "nv set qos pfc default-global switch-priority 4\n")
    assert found == ["stor-svc-b: pfc: PFC must run on exactly the RoCE priority (expected priorities 3, found priorities 4)"]


def test_a_missing_config_is_a_finding() -> None:
    configs: dict[str, str | None] = dict(_configs("onprem-roce"))
    configs["stor-svc-b"] = None
    found = [str(f) for f in lint_storage(_plan("onprem-roce"), configs)]
    assert found[0] == "stor-svc-b: nvue.sh: the switch has no config to check (expected a config, found no file)"


def test_the_lint_command_reads_the_storage_configs_render_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    definition = str(ROOT / "inventories" / "onprem-roce" / "cluster.yaml")
    assert main(["render", definition, "-o", str(tmp_path)]) == 0
    assert main(["lint", definition, "--configs", str(tmp_path)]) == 0
    nvue = tmp_path / "switches" / "stor-su1-1-a" / "nvue.sh"
    nvue.write_text(nvue.read_text(encoding="utf-8").replace("access 101", "access 102", 1), encoding="utf-8")
    capsys.readouterr()
    assert main(["lint", definition, "--configs", str(tmp_path)]) == 1
    assert "stor-su1-1-a: swp1s0: the gpu001 storage port is not in its plane's VLAN" in capsys.readouterr().err


def _sonic_lint(switch: str, edit: Callable[[dict[str, Any]], object]) -> list[str]:
    plan = plan_cluster(load_cluster(DATA / "storage" / "sonic" / "cluster.yaml"))
    files = render_configs(plan)
    configs: dict[str, str | None] = {n: files[f"switches/{n}/{f}"] for n, f in storage_config_files(plan).items()}
    db = json.loads(configs[switch] or "")
    edit(db)
    configs[switch] = json.dumps(db)
    return [str(f) for f in lint_storage(plan, configs)]


def test_sonic_configs_are_linted_too() -> None:
    assert _sonic_lint("stor-svc-a", lambda _: None) == []
    leak = _sonic_lint("stor-su1-1-a", lambda db: db["VLAN_MEMBER"].update({"Vlan101|PortChannel1": {"tagging_mode": "tagged"}}))
    assert leak == [
        "stor-su1-1-a: Ethernet0: the gpu001 storage port is not in its plane's VLAN: the planes leak into each other "
        "(expected VLAN 101 (storage), found no VLAN)"
    ]
    missing = _sonic_lint("stor-spine-b", lambda db: db["PORTCHANNEL_MEMBER"].pop("PortChannel9001|Ethernet8"))
    assert (
        "stor-spine-b: Ethernet8: the uplink cable stor-svc-b Ethernet500 - stor-spine-b Ethernet8 is in its LAG on one side only "
        "(expected member of PortChannel9001, found member of no bond)"
    ) in missing
    assert missing[0].startswith(
        "stor-spine-b: PortChannel9001: LAG PortChannel9001 (uplink bond) differs from its cables on this side (Ethernet8 missing)"
    )


def _eos_lint(switch: str, old: str, new: str) -> list[str]:
    plan = plan_cluster(load_cluster(DATA / "storage" / "eos" / "cluster.yaml"))
    files = render_configs(plan)
    configs: dict[str, str | None] = {n: files[f"switches/{n}/{f}"] for n, f in storage_config_files(plan).items()}
    text = configs[switch] or ""
    assert old in text
    configs[switch] = text.replace(old, new, 1)
    return [str(f) for f in lint_storage(plan, configs)]


def test_eos_configs_are_linted_too() -> None:
    assert _eos_lint("stor-svc-a", "hostname", "hostname") == []
    # The 7060X5 has no `l2 mtu` rendered (catalog l2_mtu false); one written in by hand is still checked.
    mtu = _eos_lint("stor-su1-1-b", "interface Port-Channel1\n   description gpu001 storage\n", "interface Port-Channel1\n   description gpu001 storage\n   l2 mtu 1500\n")  # fmt: skip
    assert mtu[0] == (
        "stor-su1-1-b: Ethernet1/1: MTU mismatch on the storage path: gpu001 enp41s0f0np0 sends 9000-byte packets the port drops "
        "(expected mtu >= 9000, found mtu 1500)"
    )
    lag = _eos_lint("stor-su1-1-b", "   channel-group 1 mode active\n", "")
    assert any("LAG Port-Channel1 (gpu001 storage) differs from its cables on this side (Ethernet1/1 missing)" in f for f in lag)
