"""fabric_check's RoCE GID check without a node: its read script over a sysfs tree as ConnectX ports have it, and the
filter that finds each port's RoCE v2 GID index. A bonded storage port is checked through its bond: the bond's address
on the bond's net device, under RoCE LAG (one mlx5_bond_0) or with one port of each of two cards in the bond."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from plugins.filter.gpufabric_checks import roce_gids
from tests.conftest import ROOT
from tests.roles.scenario import host_vars, site
from tests.roles.stubs import fake_roce_gids, write_tree

SCRIPT = ROOT / "roles" / "fabric_check" / "files" / "roce-gids-read.sh"
GPU001 = host_vars(site("onprem-roce"), "gpu001")
RAILS = [i["name"] for i in GPU001["gpufabric_interfaces"] if i["plane"] == "compute"]


def checked(tmp_path: Path, *, lag: bool = True, broken: str | None = None, devices: tuple[str, ...] = ("*",)) -> dict[str, Any]:
    """Write gpu001's GID tables, read them with the role's script, judge them with the role's filter."""
    write_tree(tmp_path, fake_roce_gids(GPU001["gpufabric_interfaces"], GPU001["gpufabric_bonds"], root="sys", lag=lag, broken=broken))
    done = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "sys"), *devices], capture_output=True, text=True, timeout=60, check=True)
    return roce_gids(done.stdout.splitlines(), GPU001["gpufabric_interfaces"], ["compute", "storage"], GPU001["gpufabric_bonds"])


@pytest.mark.parametrize("lag", [True, False], ids=["roce-lag", "two-cards"])
def test_a_bonded_storage_port_is_checked_through_its_bond_and_reported_under_the_bonds_name(tmp_path: Path, lag: bool) -> None:
    assert [b["name"] for b in GPU001["gpufabric_bonds"]] == ["bond-storage"]
    report = checked(tmp_path, lag=lag)
    assert report == {"index": {**dict.fromkeys(RAILS, 3), "bond-storage": 3}, "problems": []}


def test_a_bond_whose_address_sits_on_a_member_not_on_the_bond_is_named(tmp_path: Path) -> None:
    report = checked(tmp_path, broken="bond-storage")
    assert "bond-storage" not in report["index"]
    assert report["problems"] == [
        "bond-storage (bond of enp170s0f0np0, enp41s0f0np0): no RoCE v2 GID for 10.101.0.16 on the bond's net device "
        "(only IB/RoCE v1 at mlx5_bond_0 index 2 on bond-storage, RoCE v2 at mlx5_bond_0 index 3 on enp170s0f0np0)"
    ]


def test_a_rail_without_a_roce_v2_gid_is_still_named_on_its_own_device(tmp_path: Path) -> None:
    report = checked(tmp_path, broken="enp79s0np0")
    assert report["problems"] == ["enp79s0np0 (mlx5_4): no RoCE v2 GID for 10.100.0.5 (only IB/RoCE v1 at index 2)"]


def test_reading_only_the_planned_devices_misses_the_lag_device(tmp_path: Path) -> None:
    hcas = tuple(sorted({str(i["hca"]) for i in GPU001["gpufabric_interfaces"] if i["hca"]}))
    report = checked(tmp_path, devices=hcas)  # without '*': mlx5_bond_0 is not read
    assert [p.split(":")[0] for p in report["problems"]] == ["bond-storage (bond of enp170s0f0np0, enp41s0f0np0)"]
