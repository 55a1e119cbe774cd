"""Issue 31 on a booted node: roles/cloud_fabric mounts the shared file system, writes it to /etc/fstab and reads the
live mount back with findmnt, through the inventory a cloud stack exports (``cloud_inventory`` with
``gpufabric_shared_fs``).

No NFS server or client can run here: this machine's kernel (a Firecracker guest, no /lib/modules) has neither ``nfs``
nor ``nfsd`` in /proc/filesystems and a container cannot load modules, so ``nfs-kernel-server`` cannot export and
``mount -t nfs`` cannot mount. The mount, fstab and read-back tasks therefore run for real against a tmpfs standing in
for the export (same tasks, same findmnt read-back, same failure messages), and the Filestore NFS path runs in check
mode (its plan, the client package, the fstab line it would write)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from fabric.inventory import cloud_inventory
from fabric.inventory.shared_fs import shared_fs
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from tests.conftest import ROOT
from tests.roles.containers import booted
from tests.roles.scenario import changed, explain, failures
from tests.roles.test_cloud_fabric import UBUNTU_2204, plan_of, run

pytestmark = [pytest.mark.container, pytest.mark.skipif(os.geteuid() != 0, reason="containers need root (./dev test runs as root in CI)")]

HOST = "fs-01"
# The stand-in export: a tmpfs whose source names it, mounted with the option the read-back must find (noatime).
STAND_IN = {"kind": "filestore", "type": "tmpfs", "server": "gpufabric", "name": "shared", "source": "gpufabric-shared", "mount_point": "/shared"}
NO_PACKAGES = {"filestore": {"Debian": {"packages": []}}}  # tmpfs needs no client (and the node has no network)
OPTIONS = {"filestore": "noatime,_netdev,x-systemd.automount"}


def inventory_with(fs: dict[str, str], workdir: Path) -> Path:
    """The gcp-a3mega stack's inventory with its login node (no GPU stack: only the file system is done) as ``HOST``."""
    plan = plan_cluster(load_cluster(ROOT / "inventories" / "gcp-a3mega" / "cluster.yaml"))
    assert plan.cloud is not None
    login = next(g for g in plan.cloud.groups if g.role == "login").hostnames[0]
    text = json.dumps(cloud_inventory(plan, {login: {"inband": "10.0.0.2"}}, fs)).replace(f'"{login}"', f'"{HOST}"')
    path = workdir / "inventory.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_file_system_is_mounted_persisted_and_read_back_and_a_lost_option_fails_named(tmp_path: Path) -> None:
    inventory = inventory_with(STAND_IN, tmp_path)
    live: dict[str, Any] = {"cloud_fabric_fs_clients": NO_PACKAGES, "cloud_fabric_fs_options": OPTIONS}
    with booted(HOST, tmp_path, private_network=True) as node:
        first, _ = run(inventory, node, tmp_path, UBUNTU_2204, check=False, **live)
        assert first.ok, explain(first)
        found = node.run("findmnt --noheadings --output SOURCE,FSTYPE,OPTIONS --mountpoint /shared").stdout.split()
        assert found[:2] == ["gpufabric-shared", "tmpfs"]
        assert "noatime" in found[2].split(",")
        assert "gpufabric-shared /shared tmpfs noatime,_netdev,x-systemd.automount 0 0" in node.read("/etc/fstab").splitlines()

        again, events = run(inventory, node, tmp_path, UBUNTU_2204, check=False, **live)
        assert again.ok, explain(again)
        moved = [e["event_data"]["task"] for e in events.all if e.get("event") == "runner_on_ok" and e["event_data"]["res"].get("changed")]
        assert changed(again) == {HOST: 0}, moved

        # someone remounts it without noatime: the read-back names the option and what findmnt shows
        assert node.run("mount --options-source=disable -o remount,relatime /shared").returncode == 0
        shown = node.run("findmnt --noheadings --output OPTIONS --mountpoint /shared").stdout
        assert "noatime" not in shown, shown
        lost, _ = run(inventory, node, tmp_path, UBUNTU_2204, check=False, **live)
        [(task, message)] = failures(lost)[HOST]
        assert task == "Verify | shared file system read back"
        assert "/shared is mounted without noatime (findmnt shows rw,relatime" in message

        # nothing mounted at all (and fstab says nothing either): the mount task itself fails, naming mount's stderr
        assert node.run("umount /shared && sed -i '/gpufabric-shared/d' /etc/fstab").returncode == 0
        wrong = {**STAND_IN, "type": "no-such-fs"}
        refused, _ = run(inventory_with(wrong, tmp_path), node, tmp_path, UBUNTU_2204, check=False, **live)
        [(task, message)] = failures(refused)[HOST]
        assert task == "Shared file system | the mount failed"
        why = "Error mounting /shared: mount: /shared: unknown filesystem type 'no-such-fs'"
        assert f"mount -t no-such-fs gpufabric-shared /shared failed: {why}" in message


def test_filestore_plans_the_nfs_client_and_fstab_line_in_check_mode(tmp_path: Path) -> None:
    fs = shared_fs("filestore", "10.129.0.10", "shared")
    with booted(HOST, tmp_path, private_network=True) as node:
        result, events = run(inventory_with(fs, tmp_path), node, tmp_path, UBUNTU_2204, check=True)
        assert result.ok, explain(result)
        planned = plan_of(events)["shared_fs"]
        assert (planned["source"], planned["type"], planned["packages"]) == ("10.129.0.10:/shared", "nfs", ["nfs-common"])
        [mount] = events.results("Shared file system | mounted and in /etc/fstab")
        assert mount["changed"]
        assert "10.129.0.10:/shared" not in node.read("/etc/fstab")  # check mode wrote nothing

        # Managed Lustre: its repository is signed by Google's Artifact Registry key, fingerprint-checked first
        lustre = shared_fs("managed-lustre", "10.137.8.2", "lustrefs")
        result, events = run(inventory_with(lustre, tmp_path), node, tmp_path, UBUNTU_2204, check=True)
        assert result.ok, explain(result)
        assert plan_of(events)["shared_fs"]["source"] == "10.137.8.2@tcp:/lustrefs"
        [keys] = events.results("Shared file system | Google's signing keys")
        assert not keys.get("skipped"), "the fingerprint-checked keys were not included"
