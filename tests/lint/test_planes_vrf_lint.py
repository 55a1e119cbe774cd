"""lint of a shared spine's VRFs: the rendered config is clean; a port or session in the wrong VRF, BGP in the default
VRF and every route-leak form are findings (each a negative control of the clean render)."""

from __future__ import annotations

import json
from functools import cache

import pytest

from fabric.lint.planes import lint_planes
from fabric.lint.planes_vrf import lint_spine_vrfs
from fabric.model import load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from fabric.render import render_cabling, render_configs
from tests.conftest import DATA

SHARED = DATA / "render" / "frr-shared" / "cluster.yaml"


@cache
def plan() -> ClusterPlan:
    return plan_cluster(load_cluster(SHARED))


@cache
def spine01() -> str:
    return render_configs(plan())["switches/spine01/frr.conf"]


def findings(text: str) -> list[str]:
    return [f"{f.where}: {f.expected} / {f.actual}" for f in lint_spine_vrfs(plan(), {"spine01": text})]


def test_the_rendered_shared_spines_are_clean() -> None:
    files = render_configs(plan())
    assert plan().fabric is not None
    configs: dict[str, str | None] = {s.name: files[f"switches/{s.name}/frr.conf"] for s in plan().fabric.switches}  # type: ignore[union-attr]
    assert lint_planes(plan(), configs, render_cabling(plan())) == []
    assert findings(spine01()) == []


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("interface swp3 vrf Vrf-plane2", "interface swp3 vrf Vrf-plane1", "swp3 in VRF Vrf-plane2 / swp3 in VRF Vrf-plane1"),
        ("interface swp1 vrf Vrf-plane1", "interface swp1", "swp1 in VRF Vrf-plane1 / swp1 in VRF default"),
        ("router bgp 65100 vrf Vrf-plane2", "router bgp 65100", "BGP only in the planes' VRFs / router bgp 65100"),
        (" neighbor 10.254.0.65 peer-group FABRIC\n", "", None),  # a session gone is not a crossing (the BGP lint's)
    ],
)
def test_a_port_or_session_out_of_its_vrf_is_a_finding(old: str, new: str, expected: str | None) -> None:
    text = spine01()
    assert old in text
    found = findings(text.replace(old, new, 1))
    if expected is None:
        assert found == []
    else:
        assert any(expected in f for f in found), found


def test_a_session_moved_into_the_other_planes_vrf_is_a_finding() -> None:
    text = spine01()
    moved = text.replace(" neighbor 10.254.0.65 peer-group FABRIC\n", "", 1).replace(
        " neighbor 10.254.128.65 peer-group FABRIC\n", " neighbor 10.254.128.65 peer-group FABRIC\n neighbor 10.254.0.65 peer-group FABRIC\n", 1
    )
    found = findings(moved)
    assert len(found) == 1, found
    assert found[0].endswith("session 10.254.0.65 in VRF Vrf-plane1 / session 10.254.0.65 in VRF Vrf-plane2")


@pytest.mark.parametrize(
    "leak",
    [
        "  import vrf Vrf-plane2",
        "  route-target import 65100:2",
        "  rt vpn both 65100:1",
        "  import vpn",
        "  export vpn",
        "ip route 10.100.128.0/17 swp1 nexthop-vrf Vrf-plane2",
    ],
)
def test_every_route_leak_form_is_a_finding(leak: str) -> None:
    text = spine01()
    anchor = "  maximum-paths 64\n"
    assert anchor in text
    found = findings(text.replace(anchor, anchor + leak + "\n", 1))
    assert any("no route leak between the planes' VRFs" in f and leak.strip() in f for f in found), found


def test_sonic_ports_in_the_wrong_vrf_and_static_leaks_are_findings() -> None:
    sonic = plan_cluster(load_cluster(DATA / "render" / "sonic-shared" / "cluster.yaml"))
    text = render_configs(sonic)["switches/spine01/config_db.json"]
    assert list(lint_spine_vrfs(sonic, {"spine01": text})) == []
    db = json.loads(text)
    db["INTERFACE"]["Ethernet4"]["vrf_name"] = "Vrf-plane1"
    del db["INTERFACE"]["Ethernet0"]["vrf_name"]
    db["STATIC_ROUTE"] = {"Vrf-plane1|10.100.128.0/17": {"nexthop": "10.254.128.1", "nexthop-vrf": "Vrf-plane2"}}
    found = [f"{f.where}: {f.actual}" for f in lint_spine_vrfs(sonic, {"spine01": json.dumps(db)})]
    assert found == [
        "INTERFACE|Ethernet0: Ethernet0 in VRF default",
        "INTERFACE|Ethernet4: Ethernet4 in VRF Vrf-plane1",
        "STATIC_ROUTE|Vrf-plane1|10.100.128.0/17: nexthop-vrf Vrf-plane2",
    ]


def test_cumulus_ports_sessions_and_leaks_out_of_their_vrf_are_findings() -> None:
    cumulus = plan_cluster(load_cluster(DATA / "render" / "cumulus-shared" / "cluster.yaml"))
    text = render_configs(cumulus)["switches/spine01/nvue.sh"]
    assert list(lint_spine_vrfs(cumulus, {"spine01": text})) == []
    broken = (
        text.replace("nv set interface swp3 ip vrf Vrf-plane2", "nv set interface swp3 ip vrf Vrf-plane1")
        .replace("nv set interface swp1 ip vrf Vrf-plane1\n", "")
        .replace(
            "nv set vrf Vrf-plane2 router bgp neighbor 10.254.128.1 peer-group", "nv set vrf Vrf-plane1 router bgp neighbor 10.254.128.1 peer-group"
        )
    )
    broken += "nv set vrf Vrf-plane1 router bgp address-family ipv4-unicast route-import from-vrf list Vrf-plane2\n"
    broken += "nv set vrf default router bgp neighbor swp9 peer-group FABRIC\n"
    found = sorted(f.actual for f in lint_spine_vrfs(cumulus, {"spine01": broken}))
    assert found == sorted(
        [
            "swp1 in VRF default",
            "swp3 in VRF Vrf-plane1",
            "session 10.254.128.1 in VRF Vrf-plane1",
            "nv set vrf Vrf-plane1 router bgp address-family ipv4-unicast route-import from-vrf list Vrf-plane2",
            "nv set vrf default router bgp neighbor swp9 peer-group FABRIC",
        ]
    )


def test_eos_ports_sessions_and_leaks_out_of_their_vrf_are_findings() -> None:
    eos = plan_cluster(load_cluster(DATA / "render" / "eos-shared" / "cluster.yaml"))
    text = render_configs(eos)["switches/spine01/startup-config"]
    assert list(lint_spine_vrfs(eos, {"spine01": text})) == []
    moved = "      neighbor 10.254.128.1 peer group FABRIC\n"
    assert moved in text
    broken = (
        text.replace("   vrf Vrf-plane2\n   ip address 10.254.128.0/31", "   vrf Vrf-plane1\n   ip address 10.254.128.0/31")
        .replace("   vrf Vrf-plane1\n   ip address 10.254.0.0/31", "   ip address 10.254.0.0/31")
        .replace(moved, "")
        .replace("   neighbor FABRIC send-community\n", "   neighbor FABRIC send-community\n   neighbor 10.254.128.1 peer group FABRIC\n")
        .replace("      router-id 10.255.0.1\n", "      router-id 10.255.0.1\n      route-target import evpn 65100:2\n")
    )
    found = sorted(f.actual for f in lint_spine_vrfs(eos, {"spine01": broken}))
    assert found == sorted(
        [
            "Ethernet1/1 in VRF default",
            "Ethernet1/5 in VRF Vrf-plane1",
            "session 10.254.128.1 in VRF default",
            "route-target import evpn 65100:2",
        ]
    )


def test_nxos_ports_sessions_and_leaks_out_of_their_vrf_are_findings() -> None:
    nxos = plan_cluster(load_cluster(DATA / "render" / "nxos-shared" / "cluster.yaml"))
    text = render_configs(nxos)["switches/spine01/running-config"]
    assert list(lint_spine_vrfs(nxos, {"spine01": text})) == []
    session = "    neighbor 10.254.128.1\n      inherit peer FABRIC\n"
    assert session in text
    broken = (
        text.replace("  vrf member Vrf-plane2\n  ip address 10.254.128.0/31", "  vrf member Vrf-plane1\n  ip address 10.254.128.0/31")
        .replace("  vrf member Vrf-plane1\n  ip address 10.254.0.0/31", "  ip address 10.254.0.0/31")
        .replace("  template peer FABRIC\n", "  template peer FABRIC\n  neighbor 10.254.0.1\n", 1)
        .replace("    router-id 10.255.0.1\n", "    router-id 10.255.0.1\n    route-target import 65100:2\n")
    )
    found = sorted(f.actual for f in lint_spine_vrfs(nxos, {"spine01": broken}))
    assert found == sorted(
        ["Ethernet1/1/1 in VRF default", "Ethernet1/1/3 in VRF Vrf-plane1", "session 10.254.0.1 in VRF default", "route-target import 65100:2"]
    )
