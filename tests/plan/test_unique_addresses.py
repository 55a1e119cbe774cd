"""Every address of a plan is allocated once; a collision names the address and both owners, in claim order."""

from __future__ import annotations

from ipaddress import IPv4Address

import pytest

from fabric.errors import PlanError
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from tests.conftest import ROOT

LAB = ROOT / "inventories" / "lab" / "cluster.yaml"


def test_an_explicit_address_on_another_nodes_address_is_refused_with_both_owners() -> None:
    spec = load_cluster(LAB)
    group = spec.nodes[0]
    taken = next(i.address for i in plan_cluster(spec).nodes[0].interfaces if i.plane == "inband")
    assert taken == "10.102.0.16/16"
    clash = group.model_copy(update={"addresses": {"node2": {"inband": IPv4Address("10.102.0.16")}}})
    with pytest.raises(PlanError) as raised:
        plan_cluster(spec.model_copy(update={"nodes": [clash, *spec.nodes[1:]]}))
    assert str(raised.value) == "address 10.102.0.16 is allocated twice: node1:eth0 and node2:eth0; move an explicit address or a pool"


def test_a_gateway_inside_the_nodes_addresses_is_named_as_the_planes_gateway() -> None:
    spec = load_cluster(LAB)
    taken = next(i.address for i in plan_cluster(spec).nodes[1].interfaces if i.plane == "inband")
    assert taken == "10.102.0.18/16"
    inband = spec.planes.inband.model_copy(update={"gateway": IPv4Address("10.102.0.18")})
    with pytest.raises(PlanError) as raised:
        plan_cluster(spec.model_copy(update={"planes": spec.planes.model_copy(update={"inband": inband})}))
    assert str(raised.value) == "address 10.102.0.18 is allocated twice: planes.inband.gateway and node2:eth0; move an explicit address or a pool"
