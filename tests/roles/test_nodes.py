"""The node roles for real, in booted Debian bookworm containers (systemd-nspawn on an overlay of a debootstrap root):
converge, then a second run that must change nothing, then what is on the node. Hardware that does not exist here
(ConnectX NICs, InfiniBand ports, GPUs) is stub programs and sysfs trees that record what the roles applied."""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import json
import os
import re
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.roles.containers import Container, bookworm_image, booted
from tests.roles.scenario import (
    BIN,
    ENV,
    ansible,
    changed,
    container_layer,
    converge,
    explain,
    failures,
    host_vars,
    per_port_site,
    role_playbook,
    site,
)
from tests.roles.stubs import (
    PCI_NIC,
    PCI_ROOT,
    PCI_SWITCH,
    SERVICE,
    fake_firmware,
    fake_gpus,
    fake_nic,
    fake_pci_host,
    fake_perftest,
    fake_roce_gids,
    firmware_links,
    nic_stub_vars,
    pci_links,
)

pytestmark = [pytest.mark.container, pytest.mark.skipif(os.geteuid() != 0, reason="containers need root (./dev test runs as root in CI)")]


@pytest.fixture(scope="session", autouse=True)
def image() -> Path:
    """The bookworm root, debootstrapped once and cached in .gpufabric/images."""
    return bookworm_image()


NIC = "/srv/nic"
# the plane and GID checks read the test machine's own /proc and /sys otherwise (host tuning has its own test); the
# containers run no lldpd (the cabling read-back has its own test: tests/roles/test_cabling_readback.py)
NO_HOST_TUNING = {"fabric_check_host_tuning": False, "fabric_check_cabling": False}
NIC_VARS = nic_stub_vars(NIC)


@pytest.fixture
def roce_gpu(tmp_path: Path) -> Iterator[Container]:
    """gpu001 of the RoCE site with its eight ConnectX ports as stubs; on the host network so apt reaches the mirror."""
    ports = host_vars(site("onprem-roce"), "gpu001")["gpufabric_roce_ports"]
    files = {f"{NIC}/{rel}": content for rel, content in fake_nic(ports).items()}
    with booted("gpu001", tmp_path, files=files) as node:
        yield node


def test_rdma_stack_and_nic_qos_converge_persist_and_read_back(roce_gpu: Container, tmp_path: Path) -> None:
    ports: list[str] = host_vars(site("onprem-roce"), "gpu001")["gpufabric_roce_ports"]
    play = role_playbook(tmp_path, "rdma_stack", "nic_qos")
    # the definition gives gpu001 DOCA (its RoCE ports need DOCA's tools); here Debian's inbox stack is installed for
    # real and the stubs stand in for DOCA's mlnx_qos and cma_roce_tos
    first, _ = converge(site("onprem-roce"), [roce_gpu], play, tmp_path, extravars={**NIC_VARS, "rdma_stack_source": "inbox"})
    assert first.ok, explain(first)
    assert changed(first)["gpu001"] > 0

    # inbox RDMA stack installed
    dpkg = roce_gpu.run("dpkg-query -W -f '${Package} ${Status}\\n' rdma-core ibverbs-utils infiniband-diags perftest")
    assert sorted(dpkg.stdout.splitlines()) == [f"{p} install ok installed" for p in ("ibverbs-utils", "infiniband-diags", "perftest", "rdma-core")]

    # the contract file, the persistence unit (enabled) and the udev rule
    env = roce_gpu.read("/etc/gpufabric/nic-qos.env")
    contract = ["DSCP=26", "PRIORITY=3", 'PFC="0,0,0,1,0,0,0,0"', "CNP_DSCP=48", "CNP_PRIORITY=6", "TOS=106", "CABLE_M=5"]
    for line in [*contract, f"PORTS='{' '.join(ports)}'"]:
        assert line in env.splitlines()
    assert roce_gpu.run("systemctl is-enabled gpufabric-nic-qos.service").stdout.strip() == "enabled"
    rule = roce_gpu.read("/etc/udev/rules.d/90-gpufabric-nic-qos.rules")
    assert 'DRIVERS=="mlx5_core", RUN+="/bin/systemctl --no-block restart gpufabric-nic-qos.service"' in rule

    # exactly what reached each NIC
    calls = roce_gpu.read(f"{NIC}/stubs/calls.log").splitlines()
    writes = [c for c in calls if re.search(r" (--trust|--pfc|--dscp2prio|--cable_len=|-t )", c)]
    expected = []
    for n, port in enumerate(ports):
        expected += [
            f"mlnx_qos -i {port} --trust dscp",
            f"mlnx_qos -i {port} --dscp2prio set,26,3",
            f"mlnx_qos -i {port} --dscp2prio set,48,6",
            f"mlnx_qos -i {port} --pfc 0,0,0,1,0,0,0,0",
            f"mlnx_qos -i {port} --cable_len=5",
            f"cma_roce_tos -d mlx5_{n} -t 106",
        ]
    assert writes == expected
    for port in ports:
        assert roce_gpu.read(f"{NIC}/sys/class/net/{port}/ecn/roce_np/enable/3").strip() == "1"
        assert roce_gpu.read(f"{NIC}/sys/class/net/{port}/ecn/roce_rp/enable/3").strip() == "1"
        assert roce_gpu.read(f"{NIC}/sys/class/net/{port}/ecn/roce_np/cnp_dscp").strip() == "48"

    # idempotence: nothing changes, nothing is written to a NIC
    second, _ = converge(site("onprem-roce"), [roce_gpu], play, tmp_path, extravars={**NIC_VARS, "rdma_stack_source": "inbox"})
    assert second.ok, explain(second)
    assert changed(second) == {"gpu001": 0}
    assert roce_gpu.read(f"{NIC}/stubs/calls.log").splitlines()[: len(calls)] == calls
    assert not [c for c in roce_gpu.read(f"{NIC}/stubs/calls.log").splitlines()[len(calls) :] if re.search(r" (--trust|--pfc|-t )", c)]

    # persistence: a NIC that lost its settings (reboot, driver reload) gets them back from the unit
    roce_gpu.run(f"rm {NIC}/stubs/*.json; for f in {NIC}/sys/class/net/*/ecn/roce_*/enable/3; do echo 0 > $f; done")
    assert roce_gpu.run("/usr/local/sbin/gpufabric-nic-qos verify").returncode == 1
    restart = roce_gpu.run("systemctl restart gpufabric-nic-qos.service && systemctl is-active gpufabric-nic-qos.service")
    assert restart.stdout.strip() == "active", restart.stderr
    assert roce_gpu.run("/usr/local/sbin/gpufabric-nic-qos verify").returncode == 0


def test_nic_qos_fails_naming_port_setting_expected_and_actual_when_the_nic_refuses(roce_gpu: Container, tmp_path: Path) -> None:
    ports: list[str] = host_vars(site("onprem-roce"), "gpu001")["gpufabric_roce_ports"]
    roce_gpu.run(f"echo pfc > {NIC}/stubs/stuck")  # the NIC accepts --pfc but keeps PFC where it was (off)
    result, _ = converge(site("onprem-roce"), [roce_gpu], role_playbook(tmp_path, "nic_qos"), tmp_path, extravars=NIC_VARS)
    assert not result.ok
    [(task, message)] = failures(result)["gpu001"]
    assert task == "Verify | every value agrees with the contract"
    assert "the NIC disagrees with the RoCE contract" in message
    for port in ports:
        assert f"{port}: pfc expected 0,0,0,1,0,0,0,0, actual 0,0,0,0,0,0,0,0" in message
    assert "trust expected" not in message  # only what really differs is named
    # at boot the unit reads the NIC back too: a NIC that does not take the contract leaves the unit failed
    assert roce_gpu.run("systemctl restart gpufabric-nic-qos.service").returncode != 0
    assert roce_gpu.run("systemctl is-failed gpufabric-nic-qos.service").stdout.strip() == "failed"


IB = "/srv/ib"


def test_opensm_is_configured_for_the_packages_unit_keeps_members_across_limited_runs_and_is_not_started_without_infiniband(
    tmp_path: Path,
) -> None:
    """sm01 of the InfiniBand site with Debian's real opensm package: its HCA's GID in a sysfs tree, no InfiniBand MAD
    interface (none exists here). dgx01's port GUID is in the SM node's cache from an earlier run: a run limited to
    sm01 keeps it in the partition."""
    gid = "fe80:0000:0000:0000:0c42:a103:00e1:7f5a"
    cache = json.dumps({"dgx01": ["0x0c42a10300aa0001"], "gone01": ["0x0c42a10300bb0002"]})  # gone01: no longer in the definition
    files = {f"{IB}/sys/class/infiniband/mlx5_0/ports/1/gids/0": (gid + "\n", 0o644), "/etc/gpufabric/opensm-members.json": (cache, 0o644)}
    play = [
        {
            "name": "port GUIDs",
            "hosts": "all",
            "gather_facts": False,
            "tasks": [{"name": "Read", "ansible.builtin.include_role": {"name": "opensm", "tasks_from": "port_guids"}}],
        }
    ]
    playbook = tmp_path / "play-opensm.yml"
    playbook.write_text(json.dumps([*play, *json.loads(role_playbook(tmp_path, "opensm").read_text())]))
    with booted("sm01", tmp_path, files=files) as sm:
        first, _ = converge(site("onprem-ib"), [sm], playbook, tmp_path, extravars={"opensm_sysfs": f"{IB}/sys"})
        assert first.ok, explain(first)
        conf = sm.read("/etc/opensm/opensm.conf").splitlines()
        for line in ["sm_priority 15", "routing_engine ftree", "sweep_interval 10", "partition_config_file /etc/opensm/partitions.conf"]:
            assert line in conf
        assert not [line for line in conf if line.startswith(("guid ", "log_file "))]  # opensm@'s command line sets them
        # the unit the package really has: opensm.service starts opensm@<guid> for PORTS, with --guid on the command line
        assert sm.read("/etc/default/opensm").splitlines()[-1] == "PORTS=0x0c42a10300e17f5a"
        unit = sm.run("systemctl cat opensm@0x0c42a10300e17f5a.service").stdout
        assert "ExecStart=/usr/sbin/opensm --guid %I --log_file /var/log/opensm.%I.log" in unit
        partitions = sm.read("/etc/opensm/partitions.conf")
        # opensm parses partitions.conf only when it runs (no check mode): every line against its grammar
        # (linux-rdma/opensm doc/partition-config.txt: Name=PKey[,ipoib][,mtu=N] : member[=full|limited], … ;)
        member = r"(ALL|SELF|0x[0-9a-f]{16})=(full|limited)"
        grammar = re.compile(rf"^\w+=0x[0-9a-f]{{4}}(, ipoib)?, mtu=[45] : ({member}(, {member})*)?;$")
        for line in partitions.splitlines():
            assert line.startswith("#") or grammar.match(line), line
        assert "Default=0x7fff, ipoib, mtu=5 : ALL=full, SELF=full;" in partitions  # NCCL's pkey index 0: full members
        # dgx01 from the cache (not in this run), sm01 itself from this run (the definition makes it a limited member)
        assert "gpu=0x0002, ipoib, mtu=5 : 0x0c42a10300aa0001=full, 0x0c42a10300e17f5a=limited;" in partitions.splitlines(), partitions
        members = json.loads(sm.read("/etc/gpufabric/opensm-members.json"))
        assert members == {"dgx01": ["0x0c42a10300aa0001"], "sm01": ["0x0c42a10300e17f5a"]}  # gone01 left the definition
        assert sm.run("systemctl is-enabled opensm.service").stdout.strip() == "enabled"
        assert sm.run("systemctl is-active opensm.service").stdout.strip() == "inactive"  # no IB port: not started
        assert "Unrecognized token" not in sm.run("opensm --version").stdout  # the file parses
        second, _ = converge(site("onprem-ib"), [sm], playbook, tmp_path, extravars={"opensm_sysfs": f"{IB}/sys"})
        assert second.ok, explain(second)
        assert changed(second) == {"sm01": 0}  # the ConditionPathExists trap: a naive "started" changes on every run

        # a node (or a tampered cache) that reports something other than a GUID never reaches partitions.conf
        (sm.root / "etc/gpufabric/opensm-members.json").write_text(json.dumps({**members, "dgx01": ["0x0c42a10300aa0001, ALL=full"]}))
        hostile, _ = converge(site("onprem-ib"), [sm], playbook, tmp_path, extravars={"opensm_sysfs": f"{IB}/sys"})
        [(_, message)] = failures(hostile)["sm01"]
        assert "'0x0c42a10300aa0001, ALL=full' is not a port GUID (0x and 16 hex digits)" in message
        assert "0x0c42a10300aa0001, ALL=full" not in sm.read("/etc/opensm/partitions.conf")


def test_network_planes_give_every_plane_its_address_mtu_and_routes(tmp_path: Path) -> None:
    """gpu001 of the RoCE site with a veth per interface: eight compute rails, storage and in-band management. Storage
    attaches per port here (an address per port, source routing); bonded storage: tests/roles/test_bond_files.py."""
    definition = per_port_site(tmp_path)
    interfaces = host_vars(definition, "gpu001")["gpufabric_interfaces"]
    managed = [i for i in interfaces if i["plane"] in ("inband", "storage", "compute") and i["address"]]
    with booted("gpu001", tmp_path, planes=[i["name"] for i in managed]) as node:
        play = role_playbook(tmp_path, "network_planes")
        first, _ = converge(definition, [node], play, tmp_path)
        assert first.ok, explain(first)
        addresses = {a["ifname"]: a for a in json.loads(node.run("ip -j addr show").stdout)}
        for i in managed:
            assert addresses[i["name"]]["mtu"] == i["mtu"], i["name"]
            assert [f"{x['local']}/{x['prefixlen']}" for x in addresses[i["name"]]["addr_info"] if x["family"] == "inet"] == [i["address"]]
        defaults = json.loads(node.run("ip -j route show default").stdout)
        inband = next(i for i in managed if i["plane"] == "inband")
        assert [(r["dev"], r["gateway"]) for r in defaults] == [(inband["name"], "10.102.0.1")]  # never storage or compute
        compute = json.loads(node.run("ip -j route show 10.100.0.0/16").stdout)
        rails = sorted((i for i in managed if i["plane"] == "compute"), key=lambda i: i["index"])
        routes = sorted((r["dev"], r["gateway"], r["metric"]) for r in compute)
        assert routes == sorted((i["name"], i["peer_address"], 1000 + i["index"]) for i in rails)
        # several interfaces in one plane: each address has its own rule and table, and its traffic leaves through it
        rules = {r["src"]: r["table"] for r in json.loads(node.run("ip -j rule show").stdout) if r.get("src", "all") != "all"}
        storage = sorted((i for i in managed if i["plane"] == "storage"), key=lambda i: i["index"])
        assert rules == {
            **{i["address"].split("/")[0]: str(100 + i["index"]) for i in rails},
            **{i["address"].split("/")[0]: str(200 + i["index"]) for i in storage},
        }
        for i in [*rails, *storage]:
            remote = "10.100.9.9" if i["plane"] == "compute" else "10.101.9.9"
            [route] = json.loads(node.run(f"ip -j route get {remote} from {i['address'].split('/')[0]}").stdout)
            assert route["dev"] == i["name"]
        # the definition's name servers on the in-band plane only (node-audit.md NP-12; networkd hands them to resolved)
        networks = {i["name"]: node.read(f"/etc/systemd/network/20-gpufabric-{i['name']}.network") for i in managed}
        assert [n for n, text in networks.items() if "DNS=10.102.0.53\nDomains=pod-a.example.net\n" in text] == [inband["name"]]
        assert not [n for n, text in networks.items() if n != inband["name"] and "DNS=" in text]
        sysctl = node.run("sysctl -n net.ipv4.conf.all.arp_ignore net.ipv4.conf.all.arp_announce net.ipv4.conf.all.rp_filter")
        assert sysctl.stdout.split() == ["1", "2", "2"]
        second, _ = converge(definition, [node], play, tmp_path)
        assert second.ok, explain(second)
        assert changed(second) == {"gpu001": 0}


def test_doca_on_debian_12_in_check_mode_plans_the_repository_pins_and_holds_the_installed_kernel_packages(tmp_path: Path) -> None:
    """NVIDIA's repositories are unreachable here: check mode must still say exactly what it would do, and do nothing.
    The running kernel and the linux-image-amd64 metapackage stand in as installed packages: both are held."""
    kernel = os.uname().release
    with booted("gpu001", tmp_path, private_network=True) as node:
        for package in (f"linux-image-{kernel}", f"linux-headers-{kernel}", "linux-image-amd64"):  # as on a node
            built = node.run(
                f"mkdir -p /tmp/{package}/DEBIAN && printf 'Package: {package}\\nVersion: 1\\nArchitecture: all\\n"
                f"Maintainer: test <t@example.net>\\nDescription: stands in for the kernel\\n' > /tmp/{package}/DEBIAN/control"
                f" && dpkg-deb -b /tmp/{package} /tmp/{package}.deb >/dev/null && dpkg -i /tmp/{package}.deb"
            )
            assert built.returncode == 0, built.stderr
        play = role_playbook(tmp_path, "rdma_stack", "gpu_driver")
        result, events = converge(site("onprem-roce"), [node], play, tmp_path, check=True, extravars={"rdma_stack_source": "doca"})
        assert result.ok, explain(result)
        rdma, gpu = (r for r in events.results("Plan | show it"))
        repository = rdma["_rdma_stack_plan"]["repository"]
        assert repository["apt_line"] == (
            "deb [signed-by=/etc/apt/keyrings/gpufabric-doca.asc] https://linux.mellanox.com/public/repo/doca/3.2.1/debian12/x86_64/ ./"
        )
        assert rdma["_rdma_stack_plan"]["packages"] == ["doca-ofed"]
        [hold] = events.results("hold the running kernel and the metapackages")
        held = [r["item"] for r in hold["results"] if r["changed"]]
        assert held == [f"linux-image-{kernel}", f"linux-headers-{kernel}", "linux-image-amd64"]
        assert gpu["_gpu_driver_plan"]["repository"]["url"] == "https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/"
        assert gpu["_gpu_driver_plan"]["driver"] == ["nvidia-open"]  # branch 580: held by nvidia-driver-pinning-580
        for path in (
            "etc/apt/sources.list.d/gpufabric-doca.list",
            "etc/apt/preferences.d/gpufabric-doca",
            "etc/apt/preferences.d/gpufabric-nvidia-driver",
        ):
            assert not (node.root / path).exists(), f"check mode wrote {path}"
        assert node.run("apt-mark showhold").stdout == ""


@pytest.mark.parametrize(("name", "hosts"), [("onprem-roce", ["gpu001", "stor01", "mgmt01"]), ("onprem-ib", ["dgx01", "stor01", "sm01"])])
def test_the_site_playbook_in_check_mode_runs_cleanly(name: str, hosts: list[str], tmp_path: Path) -> None:
    """``ansible-playbook -i inventories/<site>/cluster.yaml playbooks/site.yml --check``, one container per kind of node
    (private networks: nothing leaves them), and the same through ``python -m fabric nodes --check``."""
    with contextlib.ExitStack() as stack:
        nodes = [stack.enter_context(booted(h, tmp_path, private_network=True)) for h in hosts]
        layer = container_layer(tmp_path, nodes)
        definition = f"inventories/{name}/cluster.yaml"
        limit = ",".join(hosts)
        if name == "onprem-roce":
            done = ansible("ansible-playbook", "-i", definition, "-i", str(layer), "playbooks/site.yml", "--check", "--limit", limit)
            assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
            recap = done.stdout[done.stdout.index("PLAY RECAP") :]
        else:
            done = subprocess.run(
                [str(BIN / "python"), "-m", "fabric", "nodes", definition, "--check", "-i", str(layer), "--limit", limit],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
                env={**ENV, "COLUMNS": "200"},
            )
            assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
            recap = done.stdout
            assert "3/3 hosts succeeded" in recap
            assert "Install | packages" in done.stderr  # the progress stream names the tasks as they run
        for host in hosts:
            assert re.search(rf"{host}\s.*(failed=0|│\s+\d+\s+│\s+\d+\s+│\s+0\s+│\s+0\s+│)", recap), recap
        for node in nodes:
            assert not list((node.root / "etc/systemd/network").glob("20-gpufabric-*")), "check mode wrote a .network file"


@pytest.fixture
def switch() -> Iterator[str]:
    """A network namespace with a bridge: the storage and in-band switch of the two-node scenario (removed after)."""
    name = f"gf-sw-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "-n", name, "link", "add", "br0", "mtu", "9000", "type", "bridge"], check=True)
        subprocess.run(["ip", "-n", name, "link", "set", "br0", "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


def plug(switch: str, host_end: str, mtu: int) -> None:
    """Move a container's host-side veth into the switch namespace as a bridge port of ``mtu``."""
    subprocess.run(["ip", "link", "set", host_end, "netns", switch], check=True)
    subprocess.run(["ip", "-n", switch, "link", "set", host_end, "mtu", str(mtu), "master", "br0", "up"], check=True)


def test_fabric_check_proves_each_plane_carries_full_size_frames_and_names_the_path_that_does_not(tmp_path: Path, switch: str) -> None:
    """Two GPU nodes on one storage/in-band switch: planes configured, strict checks pass with 8972-byte DF pings;
    then one switch port at MTU 1500 (the classic mismatch) fails both nodes, naming interface, peer and MTU. Storage
    per port: the switch here is a plain bridge (no LACP)."""
    definition = per_port_site(tmp_path)
    checks = {"fabric_check_strict": True, "fabric_check_ping_planes": ["storage", "inband"], "fabric_check_gid_planes": [], **NO_HOST_TUNING}
    with contextlib.ExitStack() as stack:
        nodes = []
        for host in ("gpu001", "gpu002"):
            managed = [i for i in host_vars(definition, host)["gpufabric_interfaces"] if i["address"] and i["plane"] != "oob"]
            node = stack.enter_context(booted(host, tmp_path, planes=[i["name"] for i in managed]))
            for i in managed:
                if i["plane"] in ("storage", "inband"):
                    plug(switch, node.links[i["name"]], i["mtu"])
            nodes.append(node)
        result, events = converge(definition, nodes, role_playbook(tmp_path, "network_planes", "fabric_check"), tmp_path, extravars=checks)
        assert result.ok, explain(result)
        pings = [r for res in events.results("jumbo ping") for r in res.get("results", [])]
        ports = (("enp170s0f0np0", 9000), ("enp41s0f0np0", 9000), ("enp170s0f1np1", 1500))  # storage x2, in-band
        assert sorted((r["item"]["interface"], r["item"]["peer"], r["item"]["mtu"], r["rc"]) for r in pings) == sorted(
            [(n, peer, mtu, 0) for peer in ("gpu001", "gpu002") for n, mtu in ports]
        )
        for ping in pings:  # DF set, the payload filling the MTU
            assert ping["cmd"][:8] == ["ping", "-c", "2", "-W", "2", "-M", "do", "-s"], ping["cmd"]
            assert ping["cmd"][8] == str(ping["item"]["mtu"] - 28)

        storage0 = next(i for i in host_vars(definition, "gpu002")["gpufabric_interfaces"] if i["name"] == "enp170s0f0np0")
        subprocess.run(["ip", "-n", switch, "link", "set", nodes[1].links["enp170s0f0np0"], "mtu", "1500"], check=True)
        layer = container_layer(tmp_path, nodes)
        done = subprocess.run(
            [
                str(BIN / "python"),
                "-m",
                "fabric",
                "nodes",
                str(definition),
                "--playbook",
                "check",
                "-i",
                str(layer),
                "--limit",
                "gpu001,gpu002",
                "-e",
                "fabric_check_ping_planes=[storage]",
                "-e",
                "fabric_check_gid_planes=[]",
                "-e",
                "fabric_check_host_tuning=false",
                "-e",
                "fabric_check_cabling=false",
                "--json",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            env=ENV,
        )
        assert done.returncode == 1, done.stdout + done.stderr
        report = json.loads(done.stdout)["hosts"]
        [(task, message)] = [(f["task"], f["msg"]) for f in report["gpu001"]["failures"]]
        assert task.startswith("Verify | every IB port Active, every RoCE port with its RoCE v2 GID, every path carrying full-size frames")
        assert f"enp170s0f0np0 (storage) → gpu002 {storage0['address'].split('/')[0]}: 8972-byte DF ping failed at MTU 9000" in message
        assert "enp41s0f0np0" not in message  # the other storage port's path is fine
        assert report["gpu002"]["failed"] == 1  # and the same path seen from the other side


GPU_VARS = {"gpu_driver_nvidia_smi": "/srv/gpu/nvidia-smi", "gpu_driver_sysfs": "/srv/gpu/sys", "gpu_driver_procfs": "/srv/gpu/proc"}
PEERMEM = {**GPU_VARS, "gpu_driver_rdma_source": "doca", "gpu_driver_gpudirect": "peermem"}


def test_gpu_driver_configures_gpudirect_persistence_and_services_and_checks_every_gpu(tmp_path: Path) -> None:
    """The driver packages stand in (their units, a stub nvidia-smi and nvidia-persistenced, sysfs and procfs trees):
    configure and verify run for real. nvidia-peermem with DOCA; a GPU off the bus and one on another driver branch
    fail the host, each named; DMA-BUF (auto on this kernel) drops nvidia-peermem from boot and needs the open module."""
    with booted("gpu001", tmp_path, files=fake_gpus("580.95.05", 8)) as node:
        play = role_playbook(tmp_path, "gpu_driver")
        first, _ = converge(site("onprem-roce"), [node], play, tmp_path, skip_tags="gpu_driver_install", extravars=PEERMEM)
        assert first.ok, explain(first)
        assert node.read("/etc/modules-load.d/nvidia-peermem.conf").splitlines()[-1] == "nvidia-peermem"
        for unit in ("nvidia-persistenced.service", "nvidia-fabricmanager.service"):  # DGX H100: NVSwitches, so fabric manager
            assert node.run(f"systemctl is-enabled {unit}; systemctl is-active {unit}").stdout.split() == ["enabled", "active"]
        # persistence mode really on: the unit runs NVIDIA's role's command line, not the package's --no-persistence-mode
        assert "nvidia-persistenced --user root --persistence-mode --verbose" in node.read("/srv/gpu/calls.log")
        assert node.read("/etc/modprobe.d/gpufabric-blacklist-nouveau.conf").splitlines()[1] == "blacklist nouveau"
        smi = "nvidia-smi --query-gpu=index,driver_version,persistence_mode --format=csv,noheader"
        assert [line for line in node.read("/srv/gpu/calls.log").splitlines() if line.startswith("nvidia-smi ")] == [smi]
        second, _ = converge(site("onprem-roce"), [node], play, tmp_path, skip_tags="gpu_driver_install", extravars=PEERMEM)
        assert second.ok, explain(second)
        assert changed(second) == {"gpu001": 0}

        good = node.read("/srv/gpu/gpus.csv")
        lines = good.splitlines()
        lines[5] = "5, 560.35.03, Enabled"
        (node.root / "srv/gpu/gpus.csv").write_text("\n".join(lines[:7]) + "\n")  # GPU 7 fell off the bus
        broken, _ = converge(site("onprem-roce"), [node], play, tmp_path, skip_tags="gpu_driver_install", extravars=PEERMEM)
        [(task, message)] = failures(broken)["gpu001"]
        assert task == "Verify | the GPUs, the driver, fabric manager and the GPUDirect path are as planned"
        assert "GPU 5: driver 560.35.03, persistence Enabled (expected branch 580, Enabled)" in message
        assert "nvidia-smi sees 7 GPU(s), the node has 8" in message

        (node.root / "srv/gpu/gpus.csv").write_text(good)
        dmabuf, events = converge(site("onprem-roce"), [node], play, tmp_path, skip_tags="gpu_driver_install", extravars=GPU_VARS)
        assert dmabuf.ok, explain(dmabuf)
        [plan] = events.results("Plan | show it")
        assert plan["_gpu_driver_plan"]["gpudirect"] == "dmabuf"
        assert not (node.root / "etc/modules-load.d/nvidia-peermem.conf").exists()  # no -EINVAL at every boot
        (node.root / "srv/gpu/proc/driver/nvidia/version").write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05\n")
        closed, _ = converge(site("onprem-roce"), [node], play, tmp_path, skip_tags="gpu_driver_install", extravars=GPU_VARS)
        [(_, message)] = failures(closed)["gpu001"]
        assert "the loaded driver is not the open kernel module, which DMA-BUF needs" in message


def roce_gid_tree(hostvars: dict[str, Any], broken: str | None = None) -> dict[str, tuple[str, int]]:
    """sysfs GID tables as ConnectX ports have them (stubs.fake_roce_gids): each port's address at index 2 (RoCE v1) and
    3 (RoCE v2), the storage bond's on mlx5_bond_0 (RoCE LAG). ``broken``: that port has only the RoCE v1 entry."""
    return fake_roce_gids(hostvars["gpufabric_interfaces"], hostvars["gpufabric_bonds"], root=f"{IB}/sys", broken=broken)


def test_fabric_check_reports_the_roce_v2_gid_index_of_every_port_and_names_a_port_without_one(tmp_path: Path) -> None:
    gpu001 = host_vars(site("onprem-roce"), "gpu001")
    checks = {"fabric_check_strict": True, "fabric_check_ping_peers": 0, "fabric_check_sysfs": f"{IB}/sys", **NO_HOST_TUNING}
    with booted("gpu001", tmp_path, private_network=True, files=roce_gid_tree(gpu001)) as node:
        result, events = converge(site("onprem-roce"), [node], role_playbook(tmp_path, "fabric_check"), tmp_path, extravars=checks)
        assert result.ok, explain(result)
        [summary] = events.results("Verify | summary")
        rails = [i["name"] for i in gpu001["gpufabric_interfaces"] if i["hca"] and i["plane"] == "compute"]
        assert summary["msg"]["roce_gid_index"] == {**dict.fromkeys(rails, 3), "bond-storage": 3}  # the storage ports through their bond
    with booted("gpu001", tmp_path, private_network=True, files=roce_gid_tree(gpu001, broken="enp79s0np0")) as node:
        result, _ = converge(site("onprem-roce"), [node], role_playbook(tmp_path, "fabric_check"), tmp_path, extravars=checks)
        [(_, message)] = failures(result)["gpu001"]
        assert "enp79s0np0 (mlx5_4): no RoCE v2 GID for 10.100.0.5 (only IB/RoCE v1 at index 2)" in message


def test_fabric_check_pairs_hosts_for_ib_write_bw_on_every_rail_and_names_a_slow_one(tmp_path: Path) -> None:
    """gpu001 serves, gpu002 connects (stub perftest: it reports what bw.gbps says); every rail with its GID index."""
    definition = site("onprem-roce")
    checks = {
        "fabric_check_strict": True,
        "fabric_check_ping_peers": 0,
        "fabric_check_sysfs": f"{IB}/sys",
        **NO_HOST_TUNING,
        "fabric_check_bandwidth": True,
        "fabric_check_bandwidth_seconds": 1,
        "fabric_check_bandwidth_min_gbps": 350,
        "fabric_check_ib_write_bw": "/srv/perf/ib_write_bw",
    }
    with contextlib.ExitStack() as stack:
        nodes = []
        for host in ("gpu001", "gpu002"):
            files = {**roce_gid_tree(host_vars(definition, host)), **fake_perftest("390.63")}
            nodes.append(stack.enter_context(booted(host, tmp_path, private_network=True, files=files)))
        play = role_playbook(tmp_path, "fabric_check")
        result, events = converge(definition, nodes, play, tmp_path, extravars=checks)
        assert result.ok, explain(result)
        rails = [i for i in host_vars(definition, "gpu001")["gpufabric_interfaces"] if i["plane"] == "compute"]
        server = host_vars(definition, "gpu001")["ansible_host"]
        assert sorted(nodes[0].read("/srv/perf/calls.log").splitlines()) == sorted(
            f"ib_write_bw -d {i['hca']} -p {18515 + i['index']} -x 3 -D 1 -F --report_gbits" for i in rails
        )
        assert nodes[1].read("/srv/perf/calls.log").splitlines() == [
            f"ib_write_bw -d {i['hca']} -p {18515 + i['index']} -x 3 -D 1 -F --report_gbits {server}" for i in rails
        ]
        [_, client] = sorted(events.results("Verify | summary"), key=lambda r: bool(r["msg"]["bandwidth_gbps"]))
        assert client["msg"]["bandwidth_gbps"] == {i["name"]: 390.63 for i in rails}

        (nodes[1].root / "srv/perf/bw.gbps").write_text("120.5\n")  # one slow path: the whole pair's rails, as seen from the client
        slow, _ = converge(definition, nodes, play, tmp_path, extravars=checks)
        assert not failures(slow).get("gpu001")
        [(_, message)] = failures(slow)["gpu002"]
        assert f"{rails[0]['name']} ({rails[0]['hca']}) → gpu001: 120.5 Gb/s, below 350" in message
        assert client["msg"]["bandwidth_memory"] == "host: this node's ib_write_bw is built without CUDA (no --use_cuda in its --help)"

        # GPUDirect RDMA (node-audit.md FC-10): both perftests built with CUDA → every run on both ends reads GPU memory
        # of the rail's GPU; only one of them → host memory, and the summary says whose perftest lacks it
        (nodes[1].root / "srv/perf/bw.gbps").write_text("390.63\n")
        for node in nodes:
            (node.root / "srv/perf/calls.log").write_text("")
        (nodes[1].root / "srv/perf/cuda").write_text("")
        half, half_events = converge(definition, nodes, play, tmp_path, extravars=checks)
        assert half.ok, explain(half)
        assert "--use_cuda" not in nodes[1].read("/srv/perf/calls.log")
        memory = {r["msg"]["bandwidth_memory"] for r in half_events.results("Verify | summary")}
        assert memory == {
            "host: the partner's ib_write_bw is built without CUDA",
            "host: this node's ib_write_bw is built without CUDA (no --use_cuda in its --help)",
        }
        (nodes[0].root / "srv/perf/cuda").write_text("")
        gpu, gpu_events = converge(definition, nodes, play, tmp_path, extravars={**checks, "fabric_check_bandwidth_cuda": True})
        assert gpu.ok, explain(gpu)
        assert nodes[1].read("/srv/perf/calls.log").splitlines()[-len(rails) :] == [
            f"ib_write_bw -d {i['hca']} -p {18515 + i['index']} -x 3 --use_cuda={i['index']} -D 1 -F --report_gbits {server}" for i in rails
        ]
        assert {r["msg"]["bandwidth_memory"] for r in gpu_events.results("Verify | summary")} == {"GPU (GPUDirect RDMA, ib_write_bw --use_cuda)"}


FW = "/srv/fw"


def test_nic_firmware_sets_the_operators_nvconfig_reads_it_back_and_names_what_a_nic_refuses(tmp_path: Path) -> None:
    """gpu001's eight RoCE NICs as stub mlxconfig/flint with a PCI tree: only what differs is set (once), read back,
    the reboot it needs reported; a NIC keeping ATS on and firmware off the pinned version fail the host, named."""
    interfaces = host_vars(site("onprem-roce"), "gpu001")["gpufabric_interfaces"]
    hcas = sorted({i["hca"] for i in interfaces if i["plane"] == "compute" and i["link_layer"] == "ethernet" and i["hca"]})
    files = {f"{FW}/{rel}": content for rel, content in fake_firmware(hcas, "28.39.1002").items()}
    tools = {
        "nic_firmware_sysfs": f"{FW}/sys",
        "nic_firmware_mlxconfig": f"{FW}/stubs/mlxconfig",
        "nic_firmware_flint": f"{FW}/stubs/flint",
        "nic_firmware_reboot": False,  # a container does not reboot: the pending change is reported instead
    }
    files[f"{FW}/stubs/hidden"] = ("MAX_ACC_OUT_READ\n", 0o644)  # ADVANCED_PCI_SETTINGS off: skipped, as the operator skips it
    with booted("gpu001", tmp_path, private_network=True, files=files) as node:
        assert node.run(firmware_links(FW, hcas)).returncode == 0
        play = role_playbook(tmp_path, "nic_firmware")
        first, events = converge(site("onprem-roce"), [node], play, tmp_path, extravars=tools)
        assert first.ok, explain(first)
        sets = [c for c in node.read(f"{FW}/stubs/calls.log").splitlines() if " set " in c]
        bdfs = [f"0000:{0x18 + n:02x}:00.0" for n in range(len(hcas))]
        # the ports become Ethernet first (factory ConnectX-7 ports are InfiniBand), then the RoCE settings (F8)
        assert sorted(sets) == [f"mlxconfig -y -d {bdf} set LINK_TYPE_P1=2 ATS_ENABLED=0 CNP_DSCP_P1=48 ROCE_CC_PRIO_MASK_P1=255" for bdf in bdfs]
        queries = [c for c in node.read(f"{FW}/stubs/calls.log").splitlines() if " set " not in c and c.startswith("mlxconfig")]
        assert queries == [f"mlxconfig -d {bdf} -e query" for bdf in bdfs] * 2  # everything, never a hidden name (F7)
        [skipped] = events.results("Configure | say what the operator would skip on these cards")
        assert f"{hcas[0]}: MAX_ACC_OUT_READ: not listed by this NIC (hidden or unsupported)" in skipped["msg"]
        [pending] = [r for r in events.results("Say the NIC settings wait for the next boot") if not r.get("skipped")]
        assert "takes effect at the next reboot" in pending["msg"]
        second, _ = converge(site("onprem-roce"), [node], play, tmp_path, extravars=tools)
        assert second.ok, explain(second)
        assert changed(second) == {"gpu001": 0}
        assert len([c for c in node.read(f"{FW}/stubs/calls.log").splitlines() if " set " in c]) == len(hcas)  # nothing written again

        node.run(f"echo ATS_ENABLED > {FW}/stubs/stuck; rm {FW}/stubs/{bdfs[0]}.nv.json")  # a NIC that keeps ATS on
        refused, _ = converge(
            site("onprem-roce"), [node], play, tmp_path, extravars={**tools, "nic_firmware_policy": "pin", "nic_firmware_version": "28.42.1000"}
        )
        [(task, message)] = failures(refused)["gpu001"]
        assert task == "Verify | every setting is what NVIDIA's operator sets, and the firmware follows the policy"
        assert f"{hcas[0]}: ATS_ENABLED expected 0, next boot 1" in message
        assert f"{hcas[1]}: ATS_ENABLED" not in message
        assert f"{hcas[0]}: firmware 28.39.1002, pinned 28.42.1000" in message


EFA_INSTALLER = """#!/bin/sh
# stands in for AWS's efa_installer.sh: installs a libfabric fi_info that sees one EFA device and the aws-ofi-nccl plugin
set -e
mkdir -p /opt/amazon/efa/bin /opt/amazon/ofi-nccl/lib
printf '#!/bin/sh\\necho "provider: efa"\\necho "    fabric: efa"\\necho "    domain: rdmap16s27-rdm"\\n' > /opt/amazon/efa/bin/fi_info
chmod 755 /opt/amazon/efa/bin/fi_info
: > /opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so
# the marker as AWS's installer writes it (read with cat, EC2 User Guide; grepped by ParallelCluster's cookbook)
printf '# EFA installer version: %s\\n# Debug packages installed: no\\n# argv: %s\\n' "@VERSION@" "$*" > /opt/amazon/efa_installed_packages
"""


def efa_tarball(version: str = "1.47.0") -> bytes:
    """aws-efa-installer-<version>.tar.gz as AWS lays it out: aws-efa-installer/efa_installer.sh."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        script = EFA_INSTALLER.replace("@VERSION@", version).encode()
        info = tarfile.TarInfo("aws-efa-installer/efa_installer.sh")
        info.size, info.mode, info.mtime = len(script), 0o755, 0
        tar.addfile(info, io.BytesIO(script))
    return buffer.getvalue()


def test_cloud_fabric_installs_efa_only_from_a_download_with_the_pinned_sha256_and_verifies_it(tmp_path: Path) -> None:
    """An AWS GPU node (the download is a file:// URL into the container): a wrong SHA256 fails the play before anything
    is unpacked or run; the right one installs, fi_info -p efa and the NCCL plugin are verified, a rerun changes nothing;
    a new pinned version is installed over the old one (node-audit.md C3), read back from the installer's marker."""
    tarball = efa_tarball()
    aws = {
        "gpufabric_target": "aws",
        "cloud_fabric_efa_version": "1.47.0",
        "cloud_fabric_efa_url": "file:///srv/efa/aws-efa-installer-1.47.0.tar.gz",
        "cloud_fabric_gpus": 0,  # no GPUs here: the image-driver read-back has its own tests (test_cloud_fabric.py)
    }
    play = role_playbook(tmp_path, "cloud_fabric")
    with booted("gpu001", tmp_path, private_network=True) as node:
        (node.root / "srv/efa").mkdir(parents=True)
        (node.root / "srv/efa/aws-efa-installer-1.47.0.tar.gz").write_bytes(tarball)
        wrong, _ = converge(site("onprem-roce"), [node], play, tmp_path, extravars={**aws, "cloud_fabric_efa_sha256": "0" * 64})
        [(task, message)] = failures(wrong)["gpu001"]
        assert task == "Install | the EFA installer, refused unless its SHA256 is the pinned one"
        assert "checksum" in message.lower()
        assert not (node.root / "opt/amazon").exists()

        sha256 = {**aws, "cloud_fabric_efa_sha256": hashlib.sha256(tarball).hexdigest()}
        first, _ = converge(site("onprem-roce"), [node], play, tmp_path, extravars=sha256)
        assert first.ok, explain(first)
        assert node.read("/opt/amazon/efa_installed_packages").splitlines()[::2] == ["# EFA installer version: 1.47.0", "# argv: -y"]
        second, _ = converge(site("onprem-roce"), [node], play, tmp_path, extravars=sha256)
        assert second.ok, explain(second)
        assert changed(second) == {"gpu001": 0}

        # the pin moves to 1.48.0: the installer runs again, though a marker (1.47.0's) exists
        newer = efa_tarball("1.48.0")
        (node.root / "srv/efa/aws-efa-installer-1.48.0.tar.gz").write_bytes(newer)
        bump = {**aws, "cloud_fabric_efa_version": "1.48.0", "cloud_fabric_efa_url": "file:///srv/efa/aws-efa-installer-1.48.0.tar.gz"}
        bump["cloud_fabric_efa_sha256"] = hashlib.sha256(newer).hexdigest()
        upgraded, _ = converge(site("onprem-roce"), [node], play, tmp_path, extravars=bump)
        assert upgraded.ok, explain(upgraded)
        assert node.read("/opt/amazon/efa_installed_packages").startswith("# EFA installer version: 1.48.0\n")

        # an installer that leaves another version behind (here: 1.47.0's, served as 1.49.0) fails the verify, naming both
        odd = efa_tarball("1.47.0")
        (node.root / "srv/efa/aws-efa-installer-1.49.0.tar.gz").write_bytes(odd)
        mislabelled = {**aws, "cloud_fabric_efa_version": "1.49.0", "cloud_fabric_efa_url": "file:///srv/efa/aws-efa-installer-1.49.0.tar.gz"}
        mislabelled["cloud_fabric_efa_sha256"] = hashlib.sha256(odd).hexdigest()
        stale, _ = converge(site("onprem-roce"), [node], play, tmp_path, extravars=mislabelled)
        [(task, message)] = failures(stale)["gpu001"]
        assert task == "Verify | EFA and the NCCL plugin are there"
        assert "the EFA installer version in /opt/amazon/efa_installed_packages is 1.47.0, pinned 1.49.0" in message


PCI = "/srv/pci"


def test_host_tuning_sets_governor_acs_and_max_read_request_reads_them_back_and_plans_iommu_passthrough(tmp_path: Path) -> None:
    """Four CPUs on powersave, a GPU and NIC mlx5_0 behind a PCIe switch whose ports have ACS on (the switch's upstream
    port has no ACS), the NIC at MaxReadReq 512 (stub setpci/lspci over the board's registers): governor, ACS and
    MaxReadReq are applied and read back, the boot unit enabled, iommu=pt written for the next boot; a second run
    changes nothing; a bridge that keeps ACS on and the definition's RDMA devices that the node lacks fail it, named."""
    files = {f"{PCI}/{rel}": content for rel, content in fake_pci_host(4).items()}
    files["/lib/systemd/system/ondemand.service"] = (SERVICE.format(name="Ubuntu's ondemand.service"), 0o644)  # where Ubuntu has it
    tuning = {
        "host_tuning_sysfs": f"{PCI}/sys",
        "host_tuning_procfs": f"{PCI}/proc",
        "host_tuning_setpci": f"{PCI}/stubs/setpci",
        "host_tuning_lspci": f"{PCI}/stubs/lspci",
        "host_tuning_packages": [],  # no network here: the stubs stand in for pciutils
        "host_tuning_nic_wait_seconds": 2,
    }
    play = role_playbook(tmp_path, "host_tuning")
    with booted("gpu001", tmp_path, private_network=True, files=files) as node:
        assert node.run(pci_links(PCI)).returncode == 0
        first, events = converge(site("onprem-roce"), [node], play, tmp_path, extravars={**tuning, "host_tuning_nic_devices": ["mlx5_0"]})
        assert first.ok, explain(first)
        for n in range(4):
            assert node.read(f"{PCI}/sys/devices/system/cpu/cpu{n}/cpufreq/scaling_governor").strip() == "performance"
        writes = [c for c in node.read(f"{PCI}/stubs/calls.log").splitlines() if "=" in c]
        # every bridge with ACS (not the switch's upstream port), and the NIC's MaxReadReq bits only (NIC Configuration Operator)
        assert writes == [f"setpci -s {b} ECAP_ACS+0x6.w=0000" for b in (PCI_ROOT, *PCI_SWITCH[1:])] + [f"setpci -s {PCI_NIC} CAP_EXP+08.w=5000:7000"]
        assert node.read(f"{PCI}/stubs/pci/{PCI_NIC}.CAP_EXP+08.w").strip() == "5930"  # relaxed ordering and the rest kept
        assert "NIC_DEVICES=mlx5_0" in node.read("/etc/gpufabric/host-tuning.env").splitlines()
        assert node.read("/etc/default/grub.d/60-gpufabric.cfg").splitlines()[-1] == (
            'GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT iommu=pt"'
        )
        assert "kernel.numa_balancing = 0" in node.read("/etc/sysctl.d/60-gpufabric-tuning.conf")
        assert node.run("systemctl is-enabled gpufabric-host-tuning.service").stdout.strip() == "enabled"
        assert node.run("systemctl is-enabled ondemand.service").stdout.strip() == "masked"  # it would reset the governor (H2)
        [verdict] = events.results("Verify | governors and ACS as planned")
        assert "iommu=pt after the next reboot (/etc/default/grub.d/60-gpufabric.cfg, update-grub)" in verdict["msg"]
        second, _ = converge(site("onprem-roce"), [node], play, tmp_path, extravars={**tuning, "host_tuning_nic_devices": ["mlx5_0"]})
        assert second.ok, explain(second)
        assert changed(second) == {"gpu001": 0}

        # at boot the unit puts back what a reboot lost
        node.run(f"echo 2930 > {PCI}/stubs/pci/{PCI_NIC}.CAP_EXP+08.w")
        assert node.run("systemctl restart gpufabric-host-tuning.service").returncode == 0
        assert node.read(f"{PCI}/stubs/pci/{PCI_NIC}.CAP_EXP+08.w").strip() == "5930"

        node.run(f"echo {PCI_ROOT}.ECAP_ACS+0x6.w > {PCI}/stubs/pci/stuck; echo 001d > {PCI}/stubs/pci/{PCI_ROOT}.ECAP_ACS+0x6.w")
        refused, _ = converge(site("onprem-roce"), [node], play, tmp_path, extravars=tuning)  # the definition's RDMA devices
        [(_, message)] = failures(refused)["gpu001"]
        assert f"{PCI_ROOT}: ACS control expected 0000, actual 001d" in message
        assert "mlx5_1: no such RDMA device" in message


def test_fabric_check_reads_the_host_tuning_back_and_fails_an_untuned_gpu_node_naming_each_setting(tmp_path: Path) -> None:
    """gpu001 with a GPU and NIC mlx5_0 behind a PCIe switch (sysfs/procfs trees, stub setpci): untuned, the strict check
    names every setting and every RDMA device of the definition that is not there; tuned, it passes and says what it read."""
    checks = {
        "fabric_check_strict": True,
        "fabric_check_ping_peers": 0,
        "fabric_check_gid_planes": [],
        "fabric_check_sysfs": f"{PCI}/sys",
        "fabric_check_procfs": f"{PCI}/proc",
        "fabric_check_setpci": f"{PCI}/stubs/setpci",
        "fabric_check_cabling": False,
    }
    hcas = sorted({i["hca"] for i in host_vars(site("onprem-roce"), "gpu001")["gpufabric_interfaces"] if i["hca"]})
    files = {f"{PCI}/{rel}": content for rel, content in fake_pci_host(4).items()}
    play = role_playbook(tmp_path, "fabric_check")
    with booted("gpu001", tmp_path, private_network=True, files=files) as node:
        assert node.run(pci_links(PCI)).returncode == 0
        untuned, _ = converge(site("onprem-roce"), [node], play, tmp_path, extravars=checks)
        [(task, message)] = failures(untuned)["gpu001"]
        assert task.endswith("the host tuned (strict)")
        for problem in [
            "CPU governor expected performance: 4 of 4 CPUs differ (cpu0 powersave, cpu1 powersave, cpu2 powersave, cpu3 powersave)",
            "kernel.numa_balancing expected 0, actual 1",
            f"mlx5_0 ({PCI_NIC}): the IOMMU translates its DMA (group type DMA-FQ)",
            f"bridge {PCI_ROOT} (above 0000:18:00.0, {PCI_NIC}): ACS control expected 0000, actual 001d",
            f"mlx5_0 ({PCI_NIC}): PCIe MaxReadReq expected 4096, actual 512",
            *(f"{hca}: no such RDMA device in sysfs" for hca in hcas if hca != "mlx5_0"),  # every RDMA device of the definition
        ]:
            assert problem in message, problem
        assert not [line for line in node.read(f"{PCI}/stubs/calls.log").splitlines() if "=" in line]  # read-only

        tune = [f"echo performance > {PCI}/sys/devices/system/cpu/cpu{n}/cpufreq/scaling_governor" for n in range(4)]
        tune += [f"echo 0 > {PCI}/proc/sys/kernel/numa_balancing", f"echo identity | tee {PCI}/sys/kernel/iommu_groups/*/type"]
        tune += [f"echo 0000 > {PCI}/stubs/pci/{bdf}.ECAP_ACS+0x6.w" for bdf in (PCI_ROOT, *PCI_SWITCH[1:])]
        tune += [f"echo 5930 > {PCI}/stubs/pci/{PCI_NIC}.CAP_EXP+08.w"]
        assert node.run(" && ".join(tune)).returncode == 0
        tuned, events = converge(site("onprem-roce"), [node], play, tmp_path, extravars={**checks, "fabric_check_host_tuning_hcas": ["mlx5_0"]})
        assert tuned.ok, explain(tuned)
        [summary] = events.results("Verify | summary")
        assert summary["msg"]["host_tuning"]["nics"] == {
            "mlx5_0": {"pci": PCI_NIC, "iommu": "identity", "numa_node": 0, "relaxed_ordering": True, "max_read_request": 4096}
        }
        assert summary["msg"]["host_tuning"]["cpu_governor"] == "performance"


OPENIBD_STUB = """[Unit]
Description=stand-in for DOCA's openibd (logs when a reload starts and ends)

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'echo "start $(date +%%s.%%N)" >> /var/log/openibd.log; sleep 3; echo "end $(date +%%s.%%N)" >> /var/log/openibd.log'
"""


def handler_play(serial: int) -> list[dict[str, object]]:
    """rdma_stack's real handler file, notified on every host of a play with ``serial`` (the site play's shape)."""
    return [
        {
            "name": f"reload the RDMA stack, serial {serial}",
            "hosts": "all",
            "serial": serial,
            "gather_facts": False,
            # openibd asked for, and the blocker check (tasks/main.yml) found nothing in the way
            "vars": {"rdma_stack_manage_hardware": True, "rdma_stack_reboot": False, "_rdma_stack_openibd_blockers": []},
            "pre_tasks": [{"name": "Only a container", "ansible.builtin.assert": {"that": "ansible_connection == 'community.docker.nsenter'"}}],
            "tasks": [
                {"name": "Batch starts", "ansible.builtin.shell": 'echo "batch $(date +%s.%N)" >> /var/log/openibd.log', "changed_when": False},
                {"name": "New RDMA modules", "ansible.builtin.command": "true", "changed_when": True, "notify": "rdma_stack_restart_openibd"},
            ],
            "handlers": [{"name": "rdma_stack handlers", "ansible.builtin.import_tasks": str(ROOT / "roles/rdma_stack/handlers/main.yml")}],
        }
    ]


def reload_log(node: Container) -> dict[str, list[float]]:
    events: dict[str, list[float]] = {}
    for line in node.read("/var/log/openibd.log").splitlines():
        what, when = line.split()
        events.setdefault(what, []).append(float(when))
    return events


def test_the_rdma_stack_reload_handler_drains_one_node_at_a_time_and_respects_serial(tmp_path: Path) -> None:
    """Three nodes, an openibd stand-in whose reload takes 3 s: in one batch (serial 3) the reloads never overlap
    (throttle 1); with serial 1 each node's reload ends before the next node's batch begins."""
    files = {"/etc/systemd/system/openibd.service": (OPENIBD_STUB, 0o644)}
    with contextlib.ExitStack() as stack:
        nodes = [stack.enter_context(booted(h, tmp_path, private_network=True, files=files)) for h in ("gpu001", "gpu002", "gpu003")]
        for serial in (3, 1):
            for node in nodes:
                node.run("rm -f /var/log/openibd.log")
            playbook = tmp_path / f"handler-{serial}.yml"
            playbook.write_text(json.dumps(handler_play(serial)))
            result, _ = converge(site("onprem-roce"), nodes, playbook, tmp_path)
            assert result.ok, explain(result)
            logs = [reload_log(node) for node in nodes]
            assert all(len(log["start"]) == len(log["end"]) == 1 for log in logs), logs  # each node reloaded once
            reloads = sorted((log["start"][0], log["end"][0]) for log in logs)
            for (_, end), (start, _) in itertools.pairwise(reloads):
                assert start >= end, f"serial {serial}: two nodes reloaded at once: {reloads}"
            if serial == 1:
                batches = sorted((log["batch"][0], log["end"][0]) for log in logs)
                for (_, reloaded), (next_batch, _) in itertools.pairwise(batches):
                    assert next_batch >= reloaded, f"a batch began before the previous batch's reload ended: {batches}"
