"""Loader behaviour users rely on: every problem at once, located by line, secrets never echoed."""

from __future__ import annotations

import pytest

from fabric.errors import InputError
from fabric.model.loader import parse_cluster
from tests.conftest import EXAMPLES

BAD = """name: Lab
target: onprm
planes:
  compute: {transport: roce, cidr: 10.100.0.0/33}
  storage: {cidr: 10.101.0.0/16, mtu: 9000}
  inband: {cidr: 10.102.0.0/16, gatway: 10.102.0.1}
  oob: {cidr: 10.103.0.0/16}
switches:
  credentials: {password: TopSecret99}
nodes:
  - {group: gpu, role: gpu, count: 4, hostname: "node{index}", hardware: lab-nod}
"""


def test_all_schema_problems_are_reported_together() -> None:
    with pytest.raises(InputError) as caught:
        parse_cluster(BAD, "bad.yaml")
    by_path = {f.dotted_path: f for f in caught.value.findings}
    assert set(by_path) == {
        "name",
        "target",
        "planes.compute.cidr",
        "planes.inband.gatway",
        "switches.credentials.password",
        "nodes[0].hardware",
    }
    assert by_path["target"].line == 2
    assert "did you mean 'onprem'?" in by_path["target"].message
    assert "did you mean 'gateway'?" in by_path["planes.inband.gatway"].message
    assert "did you mean 'lab-node'?" in by_path["nodes[0].hardware"].message
    assert all(f.file == "bad.yaml" for f in caught.value.findings)


def test_secret_value_never_appears_in_the_report() -> None:
    with pytest.raises(InputError) as caught:
        parse_cluster(BAD, "bad.yaml")
    assert "TopSecret99" not in str(caught.value)


def test_empty_and_non_mapping_files_are_refused_clearly() -> None:
    for text in ("", "- a\n- b\n"):
        with pytest.raises(InputError) as caught:
            parse_cluster(text, "x.yaml")
        assert "a cluster definition is a mapping" in caught.value.findings[0].message


def test_missing_file_is_an_input_error(tmp_path) -> None:
    from fabric.model import load_cluster

    with pytest.raises(InputError, match="cannot read the definition"):
        load_cluster(tmp_path / "nope.yaml")


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.parent.name for e in EXAMPLES])
def test_examples_reference_the_committed_schema(example) -> None:
    assert example.read_text(encoding="utf-8").startswith("# yaml-language-server: $schema=../../schema/cluster.schema.json")


def test_committed_schema_matches_the_models() -> None:
    from fabric.cli.validate import schema_json
    from tests.conftest import ROOT

    committed = (ROOT / "schema" / "cluster.schema.json").read_text(encoding="utf-8")
    assert committed == schema_json(), "schema/cluster.schema.json is stale: run ./dev schema"
