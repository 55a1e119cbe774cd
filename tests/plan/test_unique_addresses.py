"""Every address of a plan is allocated once; a collision names the address and both owners, in claim order."""

from __future__ import annotations

from ipaddress import IPv4Address

import pytest

from fabric.errors import PlanError
from fabric.model import load_cluster
from fabric.model.loader import parse_cluster
from fabric.plan import ClusterPlan, _address_claims, _addresses, plan_cluster  # pyright: ignore[reportPrivateUsage] - the check's two halves
from tests.conftest import ROOT
from tests.render.conftest import CASES, plan_of

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


def _with_a_pdu() -> ClusterPlan:
    """onprem-roce with a PDU on its OOB network: a device cable, whose address no render case claims."""
    text = (ROOT / "inventories" / "onprem-roce" / "cluster.yaml").read_text(encoding="utf-8")
    pdu = "dhcp_servers: [10.103.0.10], devices: [{name: pdu-su1, kind: pdu, switch: oob-su1, port: 43, address: 10.103.250.1}]"
    return plan_cluster(parse_cluster(text.replace("dhcp_servers: [10.103.0.10]", pdu, 1))[0])


@pytest.mark.parametrize("case", [*CASES, "onprem-roce with a pdu"])
def test_the_quick_check_reads_every_claimed_address_in_claim_order(case: str) -> None:
    """``_addresses`` (the check of a plan without a duplicate) and ``_address_claims`` (the owners of a duplicate) read
    the same addresses: an address only one of them knew would go unchecked or unnamed."""
    plan = _with_a_pdu() if case == "onprem-roce with a pdu" else plan_of(case)
    assert _addresses(plan) == [claim[0] for claim in _address_claims(plan)]
    assert sum(address is not None for address in _addresses(plan)) > len(plan.nodes)
    if plan.oob is not None and any(cable.kind == "device" for cable in plan.oob.links):
        assert "10.103.250.1/16" in _addresses(plan)
