"""The OOB plane on the twin: BMC stand-ins answer inside the plane, and nothing routes between OOB and compute (root)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.plan import ClusterPlan
from fabric.twin.lab import LabState, namespace
from fabric.twin.oob import oob_checks, oob_devices
from tests.apply.conftest import CLUSTER, netns_list

pytestmark = pytest.mark.twin  # builds a twin: the twin lane of ./dev test, one twin at a time (docs/testing.md)


def test_the_twin_builds_the_oob_plane_with_a_namespace_per_switch_core_and_bmc(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    state, _ = twin
    devices = oob_devices(plan)
    assert devices == ("oob-core", "oob-mgmt", "oob-su1", "oob-su2", "oob-su3", "oob-su4", "node1-bmc", "node2-bmc", "node3-bmc", "node4-bmc")
    names = {namespace(CLUSTER, d) for d in devices}
    assert names <= set(state.namespaces)
    assert names <= set(netns_list())


def test_a_bmc_answers_inside_the_oob_plane_and_nothing_crosses_to_compute(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    devices = [*oob_devices(plan), *(n.hostname for n in plan.nodes)]
    checks = oob_checks(plan, {d: namespace(CLUSTER, d) for d in devices})
    got = [(c.source, c.target, c.address, c.expect, c.answered) for c in checks]
    assert got == [
        ("node1-bmc", "oob-su1", "10.103.255.1", True, True),  # the BMC's management switch (its SVI)
        ("node1-bmc", "node4-bmc", "10.103.0.19", True, True),  # another switch's BMC, across the OOB core
        ("node1", "node1-bmc", "10.103.0.16", False, False),  # the node's compute side has no route to OOB
        ("node1-bmc", "node1", "10.100.0.1", False, False),  # and the OOB plane none to compute
    ], [c.output for c in checks]
