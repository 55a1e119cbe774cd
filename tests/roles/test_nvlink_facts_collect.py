"""roles/cloud_fabric keeps each GPU node's ``nvidia-smi -q`` on the controller (``cloud_fabric_nvlink_facts_dir``), the
file ``export slurm --nvlink-facts`` reads: a booted bookworm container stands in for an ND GB200 v6 VM, an nvidia-smi
stub prints the published GB200 Fabric section (tests/data/nvlink-facts)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fabric.export.nvlink_facts import SUFFIX, NvlinkDomain, read_facts_dir
from tests.conftest import DATA
from tests.roles.containers import bookworm_image, booted
from tests.roles.scenario import changed, explain
from tests.roles.test_cloud_fabric import CLOUD_NVIDIA_SMI, UBUNTU_2404, run

pytestmark = [pytest.mark.container, pytest.mark.skipif(os.geteuid() != 0, reason="containers need root (./dev test runs as root in CI)")]


def test_each_gpu_node_leaves_its_nvidia_smi_q_on_the_controller_for_the_block_file(tmp_path: Path) -> None:
    bookworm_image()
    output = (DATA / "nvlink-facts" / "published-gb200-fabric.txt").read_text(encoding="utf-8")
    files = {"/srv/gpu/nvidia-smi": (CLOUD_NVIDIA_SMI, 0o755), "/srv/gpu/q.txt": (output, 0o644), "/srv/gpu/gpus.csv": ("", 0o644)}
    facts = tmp_path / "facts"
    with booted("gb001", tmp_path, private_network=True, files=files) as node:
        inventory = tmp_path / "azure.json"
        host = {"gpufabric_target": "azure", "gpufabric_gpu_stack": "none", "gpufabric_gpus": 4}
        inventory.write_text(json.dumps({"all": {"children": {"gpu_nodes": {"hosts": {node.name: host}}}}}), encoding="utf-8")
        live = {"cloud_fabric_nvidia_smi": "/srv/gpu/nvidia-smi", "cloud_fabric_nvlink_facts_dir": str(facts)}
        first, _ = run(inventory, node, tmp_path, UBUNTU_2404, check=False, tags="cloud_fabric_verify", **live)
        assert first.ok, explain(first)
        assert (facts / f"gb001{SUFFIX}").read_text(encoding="utf-8") == output.rstrip("\n") + "\n"
        assert read_facts_dir(facts)["gb001"].domain == NvlinkDomain("dc6e40c4-d722-4357-9ba6-5291dd461278", 2)
        again, _ = run(inventory, node, tmp_path, UBUNTU_2404, check=False, tags="cloud_fabric_verify", **live)
        assert again.ok, explain(again)
        assert changed(again) == {"gb001": 0}
        # negative control: without the directory nothing is collected
        (facts / f"gb001{SUFFIX}").unlink()
        none, _ = run(inventory, node, tmp_path, UBUNTU_2404, check=False, tags="cloud_fabric_verify", cloud_fabric_nvidia_smi="/srv/gpu/nvidia-smi")
        assert none.ok, explain(none)
        assert list(facts.iterdir()) == []
