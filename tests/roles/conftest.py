"""The tiers of ./dev test: a test that boots a node-role container (``booted``) carries the pytest marker
``container`` and runs in the container tier; every other test runs in the CPU tier (``-m "not container"``)."""

from __future__ import annotations

import pytest

from tests.roles import containers


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before the test's fixtures (a class- or module-scoped one may boot): remember whether it may boot a container."""
    containers.unmarked_test = None if item.get_closest_marker("container") else item.nodeid
