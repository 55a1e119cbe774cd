"""Shared fixtures: repository paths and the --update-golden switch."""

from __future__ import annotations

import os
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
