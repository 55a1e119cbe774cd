"""network_planes on a node whose storage ports the switches bundle (``attach: mlag``): the exact systemd-networkd files
it would write, in check mode on the test machine (facts replaced, no connection to a node, nothing written; the play
refuses to run outside check mode). The switch side is read from the same plan: the bond's members are the ports the
MLAG pair bundles, untagged in the plane's VLAN."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from fabric.model import load_cluster
from fabric.nodes.runner import RunOptions, run_playbook
from fabric.plan import plan_cluster
from tests.roles.scenario import FAKE_OS_MODULE, per_port_site, site

pytestmark = pytest.mark.slow  # one ansible-playbook run per test, about 20 s each

NETWORK = "/etc/systemd/network"
UBUNTU_2404 = {"distribution": "Ubuntu", "distribution_version": "24.04", "distribution_major_version": "24"}
DEBIAN_12 = {"distribution": "Debian", "distribution_version": "12.7", "distribution_major_version": "12"}


def planned_files(tmp_path: Path, definition: Path, host: str, facts: dict[str, str]) -> dict[str, str]:
    """Run network_planes' configure tasks in check mode as the OS in ``facts``; return {path: content} of networkd files.

    The definition is the inventory, as for ``python -m fabric nodes``; a layer connects ``host`` to nothing (local, and
    the play refuses to run outside check mode), and the gathered OS facts are replaced.
    """
    layer = tmp_path / "local.yml"
    layer.write_text(
        json.dumps({"all": {"hosts": {host: {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}), encoding="utf-8"
    )
    (tmp_path / "library").mkdir()
    (tmp_path / "library" / "gpufabric_test_os.py").write_text(FAKE_OS_MODULE, encoding="utf-8")
    play = [
        {
            "name": "network_planes, planned",
            "hosts": host,
            "gather_facts": False,
            "pre_tasks": [
                {"name": "Only ever a plan", "ansible.builtin.assert": {"that": "ansible_check_mode"}, "tags": ["always"]},
                {"name": "Stand in for the OS", "gpufabric_test_os": {"facts": facts}, "tags": ["always"]},
            ],
            "roles": [{"role": "network_planes"}],
        }
    ]
    (tmp_path / "play.yml").write_text(json.dumps(play), encoding="utf-8")
    events: list[Mapping[str, Any]] = []
    options = RunOptions(check=True, diff=True, limit=host, tags="network_planes_configure", extra_inventories=(layer,))
    result = run_playbook(definition, options, lambda *_: None, playbook=str(tmp_path / "play.yml"), observe=events.append)
    assert result.ok, (result.output_tail, [e["event_data"].get("res") for e in events if e.get("event", "").endswith("failed")])
    files: dict[str, str] = {}
    for event in events:
        if event.get("event") not in ("runner_on_ok", "runner_item_on_ok"):
            continue
        res = event["event_data"].get("res", {})
        dest = str(res.get("invocation", {}).get("module_args", {}).get("dest", ""))
        diff = res.get("diff") or {}
        for one in diff if isinstance(diff, list) else [diff]:
            if dest.startswith(NETWORK) and "after" in one:
                files[dest] = one["after"]
    return files


def bonded_switch_ports(definition: Path, host: str) -> tuple[list[str], set[int | None]]:
    """The host's ports the storage switches bundle (by the switch side of the plan) and those bundles' VLANs."""
    plan = plan_cluster(load_cluster(definition))
    links = [x for net in plan.storage for x in net.links if x.b_device == host and x.plane == "storage" and x.bond]
    return sorted(x.b_port for x in links), {x.vlan for x in links}


def member(name: str) -> str:
    return (
        f"# Ansible managed: {name} is a member of bond-storage (storage plane of cluster {{cluster}})\n"
        f"[Match]\nName={name}\n\n[Link]\nMTUBytes=9000\nRequiredForOnline=no\n\n"
        "[Network]\nBond=bond-storage\nLinkLocalAddressing=no\nIPv6AcceptRA=no\n"
    )


@pytest.mark.parametrize(
    ("example", "host", "facts", "prefix"),
    [
        ("onprem-roce", "gpu001", UBUNTU_2404, "05"),  # netplan's 10-netplan-* files sort after ours
        ("onprem-ib", "dgx01", DEBIAN_12, "20"),
    ],
)
def test_a_node_the_switches_bundle_gets_an_8023ad_bond_of_exactly_those_ports_untagged_with_the_plane_address(
    tmp_path: Path, example: str, host: str, facts: dict[str, str], prefix: str
) -> None:
    definition = site(example)
    address = {"gpu001": "10.101.0.16/16", "dgx01": "10.201.0.16/16"}[host]  # the plan's address of storage port 0
    cluster = load_cluster(definition).name
    files = planned_files(tmp_path, definition, host, facts)
    ports, vlans = bonded_switch_ports(definition, host)
    assert ports == ["enp170s0f0np0", "enp41s0f0np0"]  # one port per ConnectX-7
    assert len(vlans) == 1  # one access VLAN
    vlan = vlans.pop()
    at = f"{NETWORK}/{prefix}-gpufabric-"
    assert files[f"{at}bond-storage.netdev"] == (
        f"# Ansible managed: storage plane of cluster {cluster}\n"
        "# An LACP bond over the MLAG pair stor-su1-1-a / stor-su1-1-b (their port-channel, MLAG id 1, untagged in\n"
        f"# VLAN {vlan}). Keys from systemd.netdev(5) [Bond]; 802.3ad = IEEE 802.3ad dynamic link aggregation (LACP).\n"
        "[NetDev]\nName=bond-storage\nKind=bond\nMTUBytes=9000\n\n"
        "[Bond]\nMode=802.3ad\nLACPTransmitRate=fast\nTransmitHashPolicy=layer3+4\nMIIMonitorSec=100ms\n"
    )
    assert files[f"{at}bond-storage.network"] == (
        f"# Ansible managed: storage plane of cluster {cluster}\n[Match]\nName=bond-storage\n\n[Link]\nMTUBytes=9000\nRequiredForOnline=no\n\n"
        f"[Network]\nAddress={address}\nLinkLocalAddressing=no\nIPv6AcceptRA=no\n"
    )
    for port in ports:
        assert files[f"{at}{port}.network"] == member(port).replace("{cluster}", cluster)
    # the switches' port-channel is an access port: the host sends untagged frames, so no VLAN netdev or VLAN= anywhere
    assert not any("VLAN" in line for text in files.values() for line in text.splitlines() if not line.startswith("#"))
    # storage now has one address on this node: no source routing for it; the in-band port is as before
    assert not any("Table=2" in text for text in files.values())
    assert [f for f, text in files.items() if f"Address={address}" in text] == [f"{at}bond-storage.network"]


def test_per_port_attachment_keeps_one_address_per_storage_port_and_builds_no_bond(tmp_path: Path) -> None:
    definition = per_port_site(tmp_path)
    (tmp_path / "run").mkdir()
    files = planned_files(tmp_path / "run", definition, "gpu001", UBUNTU_2404)
    assert bonded_switch_ports(definition, "gpu001")[0] == []
    assert not [f for f in files if "bond" in f]
    for port, address, table in (("enp170s0f0np0", "10.101.0.16", 200), ("enp41s0f0np0", "10.101.0.17", 201)):
        text = files[f"{NETWORK}/05-gpufabric-{port}.network"]
        assert f"Address={address}/16" in text
        assert f"[RoutingPolicyRule]\nFrom={address}/32\nTable={table}\n" in text
