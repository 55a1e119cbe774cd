"""The /31 allocators build their error message only when they refuse (fabric.plan.addressing): the refusals still
name the link, the pool and the fix, at both ends of the pool."""

from __future__ import annotations

from ipaddress import IPv4Network

import pytest

from fabric.errors import PlanError
from fabric.plan.addressing import allocate_host_link, allocate_p2p

POOL = IPv4Network("10.0.0.0/29")  # 8 addresses: four /31s


def test_the_last_31_of_a_pool_is_allocated_and_the_next_is_refused() -> None:
    assert allocate_host_link(POOL, node_id=1, port=3, stride=4) == ("10.0.0.6/31", "10.0.0.6", "10.0.0.7")
    assert allocate_p2p(POOL, leaf_id=2, uplink=1, stride=2) == ("10.0.0.6/31", "10.0.0.6", "10.0.0.7")
    with pytest.raises(PlanError, match=r"^planes.compute host link of node 2 port 0: offset 9 is outside 10.0.0.0/29 \(8 addresses\); enlarge"):
        allocate_host_link(POOL, node_id=2, port=0, stride=4)
    with pytest.raises(PlanError, match=r"^fabric.super_spine.p2p_pool link of switch 3 uplink 0: offset 9 is outside 10.0.0.0/29"):
        allocate_p2p(POOL, leaf_id=3, uplink=0, stride=2, where="fabric.super_spine.p2p_pool")


def test_an_offset_before_the_pool_is_refused() -> None:
    with pytest.raises(PlanError, match=r"node 0 port 0: offset -7 is outside"):
        allocate_host_link(POOL, node_id=0, port=0, stride=4)
    with pytest.raises(PlanError, match=r"link of switch 0 uplink 0: offset -3 is outside"):
        allocate_p2p(POOL, leaf_id=0, uplink=0, stride=2)
