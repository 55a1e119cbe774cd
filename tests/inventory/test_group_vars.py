"""The on-prem inventory sets what a node group or switch tier shares once, on the group, and every host still sees
the same values: through ``effective_host_vars`` and through Ansible itself (the inventory plugin, ``ansible-inventory``)."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

from fabric.inventory import PER_HOST, effective_host_vars, onprem_host_vars, onprem_inventory, share_group_vars
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from tests.conftest import ROOT

SITES = ("lab", "onprem-roce", "onprem-ib")
BIN = ROOT / ".venv" / "bin"


def _unsafe_to_str(d: dict[str, Any]) -> Any:
    return d["__ansible_unsafe"] if list(d) == ["__ansible_unsafe"] else d


def _ansible_inventory(site: str, *args: str) -> dict[str, Any]:
    env = {**os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg")}
    done = subprocess.run(
        [str(BIN / "ansible-inventory"), "-i", f"inventories/{site}/cluster.yaml", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout, object_hook=_unsafe_to_str)


@pytest.mark.parametrize("site", SITES)
def test_ansible_gives_each_host_what_the_plan_says(site: str) -> None:
    """Hostvars as Ansible combines them (all, group, host) are the flat per-host values, key for key."""
    want = onprem_host_vars(plan_cluster(load_cluster(ROOT / "inventories" / site / "cluster.yaml")))
    got = _ansible_inventory(site, "--list")["_meta"]["hostvars"]
    assert got == want


@pytest.mark.parametrize("site", SITES)
def test_shared_values_are_group_vars_and_hosts_keep_only_their_own(site: str) -> None:
    inventory = onprem_inventory(plan_cluster(load_cluster(ROOT / "inventories" / site / "cluster.yaml")))
    groups = inventory["all"]["children"]
    gpu = groups["group_gpu"]
    assert {"gpufabric_group", "gpufabric_role", "gpufabric_hardware", "gpufabric_gpus"} <= set(gpu["vars"])
    assert gpu["vars"]["gpufabric_group"] == "gpu"
    host = groups["gpu_nodes"]["hosts"][next(iter(gpu["hosts"]))]
    assert not set(host) & set(gpu["vars"])
    assert {"ansible_host", "gpufabric_interfaces"} <= set(host)
    assert {"ansible_network_os", "gpufabric_nos"} <= set(groups["leaf"]["vars"])
    assert all({"ansible_host", "gpufabric_loopback"} <= set(v or {}) for v in groups["leaf"]["hosts"].values())


def test_ansible_keeps_shared_values_on_the_group() -> None:
    """``ansible-inventory --export`` (what AWX imports) writes each shared value once, on its group."""
    exported = _ansible_inventory("onprem-roce", "--list", "--export")
    assert exported["group_gpu"]["vars"]["gpufabric_hardware"] == "dgx-h100"
    assert "gpufabric_nccl_env" in exported["group_gpu"]["vars"]
    assert set(exported["_meta"]["hostvars"]["gpu001"]) == {"ansible_host", "gpufabric_bonds", "gpufabric_interfaces"}


def test_a_value_one_host_lacks_or_holds_differently_stays_on_every_host() -> None:
    hosts = {
        "a": {"ansible_host": "10.0.0.1", "x": 1, "y": [1], "z": 0},
        "b": {"ansible_host": "10.0.0.1", "x": 1, "y": [2]},
    }
    flat = {"all": {"vars": {"c": 0}, "children": {"gpu_nodes": {"hosts": hosts}, "group_g": {"hosts": dict.fromkeys(hosts)}}}}
    shared = share_group_vars(flat)
    assert shared["all"]["children"]["group_g"]["vars"] == {"x": 1}  # ansible_host is per host even where equal (PER_HOST)
    assert "ansible_host" in PER_HOST
    assert shared["all"]["children"]["gpu_nodes"]["hosts"] == {
        "a": {"ansible_host": "10.0.0.1", "y": [1], "z": 0},
        "b": {"ansible_host": "10.0.0.1", "y": [2]},
    }
    assert effective_host_vars(shared) == effective_host_vars(flat)
    single = {"all": {"vars": {}, "children": {"gpu_nodes": {"hosts": {"a": {"x": 1}}}, "group_g": {"hosts": {"a": None}}}}}
    assert "vars" not in share_group_vars(single)["all"]["children"]["group_g"]  # one host: nothing to share
