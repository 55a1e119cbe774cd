"""OOB DHCP (issue 28, device audit "design note"): Kea sits on its own subnet behind the OOB core, the relays listen on
the device VLAN only, so Kea sees each BMC's request once, relayed with option 82, never broadcast directly."""

from __future__ import annotations

import json
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path

import pytest

from fabric.model import ClusterSpec, load_cluster
from fabric.plan import check_and_plan, plan_cluster
from fabric.render import render_configs
from fabric.render.kea import KEA_FILE
from tests.conftest import ROOT

EXAMPLES = ["onprem-roce", "onprem-ib", "lab"]


@pytest.mark.parametrize("example", EXAMPLES)
def test_kea_has_its_own_subnet_apart_from_every_plane_and_hears_only_relays(example: str) -> None:
    """Negative control: main put Kea at 10.103.0.10 / 10.203.0.10, inside the BMCs' own VLAN and subnet."""
    spec = load_cluster(ROOT / "inventories" / example / "cluster.yaml")
    findings, plan = check_and_plan(spec)
    assert plan is not None
    assert plan.oob is not None
    assert [f.message for f in findings if "dhcp" in ".".join(map(str, f.path))] == []
    subnet = IPv4Network(plan.oob.dhcp_subnet or "0.0.0.0/32")
    assert plan.oob.dhcp_servers
    assert all(IPv4Address(s) in subnet for s in plan.oob.dhcp_servers)
    for plane in plan.planes:
        assert plane.cidr is None or not subnet.overlaps(IPv4Network(plane.cidr)), plane.name
    files = render_configs(plan)
    device_subnet = IPv4Network(plan.plane("oob").cidr or "0.0.0.0/32")
    kea = json.loads(files[KEA_FILE])["Dhcp4"]
    # Kea answers only on the device subnet, chosen by the relay's giaddr; none of its subnets holds Kea itself, so a
    # request that reached Kea's own segment directly would find no subnet.
    assert [s["subnet"] for s in kea["subnet4"]] == [str(device_subnet)]
    assert not any(IPv4Network(s["subnet"]).overlaps(subnet) for s in kea["subnet4"])
    relayed_to = set()
    for switch in plan.oob.switches:
        text = next(v for k, v in files.items() if k.startswith(f"switches/{switch.name}/"))
        relayed_to |= {s for s in plan.oob.dhcp_servers if s in text}
        assert not any(str(a) in text for a in list(device_subnet.hosts())[8:12])  # the legacy .10 / .11 server addresses
    assert relayed_to == set(plan.oob.dhcp_servers)


def _spec(tmp_path: Path, network: str) -> ClusterSpec:
    text = (ROOT / "inventories" / "onprem-roce" / "cluster.yaml").read_text(encoding="utf-8")
    old = "dhcp_servers: [10.104.0.10], dhcp_subnet: 10.104.0.0/24"
    assert old in text
    path = tmp_path / "cluster.yaml"
    path.write_text(text.replace(old, network), encoding="utf-8")
    return load_cluster(path)


def test_kea_on_the_oob_plane_is_warned_about_with_the_fix(tmp_path: Path) -> None:
    findings, plan = check_and_plan(_spec(tmp_path, "dhcp_servers: [10.103.0.10]"))
    assert plan is not None
    warned = [f for f in findings if f.severity == "warning" and "dhcp_servers" in f.path]
    assert [(".".join(map(str, f.path)), f.message.split(":")[0]) for f in warned] == [
        ("planes.oob.network.dhcp_servers.0", "the Kea server 10.103.0.10 sits on the oob plane 10.103.0.0/16, the BMCs' broadcast domain")
    ]
    assert "see each DHCPDISCOVER twice" in warned[0].message
    assert "dhcp_subnet" in warned[0].message


@pytest.mark.parametrize(
    ("network", "message"),
    [
        ("dhcp_servers: [10.104.0.10], dhcp_subnet: 10.103.0.0/24", "dhcp_subnet 10.103.0.0/24 overlaps the oob plane 10.103.0.0/16"),
        (
            "dhcp_servers: [10.105.0.10], dhcp_subnet: 10.104.0.0/24",
            "10.105.0.10 is neither on the oob plane 10.103.0.0/16 nor in dhcp_subnet 10.104.0.0/24",
        ),
    ],
)
def test_a_kea_subnet_on_a_plane_or_a_server_outside_it_is_an_error(tmp_path: Path, network: str, message: str) -> None:
    findings, plan = check_and_plan(_spec(tmp_path, network))
    assert plan is None
    assert any(f.severity == "error" and f.message.startswith(message) for f in findings), [f.message for f in findings]


def test_the_plan_records_the_kea_subnet() -> None:
    plan = plan_cluster(load_cluster(ROOT / "inventories" / "onprem-roce" / "cluster.yaml"))
    assert plan.oob is not None
    assert (plan.oob.dhcp_servers, plan.oob.dhcp_subnet) == (("10.104.0.10",), "10.104.0.0/24")
