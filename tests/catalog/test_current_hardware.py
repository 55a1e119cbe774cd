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
