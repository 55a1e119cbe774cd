"""The twin lane: ./dev test runs the tests that build a twin (marker ``twin``) in one process of their own, one twin at
a time, beside the tests that build none (docs/testing.md). A test that builds a twin without the marker would run
beside the twin lane and put two twins on the machine at once: these tests keep the marker honest."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT, TWIN_MODULE

# A twin started from the test's own text: lab_up in this process, or ``fabric lab up`` as a subprocess.
STARTS_A_TWIN = re.compile(r"\blab_up\(|[\"']lab[\"'],\s*[\"']up[\"']")
MARKED = re.compile(r"^pytestmark = .*pytest\.mark\.twin\b", re.MULTILINE)
# Modules that name lab_up without building a twin: each says why.
BUILDS_NONE = {
    "tests/cli/test_lab_output.py": "lab_up is replaced by a fake (the namespaces are the one boundary replaced)",
    "tests/twin/test_state.py": "lab_up refuses a directory that holds files before anything starts",
    "tests/test_lanes.py": "this file's own patterns",
}


def test_a_test_without_the_twin_marker_cannot_build_a_twin() -> None:
    lab = importlib.import_module(TWIN_MODULE)
    with pytest.raises(pytest.fail.Exception, match=re.escape("has no twin marker: add `pytestmark = pytest.mark.twin`")):
        lab._build(None, Path("/nonexistent"), None)


@pytest.mark.twin
def test_a_test_with_the_twin_marker_builds_through_the_real_code() -> None:
    lab = importlib.import_module(TWIN_MODULE)
    assert lab._build.__module__ == TWIN_MODULE
    assert lab._build.__qualname__ == "_build"


def test_every_module_that_starts_a_twin_carries_the_marker() -> None:
    unmarked = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name.startswith("tests/roles/") or name in BUILDS_NONE:
            continue
        text = path.read_text(encoding="utf-8")
        if STARTS_A_TWIN.search(text) and not MARKED.search(text):
            unmarked.append(name)
    assert not unmarked, f"these start a twin but have no `pytestmark = pytest.mark.twin`: {unmarked}"


def test_the_text_check_sees_both_ways_of_starting_a_twin() -> None:
    assert STARTS_A_TWIN.search("state = lab_up(plan, state_dir)")
    assert STARTS_A_TWIN.search('fabric("lab", "up", str(definition))')
    assert not STARTS_A_TWIN.search("lab_down(plan.name, directory)")
    assert MARKED.search("pytestmark = [pytest.mark.slow, pytest.mark.twin]\n")
    assert not MARKED.search("pytestmark = pytest.mark.slow\n")
