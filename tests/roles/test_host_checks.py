"""fabric_check's host-tuning read-back without a node: its script against a sysfs/procfs tree (a GPU and a ConnectX NIC
behind a PCIe switch) with a stub setpci, and the filter that compares what it read with the plan."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from plugins.filter.gpufabric_host_checks import host_tuning_report
from tests.conftest import ROOT
from tests.roles.stubs import PCI_GPU, PCI_NIC, PCI_ROOT, PCI_SWITCH, fake_pci_host, pci_links, write_tree

SCRIPT = ROOT / "roles" / "fabric_check" / "files" / "host-tuning-read.sh"
PLANNED: dict[str, Any] = {
    "cpu_governor": "performance",
    "numa_balancing": 0,
    "iommu_passthrough": True,
    "acs_off": True,
    "nic_relaxed_ordering": True,
    "nic_max_read_request": 4096,
    "gpu_relaxed_ordering": None,
}


def read(tmp_path: Path, *hcas: str, setpci: str | None = None) -> list[str]:
    done = subprocess.run(
        ["bash", str(SCRIPT), str(tmp_path / "sys"), str(tmp_path / "proc"), setpci or str(tmp_path / "stubs" / "setpci"), *hcas],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout.splitlines()


def host(tmp_path: Path, devctl: str = "2930") -> Path:
    write_tree(tmp_path, fake_pci_host(2, devctl))
    subprocess.run(pci_links(str(tmp_path)), shell=True, check=True)
    return tmp_path


def test_an_untuned_host_is_read_back_and_every_difference_named(tmp_path: Path) -> None:
    lines = read(host(tmp_path), "mlx5_0")
    upstream, down_gpu, down_nic = PCI_SWITCH
    assert sorted(line for line in lines if line.startswith(("device", "devctl", "bridge"))) == sorted(
        [
            f"device {PCI_GPU} gpu - DMA-FQ 0",
            f"bridge {down_gpu} {PCI_GPU} 001d",
            f"bridge {upstream} {PCI_GPU} none",  # a switch upstream port without ACS
            f"bridge {PCI_ROOT} {PCI_GPU} 001d",
            f"device {PCI_NIC} nic mlx5_0 DMA-FQ 0",
            f"devctl {PCI_NIC} 2930",
            f"bridge {down_nic} {PCI_NIC} 001d",
            f"bridge {upstream} {PCI_NIC} none",
            f"bridge {PCI_ROOT} {PCI_NIC} 001d",
        ]
    )
    report = host_tuning_report(lines, PLANNED)
    assert report["problems"] == [
        "CPU governor expected performance: 2 of 2 CPUs differ (cpu0 powersave, cpu1 powersave)",
        "kernel.numa_balancing expected 0, actual 1",
        f"GPU {PCI_GPU}: the IOMMU translates its DMA (group type DMA-FQ); expected passthrough (iommu=pt is not on the kernel command line)",
        f"mlx5_0 ({PCI_NIC}): the IOMMU translates its DMA (group type DMA-FQ); expected passthrough (iommu=pt is not on the kernel command line)",
        f"bridge {PCI_ROOT} (above {PCI_GPU}, {PCI_NIC}): ACS control expected 0000, actual 001d",
        f"bridge {down_gpu} (above {PCI_GPU}): ACS control expected 0000, actual 001d",
        f"bridge {down_nic} (above {PCI_NIC}): ACS control expected 0000, actual 001d",
        f"mlx5_0 ({PCI_NIC}): PCIe MaxReadReq expected 4096, actual 512",
    ]
    nic = {"pci": PCI_NIC, "iommu": "DMA-FQ", "numa_node": 0, "relaxed_ordering": True, "max_read_request": 512}
    assert report["summary"]["nics"] == {"mlx5_0": nic}
    assert report["summary"]["gpu_relaxed_ordering"] == "0"


def test_a_tuned_host_has_no_problem(tmp_path: Path) -> None:
    host(tmp_path, devctl="5930")  # MaxReadReq 4096 (5 << 12), relaxed ordering on
    for n in range(2):
        (tmp_path / f"sys/devices/system/cpu/cpu{n}/cpufreq/scaling_governor").write_text("performance\n")
    (tmp_path / "proc/sys/kernel/numa_balancing").write_text("0\n")
    (tmp_path / "proc/cmdline").write_text("BOOT_IMAGE=/vmlinuz ro iommu=pt\n")
    for group in (7, 8):
        (tmp_path / f"sys/kernel/iommu_groups/{group}/type").write_text("identity\n")
    for path in (tmp_path / "stubs" / "pci").glob("*ECAP_ACS*"):
        path.write_text("0000\n")
    report = host_tuning_report(read(tmp_path, "mlx5_0"), PLANNED)
    assert report["problems"] == []
    assert report["summary"]["cpu_governor"] == "performance"


def test_relaxed_ordering_off_a_missing_nic_and_no_setpci_are_named(tmp_path: Path) -> None:
    host(tmp_path, devctl="5920")  # bit 4 (Enable Relaxed Ordering) clear
    problems = host_tuning_report(read(tmp_path, "mlx5_0", "mlx5_9"), {**PLANNED, "acs_off": False, "iommu_passthrough": False})["problems"]
    assert f"mlx5_0 ({PCI_NIC}): relaxed ordering is off in PCIe Device Control (5920); expected on" in problems
    assert "mlx5_9: no such RDMA device in sysfs" in problems
    assert not [p for p in problems if "ACS" in p or "IOMMU" in p]  # not planned: not compared
    blind = host_tuning_report(read(tmp_path, "mlx5_0", setpci="/nonexistent/setpci"), PLANNED)["problems"]
    assert "setpci is not installed (pciutils): ACS, relaxed ordering and MaxReadReq could not be read" in blind


def test_planned_gpu_relaxed_ordering_is_compared(tmp_path: Path) -> None:
    problems = host_tuning_report(read(host(tmp_path)), {**PLANNED, "gpu_relaxed_ordering": 1})["problems"]
    assert "NVIDIA driver EnablePCIERelaxedOrderingMode expected 1, actual 0" in problems


def test_a_host_without_cpufreq_gpus_or_nics_reads_cleanly(tmp_path: Path) -> None:
    (tmp_path / "sys").mkdir()
    (tmp_path / "proc").mkdir()
    report = host_tuning_report(read(tmp_path), PLANNED)
    assert report == {
        "summary": {"cpu_governor": "no cpufreq", "numa_balancing": None, "gpu_relaxed_ordering": None, "acs_bridges": {}, "gpus": {}, "nics": {}},
        "problems": [],
    }
