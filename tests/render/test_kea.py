"""The OOB DHCP config: Kea's own check mode accepts it, and every planned address is handed out on its port only."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.render.kea import KEA_FILE, render_kea
from tests.conftest import ROOT

PLAN = plan_cluster(load_cluster(ROOT / "inventories" / "onprem-roce" / "cluster.yaml"))


def _kea_check(path: Path) -> subprocess.CompletedProcess[str]:
    kea = shutil.which("kea-dhcp4") or ("/usr/sbin/kea-dhcp4" if Path("/usr/sbin/kea-dhcp4").exists() else None)
    assert kea, "Kea is missing: ./dev installs the kea-dhcp4-server package (run it as root)"
    return subprocess.run([kea, "-t", str(path)], capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize("example", ["onprem-roce", "onprem-ib"])
def test_kea_accepts_the_rendered_config(tmp_path: Path, example: str) -> None:
    plan = plan_cluster(load_cluster(ROOT / "inventories" / example / "cluster.yaml"))
    path = tmp_path / "kea-dhcp4.json"
    path.write_text(render_kea(plan)[KEA_FILE], encoding="utf-8")
    result = _kea_check(path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_kea_rejects_two_ports_on_one_address(tmp_path: Path) -> None:
    """Negative control: the check mode really reads the pools (an overlap is refused)."""
    conf = json.loads(render_kea(PLAN)[KEA_FILE])
    pools = conf["Dhcp4"]["subnet4"][0]["pools"]
    pools[1]["pool"] = pools[0]["pool"]
    path = tmp_path / "kea-dhcp4.json"
    path.write_text(json.dumps(conf), encoding="utf-8")
    result = _kea_check(path)
    assert result.returncode != 0
    assert "overlaps with an existing pool" in result.stdout + result.stderr


def test_every_bmc_address_is_one_pool_guarded_by_its_switch_and_port() -> None:
    conf = json.loads(render_kea(PLAN)[KEA_FILE])["Dhcp4"]
    tests = {c["name"]: c["test"] for c in conf["client-classes"]}
    pools = {p["pool"].split(" - ")[0]: tests[p["client-class"]] for p in conf["subnet4"][0]["pools"]}
    assert PLAN.oob is not None
    bmcs = [x for x in PLAN.oob.links if x.kind == "bmc"]
    assert len(bmcs) == 70
    for link in bmcs:
        address = str(link.b_address).split("/")[0]
        assert pools[address] == f"relay4[2].hex == '{link.a_device}' and relay4[1].hex == '{link.a_port}'"
    assert conf["subnet4"][0]["option-data"] == [{"name": "routers", "data": "10.103.0.1"}]


def test_no_oob_network_no_dhcp_config() -> None:
    plain = plan_cluster(load_cluster(ROOT / "tests" / "data" / "render" / "frr-3tier" / "cluster.yaml"))
    assert plain.oob is None
    assert render_kea(plain) == {}
