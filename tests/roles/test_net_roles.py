"""The network roles' answers to the issue-29 audit (node-audit.md), without a node: DNS on the default-route plane
(NP-12), partitions.conf read back against opensm's grammar and the definition (O-12), IPoIB pinged (FC-12), and which
GCE images count as Google's accelerator-optimized ones for NCCL/gIB's DOCA-OFED check (C11)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from plugins.filter.gpufabric_checks import ping_targets
from plugins.filter.gpufabric_nodes import partitions_problems
from tests.conftest import ROOT
from tests.roles.scenario import host_vars, site
from tests.roles.stubs import role_templates
from tests.roles.test_bond_files import DEBIAN_12, planned_files

ROCE = site("onprem-roce")
GPU001 = host_vars(ROCE, "gpu001")


def plane_file(template: str, interface: dict[str, Any], dns: dict[str, Any]) -> str:
    """network_planes' file for ``interface`` of gpu001, rendered as the role does (its defaults' variables given)."""
    env = role_templates(ROOT / "roles" / "network_planes")
    env.trim_blocks = True  # as Ansible's template module renders
    return env.get_template(template).render(
        ansible_managed="managed",
        gpufabric_cluster="c",
        item={**interface, "index": interface["index"]},
        network_planes_planes=GPU001["gpufabric_planes"],
        network_planes_compute_cidr=GPU001["gpufabric_planes"]["compute"]["cidr"],
        network_planes_multihomed=[],
        network_planes_tables={"compute": 100, "storage": 200, "inband": 300},
        network_planes_bonds=[],
        network_planes_bond_miimon_ms=100,
        network_planes_dns=dns,
    )


@pytest.mark.parametrize("template", ["plane.network.j2", "plane.nmconnection.j2"])
def test_the_default_route_plane_gets_the_definitions_name_servers_and_domain_and_no_other_plane_does(template: str) -> None:
    dns = GPU001["gpufabric_dns"]  # the inventory carries fabric.management.dns_servers / domain
    assert dns == {"servers": ["10.102.0.53"], "domain": "pod-a.example.net"}
    inband = next(i for i in GPU001["gpufabric_interfaces"] if i["plane"] == "inband")
    rail = next(i for i in GPU001["gpufabric_interfaces"] if i["plane"] == "compute")
    text, other = plane_file(template, inband, dns), plane_file(template, rail, dns)
    if template == "plane.network.j2":  # systemd.network(5) [Network] DNS=, Domains=
        assert "DNS=10.102.0.53\nDomains=pod-a.example.net\n" in text
        assert "DNS=" not in other
    else:  # nm-settings-nmcli(5) ipv4.dns, ipv4.dns-search
        assert "dns=10.102.0.53;\ndns-search=pod-a.example.net;\n" in text
        assert "dns=" not in other
    none = plane_file(template, inband, {})  # none defined: none written
    assert "DNS=" not in none
    assert "dns=" not in none


def partitions_conf(members: dict[str, list[str]]) -> tuple[str, list[dict[str, Any]]]:
    """sm01's partitions.conf as the opensm role renders it, and the partitions it was rendered from."""
    sm01 = host_vars(site("onprem-ib"), "sm01")
    partitions = sm01["gpufabric_ib_partitions"]
    env = role_templates(ROOT / "roles" / "opensm")
    env.trim_blocks = True  # as Ansible's template module renders
    text = env.get_template("partitions.conf.j2").render(
        ansible_managed="managed",
        gpufabric_cluster="c",
        _opensm_members_cache="/etc/gpufabric/opensm-members.json",
        opensm_default_membership="full",
        opensm_mtu=4096,
        opensm_partitions=partitions,
        _opensm_members=members,
    )
    return text, partitions


def test_partitions_conf_as_rendered_reads_back_clean_and_a_changed_file_is_named_line_by_line() -> None:
    text, partitions = partitions_conf({"dgx01": ["0x0c42a10300aa0001"], "sm01": ["0x0c42a10300e17f5a"]})
    assert partitions, "the InfiniBand example defines partitions"
    assert partitions_problems(text, partitions) == []
    first = partitions[0]
    line = next(n for n, row in enumerate(text.splitlines(), start=1) if row.startswith(f"{first['name']}="))
    broken = text.replace(f"{first['name']}={first['pkey']}, ipoib", f"{first['name']}={first['pkey']} ipoib")
    assert partitions_problems(broken, partitions, "/etc/opensm/partitions.conf") == [
        f"/etc/opensm/partitions.conf line {line}: {broken.splitlines()[line - 1]!r} is not a partition line opensm parses"
        " (Name=PKey[, ipoib][, mtu=N] : members;)",
        f"/etc/opensm/partitions.conf: partition {first['name']} ({first['pkey']}) of the definition is missing",
    ]
    assert partitions_problems(text.replace("Default=0x7fff", "Default=0x7ffe"), partitions) == [
        "partitions.conf: no Default=0x7fff line (the default partition, pkey index 0, NCCL's)"
    ]
    other = re.sub(rf"^{first['name']}={first['pkey']}", f"{first['name']}=0x0abc", text, flags=re.MULTILINE)
    assert partitions_problems(other, partitions) == [f"partitions.conf: {first['name']} has pkey 0x0abc, the definition says {first['pkey']}"]


def test_ipoib_ports_are_pinged_with_full_size_datagrams_from_each_to_the_next_host() -> None:
    ib = site("onprem-ib")
    hosts = ["dgx01", "dgx02"]
    hv = {h: host_vars(ib, h) for h in hosts}
    targets = ping_targets(hv["dgx01"]["gpufabric_interfaces"], hv, hosts, "dgx01", planes=["compute", "storage", "inband"])
    ipoib = [t for t in targets if t["link_layer"] == "infiniband"]
    theirs = {i["name"]: i["address"].split("/")[0] for i in hv["dgx02"]["gpufabric_interfaces"] if i["link_layer"] == "infiniband"}
    assert len(ipoib) == len(theirs) == 8
    assert {t["interface"]: t["target"] for t in ipoib} == theirs  # rail N to rail N of the next host
    assert {t["mtu"] for t in ipoib} == {4092}  # IPoIB datagram MTU: the ping payload is 4064 bytes with DF set


@pytest.mark.parametrize(
    ("image", "accelerator"),
    [
        ("projects/ubuntu-os-accelerator-images/global/images/ubuntu-accelerator-2204-amd64-with-nvidia-570-v20250722", True),
        ("projects/rocky-linux-accelerator-cloud/global/images/rocky-linux-9-optimized-gcp-nvidia-570-v20250709", True),
        ("projects/cos-cloud/global/images/cos-121-18867-90-38", True),
        ("projects/ubuntu-os-cloud/global/images/ubuntu-2204-jammy-v20250722", False),
        ("projects/rocky-linux-cloud/global/images/rocky-linux-9-v20250709", False),
        ("projects/my-project/global/images/accelerator-lookalike", False),
    ],
)
def test_only_googles_accelerator_images_skip_the_doca_ofed_check(image: str, accelerator: bool) -> None:
    pattern = yaml.safe_load((ROOT / "roles" / "cloud_fabric" / "vars" / "main.yml").read_text(encoding="utf-8"))[
        "_cloud_fabric_gce_accelerator_image"
    ]
    assert bool(re.match(pattern, image)) is accelerator


@pytest.mark.slow  # one ansible-playbook run per host, about 20 s each
def test_a_partition_member_gets_an_ipoib_child_per_port_made_at_boot_before_the_network_manager(tmp_path: Path) -> None:
    """dgx01 is a full member of the InfiniBand example's partition gpu (pkey 0x0002, ipoib): network_planes plans a
    script that writes the pkey to each IPoIB port's create_child (the kernel names the child <port>.8002) and a boot
    unit ordered before systemd-networkd and NetworkManager (node-audit.md O-16). sm01, a limited member, gets none."""
    ports = [i["name"] for i in host_vars(site("onprem-ib"), "dgx01")["gpufabric_interfaces"] if i["link_layer"] == "infiniband"]
    assert len(ports) == 8
    files = planned_files(tmp_path, site("onprem-ib"), "dgx01", DEBIAN_12, under=("/usr/local/sbin", "/etc/systemd/system"))
    script = files["/usr/local/sbin/gpufabric-ipoib-children"]
    for port in ports:
        assert f"if [ ! -e /sys/class/net/{port}.8002 ]; then\n  echo 0x8002 > /sys/class/net/{port}/create_child ||" in script, port
    unit = files["/etc/systemd/system/gpufabric-ipoib-children.service"]
    assert "Before=network-pre.target systemd-networkd.service NetworkManager.service\n" in unit
    assert "ExecStart=/usr/local/sbin/gpufabric-ipoib-children\n" in unit
    (tmp_path / "sm01").mkdir()
    limited = planned_files(tmp_path / "sm01", site("onprem-ib"), "sm01", DEBIAN_12, under=("/usr/local/sbin", "/etc/systemd/system"))
    assert limited == {}
