"""The on-prem inventory sets what a node group or switch tier shares once, on the group, and every host still sees
the same values: through ``effective_host_vars`` and through Ansible itself (the inventory plugin, ``hostvars``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fabric.inventory import PER_HOST, effective_host_vars, onprem_host_vars, onprem_inventory, share_group_vars
from fabric.inventory.compact import INTERFACES_TEMPLATE, SPLIT_VARS
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from tests.conftest import ROOT
from tests.inventory.ansible_view import ansible_view

SITES = ("lab", "onprem-roce", "onprem-ib")
BIN = ROOT / ".venv" / "bin"
ENV = {**os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "GPUFABRIC_INVENTORY_COMPACT": "always"}  # the examples are small: force it


def _unsafe_to_str(d: dict[str, Any]) -> Any:
    return d["__ansible_unsafe"] if list(d) == ["__ansible_unsafe"] else d


def _run(*command: str) -> str:
    done = subprocess.run(command, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _ansible_inventory(site: str, *args: str) -> dict[str, Any]:
    done = _run(str(BIN / "ansible-inventory"), "-i", f"inventories/{site}/cluster.yaml", *args)
    return json.loads(done, object_hook=_unsafe_to_str)


@pytest.mark.parametrize("compact", ["always", "never"])
@pytest.mark.parametrize("site", SITES)
def test_ansible_gives_each_host_what_the_plan_says(site: str, compact: str) -> None:
    """Hostvars as Ansible combines (all, group, host) and templates them are the flat per-host values, key for key.

    ``onprem_host_vars`` is the plan's per-host view with every interface spelled out (what the plugin set on each host
    before the interfaces were split into a group layout and host addresses); ``ansible_view`` reads every variable of
    every host through ``hostvars[host]``, as plays and the roles' filters do. The only extra variables are the
    interfaces' two halves and the JSON texts behind the structured values (``fabric.inventory.compact``).
    """
    want = onprem_host_vars(plan_cluster(load_cluster(ROOT / "inventories" / site / "cluster.yaml")))
    got = ansible_view(f"inventories/{site}/cluster.yaml", compact=compact)
    assert set(got) == set(want)
    for host, seen in got.items():
        split = set(SPLIT_VARS) if "gpufabric_interfaces" in want[host] and compact == "always" else set()
        structured = {k for k, v in want[host].items() if isinstance(v, list | dict) and v} - {"gpufabric_interfaces"}  # split instead
        texts = {f"{k}_json" for k in structured | split} if compact == "always" else set()
        assert set(seen) == set(want[host]) | split | texts, host
        assert {k: v for k, v in seen.items() if k not in split | texts} == want[host], host
        assert all(json.loads(seen[k]) == seen[k.removesuffix("_json")] for k in texts), host
    assert any(isinstance(seen.get("gpufabric_interfaces"), list) and seen["gpufabric_interfaces"] for seen in got.values())


def test_the_interfaces_are_a_group_layout_and_host_addresses() -> None:
    """``gpufabric_interfaces`` is set as the template; the layout once on the node group, the addresses on each host."""
    exported = _ansible_inventory("onprem-roce", "--host", "gpu001")
    assert exported["gpufabric_interfaces"] == INTERFACES_TEMPLATE
    assert exported["gpufabric_interface_shape"] == "{{ gpufabric_interface_shape_json | from_json }}"
    shape, addresses = (json.loads(exported[f"{k}_json"]) for k in SPLIT_VARS)
    assert len(shape) == len(addresses) > 0
    assert all(set(a) == {"address", "peer_address"} for a in addresses)
    assert not any({"address", "peer_address"} & set(i) for i in shape)


@pytest.mark.parametrize("site", SITES)
def test_shared_values_are_group_vars_and_hosts_keep_only_their_own(site: str) -> None:
    inventory = onprem_inventory(plan_cluster(load_cluster(ROOT / "inventories" / site / "cluster.yaml")), compact=True)
    groups = inventory["all"]["children"]
    gpu = groups["group_gpu"]
    assert {"gpufabric_group", "gpufabric_role", "gpufabric_hardware", "gpufabric_gpus"} <= set(gpu["vars"])
    assert gpu["vars"]["gpufabric_group"] == "gpu"
    host = groups["gpu_nodes"]["hosts"][next(iter(gpu["hosts"]))]
    assert not set(host) & set(gpu["vars"])
    assert {"ansible_host", "gpufabric_interfaces", "gpufabric_interface_addresses"} <= set(host)
    assert "gpufabric_interface_shape_json" in gpu["vars"]  # every gpu node has the same ports
    assert {"ansible_network_os", "gpufabric_nos"} <= set(groups["leaf"]["vars"])
    assert all({"ansible_host", "gpufabric_loopback"} <= set(v or {}) for v in groups["leaf"]["hosts"].values())


def test_ansible_keeps_shared_values_on_the_group() -> None:
    """``ansible-inventory --export`` (what AWX imports) writes each shared value once, on its group."""
    exported = _ansible_inventory("onprem-roce", "--list", "--export")
    assert exported["group_gpu"]["vars"]["gpufabric_hardware"] == "dgx-h100"
    assert "gpufabric_nccl_env" in exported["group_gpu"]["vars"]
    assert "gpufabric_interface_shape_json" in exported["group_gpu"]["vars"]
    own = {"ansible_host", "gpufabric_bonds", "gpufabric_bonds_json", "gpufabric_interfaces"}
    own |= {"gpufabric_interface_addresses", "gpufabric_interface_addresses_json"}
    assert set(exported["_meta"]["hostvars"]["gpu001"]) == own


def test_the_exported_inventory_gives_hosts_the_same_values(tmp_path: Path) -> None:
    """What AWX imports (``--list --export``) and serves back as an inventory script: the templates stay templates,
    the JSON texts stay data (``__ansible_unsafe``), and every host resolves the same values as from the definition."""
    exported = tmp_path / "export.json"
    exported.write_text(_run(str(BIN / "ansible-inventory"), "-i", "inventories/onprem-roce/cluster.yaml", "--list", "--export"), encoding="utf-8")
    script = tmp_path / "inventory.sh"
    script.write_text(f'#!/bin/sh\nif [ "$1" = --list ]; then cat {exported}; else echo {{}}; fi\n', encoding="utf-8")
    script.chmod(0o755)
    assert ansible_view(script, plugins="script") == ansible_view("inventories/onprem-roce/cluster.yaml", compact="always")


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


def test_small_clusters_get_plain_values_and_large_ones_the_compact_form(monkeypatch: pytest.MonkeyPatch) -> None:
    """``auto`` by host count: the examples stay readable (``--host`` shows values), above the limit templates."""
    plan = plan_cluster(load_cluster(ROOT / "inventories" / "onprem-roce" / "cluster.yaml"))
    plain = onprem_inventory(plan)["all"]["children"]["gpu_nodes"]["hosts"]["gpu001"]
    assert isinstance(plain["gpufabric_interfaces"], list)
    assert not any(k.endswith("_json") for k in plain)
    command = [str(BIN / "ansible-inventory"), "-i", "inventories/onprem-roce/cluster.yaml", "--host", "gpu001"]
    env = {**ENV, "GPUFABRIC_INVENTORY_COMPACT": "auto"}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True)
    shown = json.loads(done.stdout, object_hook=_unsafe_to_str)
    assert isinstance(shown["gpufabric_interfaces"], list)  # with GPUFABRIC_INVENTORY_COMPACT=always (ENV) the template
    hosts = len({h for body in onprem_inventory(plan)["all"]["children"].values() for h in body["hosts"]})
    monkeypatch.setattr("fabric.inventory.COMPACT_ABOVE_HOSTS", hosts - 1)
    assert onprem_inventory(plan)["all"]["children"]["gpu_nodes"]["hosts"]["gpu001"]["gpufabric_interfaces"] == INTERFACES_TEMPLATE


def test_a_compact_mode_ansible_does_not_know_is_refused_naming_the_variable() -> None:
    env = {**ENV, "GPUFABRIC_INVENTORY_COMPACT": "sometimes"}
    command = [str(BIN / "ansible-inventory"), "-i", "inventories/lab/cluster.yaml", "--list"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0
    assert "GPUFABRIC_INVENTORY_COMPACT='sometimes': not one of auto, always, never" in done.stderr
