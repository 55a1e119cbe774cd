"""The node roles for real, in booted Debian bookworm containers (systemd-nspawn on an overlay of a debootstrap root):
converge, then a second run that must change nothing, then what is on the node. Hardware that does not exist here
(ConnectX NICs, InfiniBand ports, GPUs) is stub programs and sysfs trees that record what the roles applied."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.roles.containers import Container, bookworm_image, booted
from tests.roles.scenario import changed, converge, explain, failures, host_vars, role_playbook, site
from tests.roles.stubs import fake_nic

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="containers need root (./dev test runs as root in CI)")


@pytest.fixture(scope="session", autouse=True)
def image() -> Path:
    """The bookworm root, debootstrapped once and cached in .gpufabric/images."""
    return bookworm_image()


NIC = "/srv/nic"
NIC_VARS = {"nic_qos_sysfs": f"{NIC}/sys", "nic_qos_mlnx_qos": f"{NIC}/stubs/mlnx_qos", "nic_qos_cma_roce_tos": f"{NIC}/stubs/cma_roce_tos"}


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
    first, _ = converge(site("onprem-roce"), [roce_gpu], play, tmp_path, extravars=NIC_VARS)
    assert first.ok, explain(first)
    assert changed(first)["gpu001"] > 0

    # inbox RDMA stack installed
    dpkg = roce_gpu.run("dpkg-query -W -f '${Package} ${Status}\\n' rdma-core ibverbs-utils infiniband-diags perftest")
    assert sorted(dpkg.stdout.splitlines()) == [f"{p} install ok installed" for p in ("ibverbs-utils", "infiniband-diags", "perftest", "rdma-core")]

    # the contract file, the persistence unit (enabled) and the udev rule
    env = roce_gpu.read("/etc/gpufabric/nic-qos.env")
    contract = ["DSCP=26", "PRIORITY=3", 'PFC="0,0,0,1,0,0,0,0"', "CNP_DSCP=48", "CNP_PRIORITY=6", "TOS=106", "CABLE_M=5"]
    for line in [*contract, f'PORTS="{" ".join(ports)}"']:
        assert line in env.splitlines()
    assert roce_gpu.run("systemctl is-enabled gpufabric-nic-qos.service").stdout.strip() == "enabled"
    assert "mlx5_core" in roce_gpu.read("/etc/udev/rules.d/90-gpufabric-nic-qos.rules")

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
    second, _ = converge(site("onprem-roce"), [roce_gpu], play, tmp_path, extravars=NIC_VARS)
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
