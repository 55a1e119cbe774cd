"""Shared fixtures: repository paths, the --update-golden switch and the twin lane's guard."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run (a CI run cannot turn red by the luck of the draw), unless
# HYPOTHESIS_PROFILE=explore asks for fresh random ones: run that while working on a property, and pin what it finds
# with @example.
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
EXAMPLES = sorted((ROOT / "inventories").glob("*/cluster.yaml"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files instead of comparing")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


def check_golden(path: Path, text: str, update: bool) -> None:
    """Compare ``text`` with the committed golden file, or rewrite it with --update-golden."""
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"golden file {path} is missing; run ./dev golden and review the diff"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{path} differs from the golden file; if the change is intended run ./dev golden and review the diff"


TWIN_MODULE = "fabric.twin.lab"
"""The module whose ``_build`` starts a twin's namespaces and daemons (every ``lab_up`` that builds goes through it)."""


def unmarked_build(nodeid: str) -> Callable[..., object]:
    """What a test without the ``twin`` marker finds in place of the twin's build: a failure that names the fix."""

    def refuse(*_args: object, **_kwargs: object) -> object:
        pytest.fail(
            f"{nodeid} builds a twin but has no twin marker: add `pytestmark = pytest.mark.twin` to its module, so that "
            "./dev test runs it in the twin lane, one twin at a time (docs/testing.md)"
        )

    return refuse


@pytest.fixture(autouse=True)
def twin_lane_guard(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that builds a twin in this process must carry the ``twin`` marker: ./dev test runs the marked tests in a
    lane of their own, one twin at a time, beside the tests that build none. A twin built by a subprocess (the CLI) is
    not seen here: ``tests/test_lanes.py`` checks those modules' text instead."""
    if request.node.get_closest_marker("twin") is None:
        monkeypatch.setattr(importlib.import_module(TWIN_MODULE), "_build", unmarked_build(request.node.nodeid))
