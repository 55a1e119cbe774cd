"""Golden plans for every example: any change in derived output shows up as a reviewable diff."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.plan.serialize import plan_to_json
from tests.conftest import DATA, EXAMPLES, check_golden


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.parent.name for e in EXAMPLES])
def test_plan_matches_golden(example: Path, update_golden: bool) -> None:
    text = plan_to_json(plan_cluster(load_cluster(example)))
    check_golden(DATA / example.parent.name / "golden" / "plan.json", text, update_golden)


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.parent.name for e in EXAMPLES])
def test_plan_is_byte_identical_across_runs(example: Path) -> None:
    spec = load_cluster(example)
    assert plan_to_json(plan_cluster(spec)) == plan_to_json(plan_cluster(load_cluster(example)))
