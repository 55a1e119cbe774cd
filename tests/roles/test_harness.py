"""The container harness itself, without a container: callers that ask for the image at once (./dev test's background
build, pytest-xdist workers, two checkouts sharing .gpufabric) get one build between them."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.roles import containers


def test_concurrent_callers_share_one_image_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    builds: list[Path] = []

    def slow_build(image: Path) -> None:  # stands in for debootstrap: slow enough for both callers to find no image
        builds.append(image)
        time.sleep(0.5)
        image.mkdir(parents=True)
        (image / ".gpufabric-complete").touch()

    monkeypatch.setattr(containers, "STATE", tmp_path)
    monkeypatch.setattr(containers, "_debootstrap", slow_build)
    got: list[Path] = []
    callers = [threading.Thread(target=lambda: got.append(containers.bookworm_image())) for _ in range(3)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert len(builds) == 1
    assert got == [builds[0]] * 3
    assert containers.bookworm_image() == builds[0]  # complete: no build, no wait
    assert len(builds) == 1
