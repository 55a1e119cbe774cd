"""The twin fixtures: a cluster of its own (namespace prefix gft<pid>-), a state directory the frr user can reach."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from fabric.model import ClusterSpec
from fabric.plan import ClusterPlan, plan_cluster
from fabric.twin.lab import LabState, lab_down, lab_namespaces, lab_up
from tests.conftest import ROOT
from tests.packaging.conftest import dist  # noqa: F401 - the wheel the pipeline tests install (tests/apply/test_pipeline.py)

# Namespaces are <cluster>-<device>: a name of this run's own (two checkouts running these tests at once on one machine
# must not share namespaces), never a developer's twin.
CLUSTER = f"gft{os.getpid()}"
CONVERGE_S = 30


def lab_plan(cluster: str) -> ClusterPlan:
    """The plan of the lab definition under the cluster name ``cluster`` (its twin's namespaces are ``<cluster>-*``)."""
    assert os.geteuid() == 0, "the twin needs root; run ./dev test as root"
    data = yaml.safe_load((ROOT / "inventories" / "lab" / "cluster.yaml").read_text(encoding="utf-8"))
    data["name"] = cluster
    return plan_cluster(ClusterSpec.model_validate(data))


@pytest.fixture(scope="module")
def plan() -> ClusterPlan:
    return lab_plan(CLUSTER)


@pytest.fixture
def state_dir(tmp_path: Path) -> Iterator[Path]:
    """A state directory the frr user can reach (pytest's own temp root is private to root)."""
    directory = ROOT / ".gpufabric" / "tests" / tmp_path.name
    directory.mkdir(parents=True, exist_ok=True)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def twin(plan: ClusterPlan, state_dir: Path) -> Iterator[tuple[LabState, Path]]:
    directory = state_dir
    state = lab_up(plan, directory)
    try:
        yield state, directory
    finally:
        lab_down(plan.name, directory, lab_namespaces(plan))


def netns_list() -> list[str]:
    return [line.split()[0] for line in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout.splitlines()]
