"""The current generation as cited data (issue 35): each new model's key figures against its source, and the models and
NOSes the catalog describes but does not build for, refused with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.catalog.switch_refused import REFUSED_SWITCH_MODELS, UNRENDERED_NOS
from fabric.catalog.switches import SWITCH_MODELS
from fabric.errors import InputError
from fabric.model import load_cluster
from fabric.model.rules import check_spec

IB = Path(__file__).parents[2] / "inventories" / "onprem-ib" / "cluster.yaml"


def test_quantum_x800_q3400_follows_the_xdr_manual() -> None:
    q = SWITCH_MODELS["q3400"]
    # [xdr-q3400]: 144 XDR ports at 800 Gb/s, InfiniBand, NVOS only; two ports per twin-port OSFP cage, no split named.
    assert (q.link_layer, q.ports, q.speed_gbps, q.ports_per_cage, q.cages) == ("infiniband", 144, 800, 2, 72)
    assert q.speeds() == (800,)
    assert list(q.nos) == ["nvos"]
    assert (q.port_name("nvos", 0, 800), q.port_name("nvos", 143, 800)) == ("sw1p1", "sw72p2")  # [nvos-names]


def test_nexus_9364e_sg2_o_follows_the_cited_figures() -> None:
    n = SWITCH_MODELS["n9k-c9364e-sg2-o"]
    # [nxos-9364e] 64 x 800G OSFP; [cisco-osfp800] 2 x 400, 4 x 200, 8 x 100.
    assert (n.ports, n.speed_gbps, n.lanes) == (64, 800, 8)
    assert [n.radix(s) for s in (800, 400, 200, 100)] == [64, 128, 256, 512]
    assert list(n.nos) == ["nxos"]
    assert n.sonic is None
    assert n.max_mtu("nxos") == 9216
    assert (n.port_name("nxos", 1, 400), n.port_name("nxos", 511, 100)) == ("Ethernet1/1/2", "Ethernet1/64/8")


def _ib_with(tmp_path: Path, old: str, new: str) -> Path:
    text = IB.read_text(encoding="utf-8")
    assert old in text
    out = tmp_path / "cluster.yaml"
    out.write_text(text.replace(old, new, 1), encoding="utf-8")
    return out


def test_a_tier_asking_for_nvos_is_refused_with_the_reason(tmp_path: Path) -> None:
    path = _ib_with(tmp_path, "leaf: {model: qm9700, nos: mlnx-os}", "leaf: {model: q3400, nos: nvos}")
    with pytest.raises(InputError) as err:
        load_cluster(path)
    assert "nos 'nvos' is not rendered: NVOS" in str(err.value)
    assert "NVUE only" in str(err.value)


def test_the_q3400_under_mlnx_os_is_refused_naming_nvos_and_why(tmp_path: Path) -> None:
    path = _ib_with(tmp_path, "leaf: {model: qm9700, nos: mlnx-os}", "leaf: {model: q3400, nos: mlnx-os}")
    found = [f for f in check_spec(load_cluster(path)) if f.path == ("fabric", "leaf", "nos")]
    assert len(found) == 1
    assert "q3400 does not run mlnx-os; it runs nvos (NVOS" in found[0].message


def test_the_modular_7800r4_is_refused_with_the_reason(tmp_path: Path) -> None:
    path = _ib_with(tmp_path, "spine: {model: qm9700, nos: mlnx-os}", "spine: {model: 7800r4, nos: eos}")
    with pytest.raises(InputError) as err:
        load_cluster(path)
    assert "switch model '7800r4' is not supported: the Arista 7800R4 is a modular chassis" in str(err.value)


def test_refused_entries_are_not_also_catalog_models() -> None:
    assert not set(REFUSED_SWITCH_MODELS) & set(SWITCH_MODELS)
    # every unrendered NOS is run by some model (else the entry is dead) and has no release table to pick from
    from fabric.catalog.releases import NOS_RELEASES

    assert {n for m in SWITCH_MODELS.values() for n in m.nos} >= set(UNRENDERED_NOS)
    assert not set(UNRENDERED_NOS) & set(NOS_RELEASES)


def test_dgx_b300_follows_the_connectx8_link_speeds() -> None:
    from fabric.catalog.hardware import HARDWARE

    ib, eth = HARDWARE["dgx-b300"], HARDWARE["dgx-b300-eth"]
    # [cx8-fw] "800Gb/s or XDR IB or 2 x 400GbE"; "800GbE link speed is not supported on a single port"
    assert (ib.gpus, ib.ports["compute"].count, ib.ports["compute"].speed_gbps) == (8, 8, 800)
    assert (eth.gpus, eth.ports["compute"].count, eth.ports["compute"].speed_gbps) == (8, 16, 400)
    assert ib.nvswitch
    assert (ib.arch, eth.arch) == ("x86_64", "x86_64")
    hgx = HARDWARE["hgx-b300"]  # [hgx-b300] "8x ConnectX 8 SuperNICs", up to 800 Gb/s per GPU
    assert (hgx.gpus, hgx.ports["compute"].count, hgx.ports["compute"].speed_gbps, hgx.nvswitch) == (8, 8, 800, True)


@pytest.mark.parametrize(("name", "speed"), [("dgx-gb200", 400), ("dgx-gb300", 800)])
def test_nvl72_trays_are_arm64_four_gpu_nodes_of_an_18_tray_domain(name: str, speed: int) -> None:
    from fabric.catalog.hardware import HARDWARE

    tray = HARDWARE[name]
    # [gb200-tray] two Grace CPUs and four Blackwell GPUs per tray, 18 trays (72 GPUs) per rack; [gb200-mlperf] 144 cores
    assert (tray.gpus, tray.nvlink_domain_nodes, tray.gpus * (tray.nvlink_domain_nodes or 0)) == (4, 18, 72)
    assert (tray.arch, tray.sockets, tray.cores_per_socket) == ("arm64", 2, 72)
    assert (tray.ports["compute"].count, tray.ports["compute"].speed_gbps) == (4, speed)
    assert not tray.nvswitch  # the NVLink switches are the rack's switch trays


def test_an_architecture_the_schema_does_not_know_is_refused(tmp_path: Path) -> None:
    from fabric.catalog.hardware import load_node_profiles

    directory = tmp_path / "nodes"
    directory.mkdir()
    (directory / "tray.yaml").write_text(
        "name: tray\ndescription: x\narch: aarch64\ngpus: 0\nports:\n  inband: {speed_gbps: 1, names: [eth0]}\n", encoding="utf-8"
    )
    with pytest.raises(InputError) as err:
        load_node_profiles(directory)
    assert "arch" in str(err.value)
    assert "'x86_64' or 'arm64'" in str(err.value)


def test_each_nvl72_rack_is_one_slurm_block_and_one_kubernetes_level() -> None:
    from fabric.export.k8s.topology import NVLINK_LABEL, node_labels, topology_levels
    from fabric.export.slurm import nvlink_blocks
    from fabric.plan import plan_cluster

    plan = plan_cluster(load_cluster(IB.parent.parent / "onprem-ib-sharp" / "cluster.yaml"))
    blocks = nvlink_blocks(plan)
    assert {k: (v[0], v[-1], len(v)) for k, v in blocks.items()} == {"gpu-nvl01": ("gb01", "gb18", 18), "gpu-nvl02": ("gb19", "gb36", 18)}
    labels = node_labels(plan)
    assert {labels[h][NVLINK_LABEL] for h in ("gb01", "gb18")} == {"gpu-nvl01"}
    assert labels["gb19"][NVLINK_LABEL] == "gpu-nvl02"
    assert topology_levels(labels)[-2:] == [NVLINK_LABEL, "kubernetes.io/hostname"]
    # negative control: DGX H100 nodes have no multi-node NVLink domain, so no such level
    assert NVLINK_LABEL not in topology_levels(node_labels(plan_cluster(load_cluster(IB))))


def test_an_nvlink_domain_across_two_groups_gets_no_kubernetes_level() -> None:
    from fabric.export.k8s.topology import NVLINK_LABEL, _add_level  # pyright: ignore[reportPrivateUsage]

    labels = {"a": {"su": "su01"}, "b": {"su": "su02"}}
    _add_level(labels, {"a": "nvl01", "b": "nvl01"}, NVLINK_LABEL)  # one domain over two units: Kueue's levels would not nest
    assert NVLINK_LABEL not in labels["a"]
    _add_level(labels, {"a": "nvl01", "b": "nvl02"}, NVLINK_LABEL)
    assert labels["b"][NVLINK_LABEL] == "nvl02"


# [gb200-ns] NVIDIA Mission Control North-South Network GB200 Deployment Guide 2.3.0, "GB200 Compute Tray" table:
# port -> PCIe address (domain:bus:dev.fn, hex) -> RDMA device, for the four InfiniBand OSFP ports in the table's order.
GB200_TRAY_TABLE = [
    ("Left Bay OSFP P3", "0000:03:00.0", "mlx5_0"),
    ("Left Bay OSFP P4", "0002:03:00.0", "mlx5_1"),
    ("Right Bay OSFP P3", "0010:03:00.0", "mlx5_4"),
    ("Right Bay OSFP P4", "0012:03:00.0", "mlx5_5"),
]


def test_the_gb200_tray_ports_are_nvidias_table() -> None:
    from fabric.catalog.hardware import HARDWARE
    from fabric.export.k8s import pci_address
    from fabric.plan.types import HostInterface

    compute = HARDWARE["dgx-gb200"].ports["compute"]
    assert compute.hcas == tuple(hca for _, _, hca in GB200_TRAY_TABLE)
    # [systemd-naming] P<domain> (decimal) only when the domain is not 0; [nco-gb200] names the same four ports so
    assert compute.names == ("ibp3s0", "ibP2p3s0", "ibP16p3s0", "ibP18p3s0")
    # each name reads back to the table's PCI address (the k8s export selects a rail's PF by it)
    ports = [HostInterface(name, "compute", i, 400, 4092, "infiniband") for i, name in enumerate(compute.names)]
    assert [pci_address(p) for p in ports] == [address for _, address, _ in GB200_TRAY_TABLE]
    assert not compute.unpublished
    inband = HARDWARE["dgx-gb200"].ports["inband"]  # [gb200-ns] "Left Bay BF3 P1 | 06:03:00.0": domain 6, function 0
    assert (inband.names, inband.unpublished) == (("enP6p3s0f0np0",), ())
    assert pci_address(HostInterface(inband.names[0], "inband", 0, 200, 1500, "ethernet")) == "0006:03:00.0"


def test_a_name_without_a_domain_is_still_domain_zero() -> None:
    from fabric.export.k8s import pci_address
    from fabric.plan.types import HostInterface

    # negative control for the domain: the DGX H100 rail 0 port ([dgx-h100-ports] ibp24s0) is 0000:18:00.0
    assert pci_address(HostInterface("ibp24s0", "compute", 0, 400, 4092, "infiniband")) == "0000:18:00.0"
    assert pci_address(HostInterface("enP22p3s0f1np1", "inband", 0, 200, 1500, "ethernet")) == "0016:03:00.1"


def test_the_gb300_tray_names_are_published_its_rdma_devices_are_not() -> None:
    from fabric.catalog.hardware import HARDWARE

    tray = HARDWARE["dgx-gb300"]
    # [gb300-cx8-gdr] "NIC PCI device: 0000:03:00.0 ... Net device: ibp3s0"; [gb300-node] the four at "800 Gb/sec (4X XDR)"
    assert tray.ports["compute"].names == ("ibp3s0", "ibP2p3s0", "ibP16p3s0", "ibP18p3s0")
    assert tray.ports["compute"].unpublished == ("hcas",)
    assert tray.ports["inband"].unpublished == ("names",)


def test_dgx_b300_cpu_and_memory_follow_nvidias_mlperf_system_file() -> None:
    from fabric.catalog.hardware import HARDWARE

    # [dgx-b300-mlperf] "host_processors_per_node": 2, "host_processor_core_count": 56, "host_memory_capacity": "2 TB"
    for name in ("dgx-b300", "dgx-b300-eth"):
        node = HARDWARE[name]
        assert (node.sockets, node.cores_per_socket, node.memory_gb) == (2, 56, 2048)
    hgx = HARDWARE["hgx-b300"]  # the OEM's CPUs: not given
    assert (hgx.sockets, hgx.cores_per_socket, hgx.memory_gb) == (None, None, None)


def test_the_profiles_without_a_port_table_mark_every_placeholder() -> None:
    from fabric.catalog.hardware import HARDWARE

    marked = {
        name: {plane: group.unpublished for plane, group in HARDWARE[name].ports.items() if group.unpublished}
        for name in ("dgx-b300", "dgx-b300-eth", "hgx-b300", "dgx-gb200", "dgx-gb300")
    }
    no_table = {"compute": ("names", "hcas"), "storage": ("names", "hcas"), "inband": ("names",)}
    assert marked == {
        "dgx-b300": no_table,
        "dgx-b300-eth": no_table,
        "hgx-b300": no_table,
        "dgx-gb200": {},
        "dgx-gb300": {"compute": ("hcas",), "inband": ("names",)},
    }


def _b300_group(tmp_path: Path, extra: str = "") -> Path:
    text = (Path(__file__).parents[1] / "data" / "plan" / "superpod-b300" / "cluster.yaml").read_text(encoding="utf-8")
    old = "hardware: dgx-b300-eth}"
    assert old in text
    out = tmp_path / "cluster.yaml"
    out.write_text(text.replace(old, f"hardware: dgx-b300-eth{extra}}}", 1), encoding="utf-8")
    return out


def _placeholder_warnings(path: Path) -> list[str]:
    return [f.message for f in check_spec(load_cluster(path)) if "placeholder" in f.message and f.severity == "warning"]


def test_a_group_on_placeholder_names_is_warned_per_plane(tmp_path: Path) -> None:
    warnings = _placeholder_warnings(_b300_group(tmp_path))
    assert len(warnings) == 3
    assert warnings[0].startswith(
        "group 'gpu': profile 'dgx-b300-eth' has placeholder compute interface names (enp0s0f0np0, enp0s0f1np1, ... 16 in all) "
        "and RDMA devices (mlx5_0, mlx5_1, ... 16 in all): no vendor document gives them"
    )
    assert "set nodes[0].ports.compute (names and hcas)" in warnings[0]
    assert "placeholder storage" in warnings[1]
    assert "placeholder inband interface names (enp10s0f1np1)" in warnings[2]
    assert "set nodes[0].interfaces.inband (names) or ports.inband" in warnings[2]


def test_a_group_that_sets_its_own_names_is_not_warned(tmp_path: Path) -> None:
    names = ", ".join(f"eth{i}" for i in range(16))
    hcas = ", ".join(f"mlx5_{i}" for i in range(16))
    own = (
        f", ports: {{compute: {{count: 16, speed_gbps: 400, ports_per_nic: 2, names: [{names}], hcas: [{hcas}]}}, "
        "storage: {count: 2, speed_gbps: 200, names: [st0, st1], hcas: [mlx5_16, mlx5_17]}}, "
        "interfaces: {inband: [mgmt0]}"
    )
    assert _placeholder_warnings(_b300_group(tmp_path, own)) == []
    # names alone do not answer for the RDMA devices: only the compute plane's hcas are left
    only_names = f", interfaces: {{compute: [{names}], storage: [st0, st1], inband: [mgmt0]}}"
    left = _placeholder_warnings(_b300_group(tmp_path, only_names))
    assert [w.split(": no vendor")[0] for w in left] == [
        "group 'gpu': profile 'dgx-b300-eth' has placeholder compute RDMA devices (mlx5_0, mlx5_1, ... 16 in all)",
        "group 'gpu': profile 'dgx-b300-eth' has placeholder storage RDMA devices (mlx5_16, mlx5_17)",
    ]


def test_the_gb200_example_has_no_placeholder_warning() -> None:
    assert _placeholder_warnings(IB.parent.parent / "onprem-ib-sharp" / "cluster.yaml") == []


def test_unpublished_rdma_devices_need_rdma_devices(tmp_path: Path) -> None:
    from fabric.catalog.hardware import load_node_profiles

    directory = tmp_path / "nodes"
    directory.mkdir()
    (directory / "box.yaml").write_text(
        "name: box\ngpus: 0\nports:\n  inband: {speed_gbps: 100, names: [eth0], unpublished: [hcas]}\n", encoding="utf-8"
    )
    with pytest.raises(InputError) as err:
        load_node_profiles(directory)
    assert "unpublished lists hcas but the ports give none" in str(err.value)


def test_lint_says_which_profile_names_it_took_on_trust(tmp_path: Path) -> None:
    """``fabric lint`` checks NCCL_IB_HCA and the cabling against the profile's names: it prints the placeholder warning
    (text) and lists it (``--json``), and still exits 0 (a warning, not a finding)."""
    import json
    import subprocess
    import sys

    definition = _b300_group(tmp_path)
    definition.write_text(definition.read_text(encoding="utf-8").replace("count: 64,", "count: 8,", 1), encoding="utf-8")
    run = [sys.executable, "-m", "fabric", "lint", str(definition)]
    root = Path(__file__).parents[2]
    text = subprocess.run(run, cwd=root, capture_output=True, text=True, timeout=120, check=False)
    assert text.returncode == 0, text.stderr
    assert " ".join(text.stderr.split()).count("has placeholder") == 3
    as_json = subprocess.run([*run, "--json"], cwd=root, capture_output=True, text=True, timeout=120, check=False)
    data = json.loads(as_json.stdout)
    assert data["clean"] is True
    assert [(w["severity"], w["path"]) for w in data["warnings"]] == [("warning", ["nodes", 0, "hardware"])] * 3
