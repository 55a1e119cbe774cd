"""The host side of a multi-plane fabric: each compute port routes only its own plane's block, in its own table."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import ROOT
from tests.roles.scenario import host_vars, site
from tests.roles.stubs import role_templates

TWO_PLANE = host_vars(site("two-plane"), "gpu01")
ROCE = host_vars(site("onprem-roce"), "gpu001")


def plane_file(template: str, host: dict[str, Any], interface: dict[str, Any]) -> str:
    """network_planes' file for ``interface``, rendered as the role does (compute multi-homed, as with 8 or 16 ports)."""
    env = role_templates(ROOT / "roles" / "network_planes")
    env.trim_blocks = True  # as Ansible's template module renders
    return env.get_template(template).render(
        ansible_managed="managed",
        gpufabric_cluster="c",
        item=interface,
        network_planes_planes=host["gpufabric_planes"],
        network_planes_compute_cidr=host["gpufabric_planes"]["compute"]["cidr"],
        network_planes_multihomed=["compute"],
        network_planes_tables={"compute": 100, "storage": 200, "inband": 300},
        network_planes_bonds=[],
        network_planes_bond_miimon_ms=100,
        network_planes_dns={},
    )


def compute_ports(host: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for i in host["gpufabric_interfaces"] if i["plane"] == "compute"]


def test_the_inventory_gives_each_compute_port_its_plane_and_block() -> None:
    ports = compute_ports(TWO_PLANE)
    assert [(p["name"], p["fabric_plane"], p["route_cidr"]) for p in ports[:2]] == [
        ("enp24s0f0np0", 1, "10.100.0.0/17"),
        ("enp24s0f1np1", 2, "10.100.128.0/17"),
    ]
    assert {p["route_cidr"] for p in ports} == {"10.100.0.0/17", "10.100.128.0/17"}
    assert all("fabric_plane" not in p for p in compute_ports(ROCE))  # one plane: the inventory is as before


@pytest.mark.parametrize("template", ["plane.network.j2", "plane.nmconnection.j2"])
def test_each_port_routes_its_own_plane_only(template: str) -> None:
    one, two = compute_ports(TWO_PLANE)[:2]
    first, second = plane_file(template, TWO_PLANE, one), plane_file(template, TWO_PLANE, two)
    if template == "plane.network.j2":  # systemd.network(5) [Route] Destination=, Gateway=
        assert "Destination=10.100.0.0/17\nGateway=10.100.0.0\n" in first
        assert "Destination=10.100.128.0/17\nGateway=10.100.128.0\n" in second
    else:  # nm-settings-nmcli(5) ipv4.routes
        assert "10.100.0.0/17,10.100.0.0" in first
        assert "10.100.128.0/17,10.100.128.0" in second
    for text in (first, second):
        # the whole compute block only as unreachable in the port's own table: a plane-1 address never reaches plane 2
        if template == "plane.network.j2":
            assert "Destination=10.100.0.0/16\nType=unreachable\n" in text
            assert "Destination=10.100.0.0/16\nGateway" not in text
        else:  # nm-settings-nmcli(5) ipv4.routes attribute type
            assert text.count("10.100.0.0/16") == 1
            assert "type=unreachable" in text
    control = plane_file(template, ROCE, compute_ports(ROCE)[0])
    assert "10.100.0.0/16" in control  # a one-plane fabric routes its whole block, as before
    assert "unreachable" not in control
