"""The storage / in-band network on the twin: nodes reach each other over the storage plane and the in-band gateway;
the storage plane does not route to in-band, and OOB reaches no storage address (root)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.plan import ClusterPlan
from fabric.twin.lab import LabState, namespace
from fabric.twin.oob import oob_devices
from fabric.twin.storage import storage_checks, storage_devices, storage_hosts
from tests.apply.conftest import CLUSTER, netns_list

pytestmark = pytest.mark.twin  # builds a twin: the twin lane of ./dev test, one twin at a time (docs/testing.md)


def test_the_twin_builds_a_namespace_per_storage_switch(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    state, _ = twin
    assert storage_devices(plan) == ("stor-a", "stor-b")
    assert storage_hosts(plan) == ("node1", "node2", "node3", "node4")
    names = {namespace(CLUSTER, d) for d in storage_devices(plan)}
    assert names <= set(state.namespaces)
    assert names <= set(netns_list())


def test_storage_answers_inside_its_plane_and_no_plane_routes_to_another(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    devices = [*oob_devices(plan), *(n.hostname for n in plan.nodes)]
    checks = storage_checks(plan, {d: namespace(CLUSTER, d) for d in devices})
    got = [(c.source, c.target, c.address, c.expect, c.answered) for c in checks]
    assert got == [
        ("node1", "node4 (storage)", "10.101.0.22", True, True),  # across stor-a's bridge, VLAN 101
        ("node1", "inband gateway (inband)", "10.102.0.1", True, True),  # the in-band gateway on stor-a (VRR address, side a)
        ("node1", "node4 (inband)", "10.102.0.22", False, False),  # out of the storage port: storage routes nowhere
        ("node1-bmc", "node4 (storage)", "10.101.0.22", False, False),  # OOB reaches no storage address
    ], [c.output for c in checks]
