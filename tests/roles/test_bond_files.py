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
from fabric.nodes.runner import NodesRun, RunOptions, run_playbook
from fabric.plan import plan_cluster
from tests.roles.scenario import FAKE_OS_MODULE, per_port_site, site

pytestmark = pytest.mark.slow  # one ansible-playbook run per test, about 20 s each

NETWORK = "/etc/systemd/network"
UBUNTU_2404 = {"distribution": "Ubuntu", "distribution_version": "24.04", "distribution_major_version": "24"}
DEBIAN_12 = {"distribution": "Debian", "distribution_version": "12.7", "distribution_major_version": "12"}


def plan_run(
    tmp_path: Path,
    definition: Path,
    host: str,
    facts: dict[str, str],
    *,
    role: str,
    hostvars: Mapping[str, object] | None = None,
    tags: str | None = None,
) -> tuple[NodesRun, list[Mapping[str, Any]]]:
    """Run ``role``'s configure tasks in check mode as the OS in ``facts``; return the run and its events.

    The definition is the inventory, as for ``python -m fabric nodes``; a layer connects ``host`` to nothing (local, and
    the play refuses to run outside check mode), and the gathered OS facts are replaced. ``hostvars`` are set on
    ``host`` over the inventory's; ``tags`` (default ``<role>_configure``) select the tasks besides ``always``.
    """
    layer = tmp_path / "local.yml"
    layer.write_text(
        json.dumps({"all": {"hosts": {host: {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, **(hostvars or {})}}}}),
        encoding="utf-8",
    )
    (tmp_path / "library").mkdir()
    (tmp_path / "library" / "gpufabric_test_os.py").write_text(FAKE_OS_MODULE, encoding="utf-8")
    play = [
        {
            "name": f"{role}, planned",
            "hosts": host,
            "gather_facts": False,
            "pre_tasks": [
                {"name": "Only ever a plan", "ansible.builtin.assert": {"that": "ansible_check_mode"}, "tags": ["always"]},
                {"name": "Stand in for the OS", "gpufabric_test_os": {"facts": facts}, "tags": ["always"]},
            ],
            "roles": [{"role": role}],
        }
    ]
    (tmp_path / "play.yml").write_text(json.dumps(play), encoding="utf-8")
    events: list[Mapping[str, Any]] = []
    options = RunOptions(check=True, diff=True, limit=host, tags=tags or f"{role}_configure", extra_inventories=(layer,))
    result = run_playbook(definition, options, lambda *_: None, playbook=str(tmp_path / "play.yml"), observe=events.append)
    return result, events


def planned_files(
    tmp_path: Path,
    definition: Path,
    host: str,
    facts: dict[str, str],
    *,
    role: str = "network_planes",
    under: tuple[str, ...] = (NETWORK,),
    owners: dict[str, tuple[str, str]] | None = None,
    hostvars: Mapping[str, object] | None = None,
) -> dict[str, str]:
    """{path: content} of the files under ``under`` that ``role`` would write in check mode as the OS in ``facts``.

    ``owners``, when given, gets {path: (owner, mode)} of those files as the tasks ask for them.
    """
    result, events = plan_run(tmp_path, definition, host, facts, role=role, hostvars=hostvars)
    assert result.ok, (result.output_tail, [e["event_data"].get("res") for e in events if e.get("event", "").endswith("failed")])
    files: dict[str, str] = {}
    for event in events:
        if event.get("event") not in ("runner_on_ok", "runner_item_on_ok"):
            continue
        res = event["event_data"].get("res", {})
        dest = str(res.get("invocation", {}).get("module_args", {}).get("dest", ""))
        diff = res.get("diff") or {}
        for one in diff if isinstance(diff, list) else [diff]:
            if dest.startswith(under) and "after" in one:
                files[dest] = one["after"]
                args = res["invocation"]["module_args"]
                if owners is not None:
                    owners[dest] = (str(args.get("owner")), str(args.get("mode")))
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


ROCKY_9 = {"distribution": "Rocky", "distribution_version": "9.4", "distribution_major_version": "9", "os_family": "RedHat"}
KEYFILES = "/etc/NetworkManager/system-connections"


def test_rocky_9_gets_networkmanager_keyfiles_root_only_for_the_bond_its_members_and_each_port(tmp_path: Path) -> None:
    definition = site("onprem-roce")
    owners: dict[str, tuple[str, str]] = {}
    files = planned_files(tmp_path, definition, "gpu001", ROCKY_9, under=(KEYFILES, NETWORK), owners=owners)
    assert not [f for f in files if f.startswith(NETWORK)]  # no networkd files on a NetworkManager host
    assert all(owners[f] == ("root", "0600") for f in files)  # nm-settings-keyfile(5): others' files are ignored
    cluster = load_cluster(definition).name
    ports, _ = bonded_switch_ports(definition, "gpu001")
    at = f"{KEYFILES}/gpufabric-"
    assert files[f"{at}bond-storage.nmconnection"].split("\n", 2)[2] == (
        "[connection]\nid=gpufabric-bond-storage\ntype=bond\ninterface-name=bond-storage\nautoconnect=true\n\n"
        "[ethernet]\nmtu=9000\n\n"
        "# an LACP bond over the MLAG pair stor-su1-1-a / stor-su1-1-b (their port-channel, MLAG id 1, untagged in VLAN 101);\n"
        "# options as the kernel's bonding driver names them (bond.options in nm-settings-nmcli(5))\n"
        "[bond]\nmode=802.3ad\nlacp_rate=fast\nxmit_hash_policy=layer3+4\nmiimon=100\n\n"
        "[ipv4]\nmethod=manual\naddress1=10.101.0.16/16\nnever-default=true\n\n[ipv6]\nmethod=disabled\n"
    )
    for port in ports:
        assert files[f"{at}{port}.nmconnection"] == (
            f"# Ansible managed: {port} is a member of bond-storage (storage plane of cluster {cluster})\n"
            "# A NetworkManager keyfile (nm-settings-keyfile(5)): a bond port has no IP configuration of its own; master= and\n"
            "# slave-type= (connection.master / connection.slave-type in nm-settings-nmcli(5), read by every NetworkManager of RHEL 9).\n"
            f"[connection]\nid=gpufabric-{port}\ntype=ethernet\ninterface-name={port}\nmaster=bond-storage\nslave-type=bond\nautoconnect=true\n\n"
            "[ethernet]\nmtu=9000\n"
        )
    # the in-band port carries the only default route; a compute rail its /31, the fabric route and its own table
    # the in-band plane has the default route and the definition's name servers (nm-settings-nmcli(5) ipv4.dns, ipv4.dns-search)
    inband = "[ipv4]\nmethod=manual\naddress1=10.102.0.16/16\ngateway=10.102.0.1\ndns=10.102.0.53;\ndns-search=pod-a.example.net;\n\n"
    assert inband in files[f"{at}enp170s0f1np1.nmconnection"]
    assert files[f"{at}enp64s0np0.nmconnection"].split("[ipv4]\n", 1)[1] == (
        "method=manual\naddress1=10.100.0.3/31\nnever-default=true\n"
        "# compute has several interfaces on this node: traffic from this address leaves through this interface\n"
        "routing-rule1=priority 101 from 10.100.0.3/32 table 101\n"
        "route1=10.100.0.0/16,10.100.0.2,1001\nroute2=10.100.0.0/16,10.100.0.2\nroute2_options=table=101\n\n"
        "[ipv6]\nmethod=disabled\n"
    )
    assert len(files) == 2 + 1 + 1 + 8  # 2 bond members, the bond, in-band, 8 compute rails


def test_rocky_9_opensm_reads_etc_rdma_and_gets_its_port_and_priority_from_etc_sysconfig_opensm(tmp_path: Path) -> None:
    """RHEL's opensm.service runs /usr/libexec/opensm-launch: -g per GUID in GUIDS and -p $PRIORITY of /etc/sysconfig/opensm,
    the rest from /etc/rdma/opensm.conf (no per-port units, so the config's log_file applies)."""
    guid = "0x0c42a10300e17f5a"
    files = planned_files(
        tmp_path,
        site("onprem-ib"),
        "sm01",
        ROCKY_9,
        role="opensm",
        under=("/etc/rdma", "/etc/sysconfig", "/etc/opensm", "/etc/default"),
        hostvars={"opensm_port_guids": [guid]},
    )
    assert sorted(files) == ["/etc/rdma/opensm.conf", "/etc/rdma/partitions.conf", "/etc/sysconfig/opensm"]
    assert files["/etc/sysconfig/opensm"].splitlines()[1:] == [f"GUIDS={guid}", "PRIORITY=15"]
    conf = files["/etc/rdma/opensm.conf"].splitlines()
    assert "sm_priority 15" in conf
    assert "partition_config_file /etc/rdma/partitions.conf" in conf
    assert "log_file /var/log/opensm.log" in conf
    assert not [line for line in conf if line.startswith("guid ")]  # -g on opensm-launch's command line
    assert "Default=0x7fff, ipoib, mtu=5 : ALL=full, SELF=full;" in files["/etc/rdma/partitions.conf"].splitlines()


@pytest.mark.parametrize(("role", "supported"), [("network_planes", "RHEL/Rocky 9 (NetworkManager)"), ("opensm", "RHEL/Rocky 9")])
def test_el8_is_refused_in_preflight_naming_the_supported_oses(tmp_path: Path, role: str, supported: str) -> None:
    rocky_8 = {"distribution": "Rocky", "distribution_version": "8.9", "distribution_major_version": "8", "os_family": "RedHat"}
    host = "sm01" if role == "opensm" else "dgx01"
    result, events = plan_run(tmp_path, site("onprem-ib"), host, rocky_8, role=role, hostvars={"opensm_port_guids": ["0x0c42a10300e17f5a"]})
    assert not result.ok
    [failed] = [e["event_data"] for e in events if e.get("event") == "runner_on_failed"]
    assert failed["task"].startswith("Preflight | a supported OS")
    assert "Rocky 8.9" in failed["res"]["msg"]
    assert f"Ubuntu 24.04 (DGX OS 7), {supported}" in failed["res"]["msg"]


GUIDS = ["0x0c42a10300e17f5a", "0x0c42a10300e17f5b"]
DEBIAN_12_SM = {**DEBIAN_12, "os_family": "Debian"}  # opensm reads vars/<os_family>.yml


def test_an_sm_host_with_two_ib_ports_is_refused_naming_why_each_port_would_be_a_subnet(tmp_path: Path) -> None:
    result, events = plan_run(tmp_path, site("onprem-ib"), "sm01", DEBIAN_12_SM, role="opensm", hostvars={"opensm_port_guids": GUIDS})
    assert not result.ok
    [failed] = [e["event_data"] for e in events if e.get("event") == "runner_on_failed"]
    assert failed["task"] == "Configure | one subnet per SM host, unless the definition asks for one per port"
    message = failed["res"]["msg"]
    assert f"2 InfiniBand ports ({', '.join(GUIDS)})" in message
    assert "opensm binds one port per instance" in message
    assert "PORTS of /etc/default/opensm" in message
    assert "infiniband.subnet_manager.port_subnets: true" in message


def test_port_subnets_in_the_definition_gives_each_port_its_sm_and_its_own_subnet_prefix(tmp_path: Path) -> None:
    text = site("onprem-ib").read_text(encoding="utf-8")
    changed = text.replace("  subnet_manager:\n    kind: opensm\n", "  subnet_manager:\n    kind: opensm\n    port_subnets: true\n", 1)
    assert changed != text
    definition = tmp_path / "def" / "cluster.yaml"
    definition.parent.mkdir()
    definition.write_text(changed, encoding="utf-8")
    (tmp_path / "run").mkdir()
    files = planned_files(
        tmp_path / "run",
        definition,
        "sm01",
        DEBIAN_12_SM,
        role="opensm",
        under=("/etc/default", "/etc/systemd/system"),
        hostvars={"opensm_port_guids": GUIDS},
    )
    assert files["/etc/default/opensm"].splitlines()[1] == f"PORTS='{GUIDS[0]} {GUIDS[1]}'"
    for n, guid in enumerate(GUIDS):
        dropin = files[f"/etc/systemd/system/opensm@{guid}.service.d/gpufabric-subnet.conf"].splitlines()
        assert dropin[2:] == [
            "[Service]",
            "ExecStart=",
            f"ExecStart=/usr/sbin/opensm --guid %I --log_file /var/log/opensm.%I.log --subnet_prefix 0xfe8000000000000{n}",
        ]


def test_a_port_taken_out_of_port_subnets_loses_only_our_drop_in_and_the_sm_restarts(tmp_path: Path) -> None:
    systemd = tmp_path / "systemd"
    stale, current, foreign = "0x0c42a10300e17f99", GUIDS[0], "0x0c42a10300e17f98"
    for guid, name in ((stale, "gpufabric-subnet.conf"), (current, "gpufabric-subnet.conf"), (foreign, "override.conf")):
        (systemd / f"opensm@{guid}.service.d").mkdir(parents=True)
        (systemd / f"opensm@{guid}.service.d" / name).write_text("[Service]\n", encoding="utf-8")
    text = site("onprem-ib").read_text(encoding="utf-8")
    definition = tmp_path / "def" / "cluster.yaml"
    definition.parent.mkdir()
    sm = "  subnet_manager:\n    kind: opensm\n"
    definition.write_text(text.replace(sm, sm + "    port_subnets: true\n", 1), encoding="utf-8")
    (tmp_path / "run").mkdir()
    hostvars = {"opensm_port_guids": GUIDS, "opensm_systemd_dir": str(systemd)}
    result, events = plan_run(tmp_path / "run", definition, "sm01", DEBIAN_12_SM, role="opensm", hostvars=hostvars)
    assert result.ok, result.output_tail
    task = "Configure | remove our per-port subnet drop-in from ports that no longer run a subnet of their own"
    removed = [
        e["event_data"]["res"]["path"]
        for e in events
        if e.get("event") == "runner_item_on_ok" and e["event_data"]["task"] == task and e["event_data"]["res"].get("changed")
    ]
    assert removed == [f"{systemd}/opensm@{stale}.service.d/gpufabric-subnet.conf"]  # the operator's override.conf stays
