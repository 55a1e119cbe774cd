"""roles/cloud_fabric on the inventory a cloud stack exports (``cloud_inventory``, the code its ``ansible_inventory``
output runs): a booted bookworm container stands in for one cloud GPU node, its OS facts replaced by the image the
cluster definition names. Google's and AWS's download servers cannot be reached here, so each stack is planned in
check mode (the exact plan, repository lines, units and files, and nothing written); the live-state checks run for
real against a node laid out as after installation, and fail, named, when a piece is missing."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from fabric.inventory import cloud_inventory
from fabric.model import load_cluster
from fabric.nodes.runner import NodesRun, RunOptions, run_playbook
from fabric.plan import plan_cluster
from tests.conftest import ROOT, check_golden
from tests.roles.containers import Container, bookworm_image, booted
from tests.roles.scenario import Events, changed, container_layer, explain, failures, role_playbook

pytestmark = [pytest.mark.container, pytest.mark.skipif(os.geteuid() != 0, reason="containers need root (./dev test runs as root in CI)")]

UBUNTU_2404 = {
    "distribution": "Ubuntu",
    "distribution_version": "24.04",
    "distribution_major_version": "24",
    "os_family": "Debian",
    "architecture": "x86_64",
    "kernel": "6.17.0-1010-gcp",  # the Cluster Toolkit's A3 Mega image patches the dmabuf helper for 6.17
}
UBUNTU_2204 = {**UBUNTU_2404, "distribution_version": "22.04", "distribution_major_version": "22", "kernel": "6.8.0-1025-gcp"}
GOOGLE_KEY = "/etc/apt/trusted.gpg.d/gpufabric-google-cloud.asc"
AR_KEY = "/etc/apt/trusted.gpg.d/gpufabric-google-artifact-registry.asc"
KEYS = ["https://packages.cloud.google.com/apt/doc/apt-key.gpg", "https://us-apt.pkg.dev/doc/repo-signing-key.gpg"]
# every Google source names the key that signs it (node-audit.md C5): none is trusted=yes, none relies on a key the image has
AR = f"deb [signed-by={GOOGLE_KEY}] http://packages.cloud.google.com/apt apt-transport-artifact-registry-stable main"
TCPXO_REPO = f"deb [arch=all signed-by={AR_KEY}] ar+https://us-apt.pkg.dev/projects/gce-ai-infra gpudirect-tcpxo-apt main"
GIB_REPO = f"deb [signed-by={AR_KEY}] ar+https://us-apt.pkg.dev/projects/gce-ai-infra gpudirect-gib-apt main"
TCPXO_IMAGES = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo"
# an 8-GPU NVSwitch board's check of the image's driver (node-audit.md C4)
NVSWITCH_CHECK = {"gpus": 8, "nvlink_fabric": "every GPU Completed, or nvidia-fabricmanager active"}


def exported_inventory(example: str, host: str, workdir: Path) -> Path:
    """The inventory the example's cloud stack exports when the provider reported its first GPU node, named ``host``
    here (the container that stands in for it)."""
    plan = plan_cluster(load_cluster(ROOT / "inventories" / example / "cluster.yaml"))
    assert plan.cloud is not None
    first = next(g for g in plan.cloud.groups if g.role == "gpu").hostnames[0]
    text = json.dumps(cloud_inventory(plan, {first: {"inband": "10.0.0.2"}}))
    path = workdir / f"{example}-inventory.json"
    path.write_text(text.replace(f'"{first}"', f'"{host}"'), encoding="utf-8")
    return path


def run(
    inventory: Path,
    node: Container,
    workdir: Path,
    facts: Mapping[str, str],
    *,
    check: bool,
    tags: str | None = None,
    role: str = "cloud_fabric",
    **extravars: object,
) -> tuple[NodesRun, Events]:
    """``role`` against ``node`` through the exported inventory (the container's connection layered over it)."""
    play = role_playbook(workdir, role, os_facts=facts)
    options = RunOptions(
        check=check, diff=True, limit=node.name, tags=tags, extra_inventories=(container_layer(workdir, [node]),), extravars=extravars
    )
    events = Events()
    result = run_playbook(inventory, options, lambda *_: None, playbook=str(play), observe=events)
    return result, events


def plan_of(events: Events) -> dict[str, Any]:
    [shown] = events.results("Plan | show it")
    return dict(shown["_cloud_fabric_plan"])


def after(events: Events, task: str) -> str:
    """The file content check mode's diff shows ``task`` would write."""
    [result] = events.results(task)
    assert result["changed"], task
    return str(result["diff"][0]["after"] if isinstance(result["diff"], list) else result["diff"]["after"])


def written(node: Container) -> list[str]:
    globs = ("etc/apt/sources.list.d/gpufabric*", "etc/systemd/system/gpufabric*", "etc/profile.d/*gib*", "etc/profile.d/gpufabric*")
    return sorted(str(p.relative_to(node.root)) for g in globs for p in node.root.glob(g)) + [
        str(p.relative_to(node.root)) for p in (node.root / "etc/udev/rules.d").glob("00-a3-megagpu.rules")
    ]


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Container]:
    """One node, no network at all: check mode must not need Google's or AWS's servers. Its name is the example's."""
    bookworm_image()
    files = {"/etc/yum.repos.d/.keep": ("", 0o644)}  # as on Rocky, for the gib RPM repository's plan
    with booted("a3m-01", tmp_path_factory.mktemp("cloud"), private_network=True, files=files) as container:
        yield container


def test_a3_mega_plans_googles_tcpxo_stack_rxdm_dmabuf_helper_and_the_fastrak_plugin(node: Container, tmp_path: Path) -> None:
    inventory = exported_inventory("gcp-a3mega", "a3m-01", tmp_path)
    result, events = run(inventory, node, tmp_path, UBUNTU_2404, check=True)
    assert result.ok, explain(result)
    assert plan_of(events) == {
        "stack": "tcpxo",
        "provider": "gcp",
        "fabric_nics": 8,
        "gpu_check": NVSWITCH_CHECK,
        "keys": KEYS,
        "repositories": [AR, TCPXO_REPO],
        "packages": ["apt-transport-artifact-registry", "dkms"],
        "dkms": {"module": "dmabuf-import-helper", "version": "1.1", "kernel_module": "import-helper", "string_namespace_patch": True},
        "images": {"nccl_plugin": f"{TCPXO_IMAGES}/nccl-plugin-gpudirecttcpx-dev:v1.0.17", "rxdm": f"{TCPXO_IMAGES}/tcpgpudmarxd-dev:v1.0.23"},
        "units": ["gpufabric-rxdm.service"],
        "files": [
            "/etc/apt/sources.list.d/gpufabric-artifact-registry.list",
            "/etc/apt/sources.list.d/gpufabric-gpudirect-tcpxo.list",
            "/etc/modules-load.d/gpufabric-tcpxo.conf",
            "/etc/udev/rules.d/00-a3-megagpu.rules",
            "/etc/systemd/system/gpufabric-rxdm.service",
            "/etc/profile.d/gpufabric-tcpxo.sh",
        ],
    }
    assert after(events, "the Artifact Registry transport repository") == AR + "\n"
    assert after(events, "apt repository gpudirect-tcpxo") == TCPXO_REPO + "\n"
    # Google's keys are fetched and checked before the repositories (skipped only because check mode downloads nothing)
    assert events.results("Google's apt signing keys, staged for their fingerprint check"), "tcpxo never includes google_keys.yml"
    assert after(events, "import-helper loaded at boot").endswith("\nimport-helper\n")
    assert 'ATTR{vendor}=="0x1ae0", ATTR{device}=="0x0084"' in after(events, "aperture devices")
    unit = after(events, "RxDM as a unit")
    [exec_start] = [line for line in unit.splitlines() if line.startswith("ExecStart=")]
    assert exec_start == (
        "ExecStart=/usr/bin/docker run --rm --name receive-datapath-manager --cap-add=NET_ADMIN --network=host --privileged"
        " --gpus all --volume /var/lib/nvidia/lib64:/usr/local/nvidia/lib64 --volume /dev/dmabuf_import_helper:/dev/dmabuf_import_helper"
        f" --env LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu {TCPXO_IMAGES}/tcpgpudmarxd-dev:v1.0.23 --num_hops=2 --num_nics=8 --uid= --alsologtostderr"
    )
    profile = after(events, "TCPXO NCCL environment")
    assert "NCCL_LIB_DIR=/var/lib/tcpxo/lib64 . /var/lib/tcpxo/lib64/nccl-env-profile.sh" in profile
    assert "export NCCL_FASTRAK_IFNAME=enp6s0,enp7s0,enp13s0,enp14s0,enp134s0,enp135s0,enp141s0,enp142s0\n" in profile
    assert "export NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY=/dev/aperture_devices\n" in profile
    for task in ("the installer container writes", "DKMS add, build and install", "RxDM enabled and running", "Verify | GPUDirect-TCPXO"):
        assert all(r.get("skipped") for r in events.results(task)), task  # nothing installed or started in check mode
    handlers = ("rebuild the initramfs", "apply the udev rule", "restart RxDM with its new unit")
    assert [len(events.results(h)) for h in handlers] == [1, 1, 1]  # notified; check mode runs none of them
    assert written(node) == []


def test_a3_ultra_plans_the_pinned_gib_plugin_and_its_environment(node: Container, tmp_path: Path) -> None:
    inventory = exported_inventory("gcp-a3ultra", "a3m-01", tmp_path)
    result, events = run(inventory, node, tmp_path, UBUNTU_2204, check=True)
    assert result.ok, explain(result)
    assert plan_of(events) == {
        "stack": "gib",
        "provider": "gcp",
        "fabric_nics": 8,
        "gpu_check": NVSWITCH_CHECK,
        "keys": KEYS,
        "repositories": [AR, GIB_REPO],
        "packages": ["apt-transport-artifact-registry", "nccl-gib=1.1.2"],
        "hold": ["nccl-gib"],
        "files": [
            "/etc/apt/sources.list.d/gpufabric-artifact-registry.list",
            "/etc/apt/sources.list.d/gpufabric-gpudirect-gib.list",
            "/etc/profile.d/nccl-gib.sh",
        ],
        "rdma_stack": "DOCA-OFED (ofed_info -s) unless the image is Google's accelerator-optimized one",
    }
    assert after(events, "apt repository gpudirect-gib") == GIB_REPO + "\n"
    profile = after(events, "NCCL/gIB environment")
    assert '. "/usr/local/gib/scripts/set_nccl_env.sh"' in profile
    assert 'export LD_LIBRARY_PATH="/usr/local/gib/lib64${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}"' in profile
    assert all(r.get("skipped") for r in events.results("nccl-gib, the pinned release"))
    assert written(node) == []


def test_aws_refuses_an_empty_installer_checksum_and_plans_the_pinned_one(node: Container, tmp_path: Path) -> None:
    inventory = exported_inventory("aws-p5", "a3m-01", tmp_path)
    result, events = run(inventory, node, tmp_path, UBUNTU_2204, check=True)
    assert result.ok, explain(result)
    plan = plan_of(events)
    assert (plan["stack"], plan["fabric_nics"]) == ("efa", 32)
    assert plan["download"] == {
        "url": "https://efa-installer.amazonaws.com/aws-efa-installer-1.41.0.tar.gz",
        "sha256": "3506354cdfbe31ff552fe75f5d0d9bb7efd29cf79bd99457347d29c751c38f9f",
    }
    refused, _ = run(inventory, node, tmp_path, UBUNTU_2204, check=True, cloud_fabric_efa_sha256="")
    [(task, message)] = failures(refused)["a3m-01"]
    assert task.startswith("Preflight | a provider and stack")
    assert "cloud_fabric_efa_sha256 must be the SHA256 AWS publishes for aws-efa-installer-1.41.0.tar.gz" in message


ROCKY_9 = {**UBUNTU_2204, "distribution": "Rocky", "distribution_version": "9.4", "distribution_major_version": "9", "os_family": "RedHat"}


def test_tcpxo_needs_an_apt_image(node: Container, tmp_path: Path) -> None:
    refused, _ = run(exported_inventory("gcp-a3mega", "a3m-01", tmp_path), node, tmp_path, ROCKY_9, check=True)
    [(_, message)] = failures(refused)["a3m-01"]
    assert "Rocky 9.4 (RedHat, x86_64) has no tcpxo packages here: Google ships GPUDirect-TCPXO for its Ubuntu/Debian images" in message


def test_a3_ultra_on_rocky_9_plans_googles_gib_rpm_repository_showing_only_the_pinned_release(node: Container, tmp_path: Path) -> None:
    """Google ships NCCL/gIB for Rocky/CentOS/RHEL 9+ as an .rpm (node-audit.md C10, R-gib): planned, not refused."""
    result, events = run(exported_inventory("gcp-a3ultra", "a3m-01", tmp_path), node, tmp_path, ROCKY_9, check=True)
    assert result.ok, explain(result)
    assert plan_of(events) == {
        "stack": "gib",
        "provider": "gcp",
        "fabric_nics": 8,
        "gpu_check": NVSWITCH_CHECK,
        "repositories": [{"gpudirect-gib-rpm": "https://packages.cloud.google.com/yum/repos/gpudirect-gib-rpm", "includepkgs": "nccl-gib-1.1.2*"}],
        "packages": ["nccl-gib-1.1.2"],
        "files": ["/etc/yum.repos.d/gpufabric-gpudirect-gib.repo", "/etc/profile.d/nccl-gib.sh"],
        "rdma_stack": "DOCA-OFED (ofed_info -s) unless the image is Google's accelerator-optimized one",
    }
    [repo] = events.results("Google's NCCL/gIB RPM repository")
    assert repo["changed"], repo
    assert not events.results("the Artifact Registry transport repository")  # no apt source on an EL node
    assert not (node.root / "etc/yum.repos.d/gpufabric-gpudirect-gib.repo").exists()
    refused, _ = run(
        exported_inventory("gcp-a3ultra", "a3m-01", tmp_path), node, tmp_path, {**ROCKY_9, "distribution_major_version": "8"}, check=True
    )
    [(_, message)] = failures(refused)["a3m-01"]
    assert "has no gib packages here: Google ships NCCL/gIB as a .deb (Debian 12+, Ubuntu 20.04+) and an .rpm (Rocky/CentOS/RHEL 9+)" in message


CLOUD_NVIDIA_SMI = """#!/bin/sh
# stub nvidia-smi of a cloud image: -q prints q.txt (each GPU's Fabric State), --query-gpu prints gpus.csv
d=$(dirname "$0")
if [ "$1" = -q ]; then cat "$d/q.txt"; else cat "$d/gpus.csv"; fi
"""


def cloud_gpus(states: list[str], driver: str = "570.133.20") -> dict[str, tuple[str, int]]:
    """An image's driver as nvidia-smi shows it: one GPU per state, each with ``Fabric / State: <state>``."""
    details = "".join(
        f"GPU 00000000:{0x04 + n:02X}:00.0\n    Product Name                          : NVIDIA H100 80GB HBM3\n"
        f"    Fabric\n        State                             : {state}\n        Status                            : Success\n"
        for n, state in enumerate(states)
    )
    return {
        "/srv/gpu/nvidia-smi": (CLOUD_NVIDIA_SMI, 0o755),
        "/srv/gpu/gpus.csv": ("".join(f"{n}, {driver}\n" for n in range(len(states))), 0o644),
        "/srv/gpu/q.txt": (details, 0o644),
    }


def nccl_gib_deb(workdir: Path, version: str) -> Path:
    """A package named nccl-gib at ``version`` (dpkg-deb), so dpkg's database on the node says what Google's would."""
    tree = workdir / "nccl-gib"
    (tree / "DEBIAN").mkdir(parents=True)
    control = f"Package: nccl-gib\nVersion: {version}\nArchitecture: all\nMaintainer: test <test@example.invalid>\nDescription: stand-in\n"
    (tree / "DEBIAN/control").write_text(control, encoding="utf-8")
    deb = workdir / "nccl-gib.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-b", str(tree), str(deb)], check=True, capture_output=True)
    return deb


def test_gib_verification_reads_the_installed_release_the_plugin_and_every_rdma_nic(tmp_path: Path) -> None:
    """A node laid out as after installation (the package in dpkg's database, Google's script and plugin, 8 RDMA NICs in
    a sysfs stand-in) passes the live checks and a rerun changes nothing; one NIC gone or another release fails, named."""
    sysfs = "/srv/sys/class/infiniband"
    files = {
        "/usr/local/gib/scripts/set_nccl_env.sh": ("export NCCL_NET=gIB\n", 0o755),
        "/usr/local/gib/lib64/libnccl-net_internal.so": ("", 0o644),
        "/usr/local/bin/ofed_info": ("#!/bin/sh\necho OFED-internal-25.10-1.2.8:\n", 0o755),  # DOCA-OFED on a standard image
        **cloud_gpus(["Completed"] * 8),
        **{f"{sysfs}/mlx5_{n}/ports/1/state": ("4: ACTIVE\n", 0o644) for n in range(8)},
    }
    inventory = exported_inventory("gcp-a3ultra", "a3u-01", tmp_path)
    with booted("a3u-01", tmp_path, private_network=True, files=files) as node:
        deb = nccl_gib_deb(tmp_path, "1.1.2")
        (node.root / "srv/nccl-gib.deb").write_bytes(deb.read_bytes())
        node.run("dpkg -i /srv/nccl-gib.deb")
        live = {"_cloud_fabric_sysfs_infiniband": sysfs, "cloud_fabric_nvidia_smi": "/srv/gpu/nvidia-smi"}
        first, _ = run(inventory, node, tmp_path, UBUNTU_2204, check=False, tags="cloud_fabric_verify", **live)
        assert first.ok, explain(first)
        assert changed(first) == {"a3u-01": 0}

        node.run(f"rm -r {sysfs}/mlx5_7")
        wrong_release = {**live, "cloud_fabric_gib_version": "1.1.3"}
        refused, _ = run(inventory, node, tmp_path, UBUNTU_2204, check=False, tags="cloud_fabric_verify", **wrong_release)
        [(task, message)] = failures(refused)["a3u-01"]
        assert task == "Verify | NCCL/gIB is installed and sees every RDMA NIC of the plan"
        assert "nccl-gib is 1.1.2, expected 1.1.3;" in message
        assert f"7 RDMA NICs in {sysfs} (mlx5_0, mlx5_1, mlx5_2, mlx5_3, mlx5_4, mlx5_5, mlx5_6), the plan has 8;" in message

        # a standard image without DOCA-OFED (no metadata server here: the image is unknown), node-audit.md C11
        node.run(f"rm /usr/local/bin/ofed_info && mkdir {sysfs}/mlx5_7")
        no_doca, _ = run(inventory, node, tmp_path, UBUNTU_2204, check=False, tags="cloud_fabric_verify", **live)
        [(task, message)] = failures(no_doca)["a3u-01"]
        assert task == "Verify | a standard image has DOCA-OFED under NCCL/gIB (Google's accelerator-optimized images ship their own)"
        assert "NCCL/gIB needs NVIDIA DOCA-OFED on a standard OS image" in message
        assert "the image is unknown (no metadata server answer)" in message


DOCKER_STUB = """#!/bin/sh
# test stand-in for docker: RxDM's log as Google's prolog waits for it
[ "$1" = logs ] && [ "$2" = receive-datapath-manager ] && echo "Buffer manager initialization complete" && exit 0
exit 1
"""
A3_MEGA_NICS = ("enp0s12", "enp6s0", "enp7s0", "enp13s0", "enp14s0", "enp134s0", "enp135s0", "enp141s0", "enp142s0")


def test_tcpxo_verification_reads_the_helper_device_the_plugin_rxdms_log_and_every_gpu_nic(tmp_path: Path) -> None:
    """An A3 Mega node laid out as after installation (the dmabuf device, Google's plugin files, RxDM's log through a
    docker stand-in, the 8 GPU NICs as veths with Google's names) passes the live checks; without the device and with
    one GPU NIC fewer in the plan's view, the failure names both."""
    files = {
        "/var/lib/tcpxo/lib64/libnccl-net.so": ("", 0o644),
        "/var/lib/tcpxo/lib64/nccl-env-profile.sh": ("export NCCL_FASTRAK_NUM_FLOWS=2\n", 0o644),
        "/srv/dev/dmabuf_import_helper": ("", 0o666),
        "/usr/local/bin/docker": (DOCKER_STUB, 0o755),
        **cloud_gpus(["Completed"] * 8),
    }
    inventory = exported_inventory("gcp-a3mega", "a3m-01", tmp_path)
    live = {"_cloud_fabric_tcpxo_dmabuf_device": "/srv/dev/dmabuf_import_helper", "cloud_fabric_nvidia_smi": "/srv/gpu/nvidia-smi"}
    with booted("a3m-01", tmp_path, planes=A3_MEGA_NICS, files=files) as node:
        passed, _ = run(inventory, node, tmp_path, UBUNTU_2404, check=False, tags="cloud_fabric_verify", **live)
        assert passed.ok, explain(passed)
        assert changed(passed) == {"a3m-01": 0}

        node.run("rm /srv/dev/dmabuf_import_helper")
        nine = {**live, "gpufabric_gpu_nics": 9}
        refused, _ = run(inventory, node, tmp_path, UBUNTU_2404, check=False, tags="cloud_fabric_verify", **nine)
        [(task, message)] = failures(refused)["a3m-01"]
        assert task == "Verify | GPUDirect-TCPXO is in place on every GPU NIC of the plan"
        assert "/srv/dev/dmabuf_import_helper is missing (import-helper not loaded);" in message
        assert "GPU NICs present: enp6s0,enp7s0,enp13s0,enp14s0,enp134s0,enp135s0,enp141s0,enp142s0, the plan has 9;" in message

        # the image's driver (node-audit.md C4): one GPU gone, another not in the NVLink fabric (no Fabric Manager here)
        node.run("touch /srv/dev/dmabuf_import_helper")
        for path, (text, _) in cloud_gpus(["Completed"] * 6 + ["In Progress"]).items():
            (node.root / path.lstrip("/")).write_text(text)
        broken, _ = run(inventory, node, tmp_path, UBUNTU_2404, check=False, tags="cloud_fabric_verify", **live)
        [(task, message)] = failures(broken)["a3m-01"]
        assert task == "Verify | every GPU of the instance type, on one driver, in the NVLink fabric where the board has NVSwitch"
        assert "nvidia-smi shows 7 GPUs, the instance type has 8" in message
        assert "GPU 00000000:0A:00.0: fabric state In Progress, not Completed (nvidia-fabricmanager: inactive)" in message


def test_azure_nd_points_nccl_at_the_topology_file_of_its_size(node: Container, tmp_path: Path) -> None:
    """ND A100 v4 as the azure_rm inventory gives it (its hostvar_expressions): /etc/nccl.conf gets the ndv4 file, the
    one the plan's NCCL settings name, not the ndv5 default."""
    inventory = tmp_path / "azure.json"
    azure = {
        "gpufabric_target": "azure",
        "gpufabric_gpu_stack": "nd-ib",
        "gpufabric_gpu_nics": 8,
        "gpufabric_nccl_env": {"NCCL_TOPO_FILE": "/opt/microsoft/ndv4-topo.xml"},
    }
    inventory.write_text(json.dumps({"all": {"children": {"gpu_nodes": {"hosts": {node.name: azure}}}}}), encoding="utf-8")
    result, events = run(inventory, node, tmp_path, UBUNTU_2204, check=True)
    assert result.ok, explain(result)
    assert plan_of(events)["nccl_conf"] == {"/etc/nccl.conf": "NCCL_TOPO_FILE=/opt/microsoft/ndv4-topo.xml"}
    assert after(events, "NCCL uses the ND topology file") == "NCCL_TOPO_FILE=/opt/microsoft/ndv4-topo.xml\n"


GOLDEN_NODES = {"aws-p5": UBUNTU_2204, "gcp-a3mega": UBUNTU_2404, "gcp-a3ultra": UBUNTU_2204, "azure-ndv5": UBUNTU_2204}


@pytest.mark.parametrize("example", sorted(GOLDEN_NODES))
def test_a_gpu_node_of_each_provider_has_its_plan_in_a_golden(node: Container, tmp_path: Path, example: str, update_golden: bool) -> None:
    """One GPU node per provider (AWS p5, GCP A3 Mega and A3 Ultra, Azure ND H100 v5), on the image its definition
    names, planned in check mode through the inventory its stack exports: what cloud_fabric would install and check,
    committed as tests/data/<example>/golden/nodes/cloud_fabric-plan.json (./dev golden rewrites it)."""
    result, events = run(exported_inventory(example, "a3m-01", tmp_path), node, tmp_path, GOLDEN_NODES[example], check=True)
    assert result.ok, explain(result)
    plan = plan_of(events)
    assert plan["gpu_check"] == NVSWITCH_CHECK  # all four are NVSwitch boards
    golden = ROOT / "tests" / "data" / example / "golden" / "nodes" / "cloud_fabric-plan.json"
    check_golden(golden, json.dumps(plan, indent=2, sort_keys=True) + "\n", update_golden)
    assert written(node) == []
