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
