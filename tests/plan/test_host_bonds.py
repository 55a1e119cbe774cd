"""A host bond gets one plane address (its first member's), its other members none, and no other address moves."""

from __future__ import annotations

from pathlib import Path

from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.plan.host_bonds import host_bonds
from tests.conftest import ROOT

SITE = ROOT / "inventories" / "onprem-roce" / "cluster.yaml"


def per_port(tmp_path: Path) -> Path:
    """The same site with ``attach: per-port`` storage: no host bonds, every storage port its own address."""
    text = SITE.read_text(encoding="utf-8")
    changed = text.replace("network: {converged: true,", "network: {attach: per-port, converged: true,", 1)
    assert changed != text
    path = tmp_path / "cluster.yaml"
    path.write_text(changed, encoding="utf-8")
    return path


def addresses(definition: Path) -> dict[tuple[str, str], str | None]:
    plan = plan_cluster(load_cluster(definition))
    return {(n.hostname, i.name): i.address for n in plan.nodes for i in n.interfaces}


def test_a_bond_member_other_than_the_first_gets_no_address_and_the_bond_keeps_the_first_ones() -> None:
    plan = plan_cluster(load_cluster(SITE))
    gpu001 = plan.nodes[0]
    [bond] = host_bonds(plan, gpu001)
    first, *others = bond["members"]
    by_name = {i.name: i for i in gpu001.interfaces}
    assert bond["address"] == by_name[first].address == "10.101.0.16/16"
    assert others
    assert all(by_name[m].address is None for m in others)


def test_bonding_moves_no_address_of_any_host_or_port_it_does_not_silence(tmp_path: Path) -> None:
    bonded, unbonded = addresses(SITE), addresses(per_port(tmp_path))
    assert bonded.keys() == unbonded.keys()
    silenced = {key for key, address in bonded.items() if address is None and unbonded[key] is not None}
    plan = plan_cluster(load_cluster(SITE))
    members = {(n.hostname, m) for n in plan.nodes for b in host_bonds(plan, n) for m in b["members"][1:]}
    assert silenced == members  # exactly the bond members after the first
    assert {k: v for k, v in bonded.items() if k not in members} == {k: v for k, v in unbonded.items() if k not in members}
    # hosts without a bond (the management nodes) keep every address, byte for byte
    assert [(k, v) for k, v in bonded.items() if k[0].startswith("mgmt")] == [(k, v) for k, v in unbonded.items() if k[0].startswith("mgmt")]
    assert any(k[0].startswith("mgmt") for k in bonded)
