"""The NIC side of the RoCE contract (issue 34): which NIC each group has, the CNP marking derived from the NICs where
the definition leaves it out, and per field either the roles set the NIC or the definition is refused, naming NIC
model, node group and field (fabric.model.nics)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.errors import InputError
from fabric.validate import validate_file
from tests.conftest import DATA

MIXED = DATA / "render" / "mixed-nic" / "cluster.yaml"
THOR2 = DATA / "render" / "thor2-eos" / "cluster.yaml"


def definition(tmp_path: Path, source: Path, *edits: tuple[str, str]) -> Path:
    text = source.read_text(encoding="utf-8")
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / "cluster.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def errors(path: Path) -> list[str]:
    with pytest.raises(InputError) as caught:
        validate_file(path)
    return [str(f) for f in caught.value.findings if f.severity == "error"]


def test_mixed_nics_that_disagree_keep_the_contracts_cnp_and_the_thor2s_are_set() -> None:
    plan = validate_file(MIXED).plan
    assert (plan.roce.cnp.dscp, plan.roce.cnp.priority, plan.roce.cnp.traffic_class) == (48, 6, 6)
    assert {n.group: n.sets for n in plan.nics} == {"nv": ("roce_dscp", "roce_priority"), "amd": ("cnp_priority",)}


def test_an_all_thor2_fabric_takes_broadcoms_cnp_priority_and_sets_nothing() -> None:
    plan = validate_file(THOR2).plan
    assert (plan.roce.cnp.dscp, plan.roce.cnp.priority, plan.roce.cnp.traffic_class) == (48, 7, 7)
    assert [n.sets for n in plan.nics] == [()]


def test_a_cnp_the_definition_names_wins_and_the_nics_are_set_to_it(tmp_path: Path) -> None:
    path = definition(tmp_path, THOR2, ("planes:\n", "roce: {cnp: {dscp: 46, priority: 6}}\nplanes:\n"))
    plan = validate_file(path).plan
    assert (plan.roce.cnp.dscp, plan.roce.cnp.priority, plan.roce.cnp.traffic_class) == (46, 6, 6)
    assert [n.sets for n in plan.nics] == [("cnp_dscp", "cnp_priority")]


def test_a_group_may_override_its_profiles_nic(tmp_path: Path) -> None:
    path = definition(tmp_path, MIXED, ("hardware: gpu-cx7}", "hardware: gpu-cx7, nic: thor2}"))
    plan = validate_file(path).plan
    assert [(n.group, n.model) for n in plan.nics] == [("nv", "thor2"), ("amd", "thor2")]
    assert plan.roce.cnp.priority == 7  # now every NIC is a Thor2: the contract takes its CNP priority


def test_an_unknown_nic_model_is_refused_with_the_known_ones(tmp_path: Path) -> None:
    path = definition(tmp_path, MIXED, ("hardware: gpu-cx7}", "hardware: gpu-cx7, nic: connectx7}"))
    assert errors(path) == [
        f"{path}:47: error: nodes[0].nic: unknown NIC model 'connectx7'; did you mean 'connectx-7'? known: bluefield-3, connectx-7, "
        "connectx-8, pollara-400, thor2 (fabric/catalog/data/nics/)"
    ]


def test_a_nic_that_cannot_be_set_and_documents_nothing_is_refused_per_field(tmp_path: Path) -> None:
    path = definition(tmp_path, MIXED, ("hardware: gpu-cx7}", "hardware: gpu-cx7, nic: pollara-400}"))
    found = errors(path)
    assert len(found) == 4
    assert found[2] == (
        f"{path}:47: error: nodes[0].nic: group 'nv': the AMD pollara-400 NIC sends a CNP DSCP no cited document gives and "
        "gpufabric cannot set it (fabric/catalog/data/nics/pollara-400.yaml: not settable), but the contract's roce.cnp.dscp is 48; "
        "the switches would classify its packets wrongly. Fix: cite the NIC's value in its catalog file, or give the group a NIC gpufabric can set"
    )


def test_a_thor2_group_defaults_to_and_may_ask_for_the_inbox_rdma_stack_a_connectx_group_may_not(tmp_path: Path) -> None:
    plan = validate_file(MIXED).plan
    assert {n.group: n.rdma_stack for n in plan.nodes} == {"nv": "doca", "amd": "inbox"}
    path = definition(tmp_path, MIXED, ("hardware: gpu-thor2, id_offset: 1}", "hardware: gpu-thor2, id_offset: 1, rdma_stack: inbox}"))
    assert validate_file(path).plan.nics
    path = definition(tmp_path, MIXED, ("hardware: gpu-cx7}", "hardware: gpu-cx7, rdma_stack: inbox}"))
    assert [e.split(": ", 3)[2] for e in errors(path)] == ["nodes[0].rdma_stack"]
