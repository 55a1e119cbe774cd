"""NCCL's settings delivered by the roles: ``nccl_env`` writes the node group's ``export nccl`` variables first in
``/etc/nccl.conf`` (on-prem through the inventory plugin, on a cloud through the stack's exported inventory) and reads
them back as NCCL applies them; ``fabric_check`` compares the live RoCE v2 GID index with the plan's
``NCCL_IB_GID_INDEX``. Booted bookworm containers stand in for the nodes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fabric.export import export_nccl
from fabric.lint.nccl import parse_env
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from tests.conftest import ROOT
from tests.roles.containers import bookworm_image, booted
from tests.roles.scenario import changed, converge, explain, failures, host_vars, role_playbook, site
from tests.roles.stubs import fake_roce_gids
from tests.roles.test_cloud_fabric import UBUNTU_2204, exported_inventory, run

pytestmark = [pytest.mark.container, pytest.mark.skipif(os.geteuid() != 0, reason="containers need root (./dev test runs as root in CI)")]

CONF = "/etc/nccl.conf"
BEGIN = "# BEGIN gpufabric nccl_env, from the cluster definition (python -m fabric export nccl)"


def first_values(text: str) -> dict[str, str]:
    """What NCCL applies from a conf file: the first KEY=VALUE line of each key (setEnvFile's setenv(…, 0))."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        if "=" in line:
            key, value = line.split("=", 1)
            values.setdefault(key, value)
    return values


def test_nccl_env_writes_the_groups_settings_first_keeps_the_rest_and_changes_nothing_on_a_rerun(tmp_path: Path) -> None:
    """The image's own /etc/nccl.conf (a debug line and a stale traffic class) stays below our block; check mode writes
    nothing; a second run changes nothing; a line put above the block later is named by the read-back."""
    bookworm_image()
    planned = parse_env(export_nccl(plan_cluster(load_cluster(ROOT / "inventories/onprem-roce/cluster.yaml")))["nccl/gpu.env"])
    assert host_vars(site("onprem-roce"), "gpu001")["gpufabric_nccl_env"] == planned  # the inventory carries export's file
    image_conf = "NCCL_DEBUG=WARN\nNCCL_IB_TC=96\n"
    play = role_playbook(tmp_path, "nccl_env")
    with booted("gpu001", tmp_path, private_network=True, files={CONF: (image_conf, 0o644)}) as node:
        check, _ = converge(site("onprem-roce"), [node], play, tmp_path, check=True)
        assert check.ok, explain(check)
        assert node.read(CONF) == image_conf

        first, _ = converge(site("onprem-roce"), [node], play, tmp_path)
        assert first.ok, explain(first)
        text = node.read(CONF)
        assert text.splitlines()[0] == BEGIN
        assert text.endswith(image_conf)
        assert first_values(text) == {**planned, "NCCL_DEBUG": "WARN"}  # 106, not the image's 96
        second, _ = converge(site("onprem-roce"), [node], play, tmp_path)
        assert second.ok, explain(second)
        assert changed(second) == {"gpu001": 0}

        node.run(f"sed -i '1i NCCL_IB_GID_INDEX=1' {CONF}")
        shadowed, _ = converge(site("onprem-roce"), [node], play, tmp_path)
        [(task, message)] = failures(shadowed)["gpu001"]
        assert task == "Verify | NCCL gets every planned value (the first line of a key is the one it applies)"
        assert "gives NCCL NCCL_IB_GID_INDEX=1 where the plan has 3." in message


def test_nccl_env_on_a_cloud_node_from_the_exported_inventory(tmp_path: Path) -> None:
    bookworm_image()
    planned = parse_env(export_nccl(plan_cluster(load_cluster(ROOT / "inventories/gcp-a3ultra/cluster.yaml")))["nccl/gpu.env"])
    inventory = exported_inventory("gcp-a3ultra", "a3u-01", tmp_path)
    with booted("a3u-01", tmp_path, private_network=True) as node:
        first, _ = run(inventory, node, tmp_path, UBUNTU_2204, check=False, role="nccl_env")
        assert first.ok, explain(first)
        assert first_values(node.read(CONF)) == planned
        second, _ = run(inventory, node, tmp_path, UBUNTU_2204, check=False, role="nccl_env")
        assert changed(second) == {"a3u-01": 0}


IB = "/srv/ib"


def test_fabric_check_names_ports_whose_roce_v2_gid_is_not_at_the_plans_nccl_gid_index(tmp_path: Path) -> None:
    """One more IPv6 address on every RoCE port moves its RoCE v2 GID from index 3 to 5: NCCL_IB_GID_INDEX=3 from the
    plan would send NCCL's traffic on RoCE v1 of the link-local address, so the strict check fails, naming each port."""
    bookworm_image()
    gpu001 = host_vars(site("onprem-roce"), "gpu001")
    gids = fake_roce_gids(gpu001["gpufabric_interfaces"], gpu001["gpufabric_bonds"], root=f"{IB}/sys", extra_ipv6=1)
    checks = {"fabric_check_strict": True, "fabric_check_ping_peers": 0, "fabric_check_sysfs": f"{IB}/sys", "fabric_check_host_tuning": False}
    checks["fabric_check_cabling"] = False  # no lldpd in the container (tests/roles/test_cabling_readback.py)
    with booted("gpu001", tmp_path, private_network=True, files=gids) as node:
        result, _ = converge(site("onprem-roce"), [node], role_playbook(tmp_path, "fabric_check"), tmp_path, extravars=checks)
        [(task, message)] = failures(result)["gpu001"]
        assert task == "Verify | NCCL_IB_GID_INDEX of the plan against the live RoCE v2 GID index of every RoCE port"
        assert "NCCL_IB_GID_INDEX=3 (the plan's NCCL settings), but the RoCE v2 GID of enp24s0np0 is at index 5, " in message
        assert "enp79s0np0 is at index 5" in message
