"""Ansible filter of fabric_check: the host tuning GPUDirect depends on, read back and compared with what is planned.

The facts come from ``roles/fabric_check/files/host-tuning-read.sh`` (one per line). What each is compared with, and
the reference that says so:

- CPU governor ``performance``: DGX OS ``nv-cpu-governor`` (DGX OS 7 User Guide, "DGX Software Stack").
- ``kernel.numa_balancing`` 0: DGX OS ``nvidia-disable-numa-balancing`` (same appendix).
- IOMMU passthrough: DGX OS ``nv-iommu`` ("IOMMU in passthrough mode"); the kernel reports each device's IOMMU
  domain in ``/sys/kernel/iommu_groups/<n>/type`` (Documentation/ABI/testing/sysfs-kernel-iommu_groups: ``identity``
  is passthrough, ``DMA``/``DMA-FQ`` translate every DMA).
- ACS off on every bridge above a GPU or NIC: NCCL troubleshooting guide, "PCI Access Control Services (ACS)"
  (``setpci -s <bridge> ECAP_ACS+0x6.w=0000``); DGX OS ``nvidia-acs-disable``.
- NIC relaxed ordering on: the PCIe Device Control register's Enable Relaxed Ordering bit (Linux
  ``include/uapi/linux/pci_regs.h`` ``PCI_EXP_DEVCTL_RELAX_EN 0x0010``); mlx5 marks its DMA relaxed only where the
  kernel's ``pcie_relaxed_ordering_enabled()`` says so (net/mlx5e "Add support for PCI relaxed ordering"), and NCCL
  asks for it per memory region (``NCCL_IB_PCI_RELAXED_ORDERING``, default 2 = where supported).
- NIC MaxReadReq 4096: NVIDIA's NIC Configuration Operator, ``pciPerformanceOptimized`` ("Set PCI max read request
  size for each PF to 4096", runtime; ``setpci -s <pf> CAP_EXP+08.w=5000:F000``, 128 << bits 14:12 of DevCtl;
  Mellanox/nic-configuration-operator ``pkg/configuration/utils.go``).
- GPU relaxed ordering (``EnablePCIERelaxedOrderingMode`` of the NVIDIA driver, ``/proc/driver/nvidia/params``):
  compared only when planned; the driver's default is 0 (open-gpu-kernel-modules ``nv-reg.h``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

RELAXED_ORDERING = 0x0010  # PCI_EXP_DEVCTL_RELAX_EN
READ_REQUEST_SHIFT = 12  # PCI_EXP_DEVCTL_READRQ = 0x7000: 128 << n bytes
PASSTHROUGH = ("identity", "none")  # no IOMMU group: the IOMMU is off, DMA is not translated either


def host_tuning_report(lines: Sequence[str], expected: Mapping[str, Any]) -> dict[str, Any]:
    """What the host has (``summary``) and one line per difference from ``expected`` (``problems``).

    Args:
        lines: the output lines of host-tuning-read.sh.
        expected: ``cpu_governor`` (str), ``numa_balancing`` (int or None: not compared), ``iommu_passthrough``,
            ``acs_off`` and ``nic_relaxed_ordering`` (bools), ``nic_max_read_request`` (bytes, 0: not compared),
            ``gpu_relaxed_ordering`` (int or None: not compared).

    Returns:
        ``{"summary": {...}, "problems": [...]}``.

    Example:
        >>> facts = ["governor cpu0 performance", "numa_balancing 1", "device 0000:1a:00.0 nic mlx5_0 identity 0",
        ...          "devctl 0000:1a:00.0 2930", "bridge 0000:17:00.0 0000:1a:00.0 001d"]
        >>> want = {"cpu_governor": "performance", "numa_balancing": 0, "iommu_passthrough": True, "acs_off": True,
        ...         "nic_relaxed_ordering": True, "nic_max_read_request": 4096, "gpu_relaxed_ordering": None}
        >>> for line in host_tuning_report(facts, want)["problems"]: print(line)
        kernel.numa_balancing expected 0, actual 1
        bridge 0000:17:00.0 (above 0000:1a:00.0): ACS control expected 0000, actual 001d
        mlx5_0 (0000:1a:00.0): PCIe MaxReadReq expected 4096, actual 512
    """
    facts = _parse(lines)
    problems: list[str] = []
    problems += _governor(facts["governor"], str(expected.get("cpu_governor", "performance")))
    balancing = expected.get("numa_balancing")
    if balancing is not None and facts["numa_balancing"] is not None and int(facts["numa_balancing"]) != int(balancing):
        problems.append(f"kernel.numa_balancing expected {balancing}, actual {facts['numa_balancing']}")
    gpu_ro = expected.get("gpu_relaxed_ordering")
    if gpu_ro is not None and facts["gpu_relaxed_ordering"] is not None and int(facts["gpu_relaxed_ordering"]) != int(gpu_ro):
        problems.append(f"NVIDIA driver EnablePCIERelaxedOrderingMode expected {gpu_ro}, actual {facts['gpu_relaxed_ordering']}")
    if facts["setpci_missing"] and facts["devices"]:
        problems.append("setpci is not installed (pciutils): ACS, relaxed ordering and MaxReadReq could not be read")
    problems += [f"{hca}: no such RDMA device in sysfs" for hca in facts["missing"]]
    if expected.get("iommu_passthrough", True):
        problems += [
            f"{_name(d)}: the IOMMU translates its DMA (group type {d['iommu']}); expected passthrough "
            f"(iommu=pt {'is' if 'iommu=pt' in facts['cmdline'].split() else 'is not'} on the kernel command line)"
            for d in facts["devices"].values()
            if d["iommu"] not in PASSTHROUGH
        ]
    if expected.get("acs_off", True):
        problems += [
            f"bridge {bdf} (above {', '.join(below)}): ACS control expected 0000, actual {value}"
            for bdf, (value, below) in sorted(facts["bridges"].items())
            if value not in ("0000", "none")
        ]
    problems += _nic_devctl(facts, expected)
    return {"summary": _summary(facts), "problems": problems}


def _parse(lines: Sequence[str]) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "governor": {},
        "numa_balancing": None,
        "cmdline": "",
        "gpu_relaxed_ordering": None,
        "setpci_missing": False,
        "devices": {},
        "devctl": {},
        "bridges": {},
        "missing": [],
    }
    for line in lines:
        kind, _, rest = str(line).partition(" ")
        fields = rest.split()
        if kind == "governor" and len(fields) == 2:
            facts["governor"][fields[0]] = fields[1]
        elif kind in ("numa_balancing", "gpu_relaxed_ordering") and fields:
            facts[kind] = fields[0]
        elif kind == "cmdline":
            facts["cmdline"] = rest
        elif kind == "setpci":
            facts["setpci_missing"] = True
        elif kind == "device" and len(fields) == 5:
            bdf, what, hca, iommu, numa = fields
            facts["devices"][bdf] = {"bdf": bdf, "kind": what, "hca": hca, "iommu": iommu, "numa": numa}
        elif kind == "devctl" and len(fields) == 2:
            facts["devctl"][fields[0]] = fields[1]
        elif kind == "bridge" and len(fields) == 3:
            _, below = facts["bridges"].setdefault(fields[0], (fields[2], []))
            below.append(fields[1])
        elif kind == "missing" and fields:
            facts["missing"].append(fields[0])
    return facts


def _governor(governors: Mapping[str, str], wanted: str) -> list[str]:
    off = sorted((cpu for cpu, value in governors.items() if value != wanted), key=lambda cpu: int(cpu.removeprefix("cpu") or 0))
    if not off:
        return []
    shown = ", ".join(f"{cpu} {governors[cpu]}" for cpu in off[:4]) + (", …" if len(off) > 4 else "")
    return [f"CPU governor expected {wanted}: {len(off)} of {len(governors)} CPUs differ ({shown})"]


def _nic_devctl(facts: Mapping[str, Any], expected: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    mrrs = int(expected.get("nic_max_read_request") or 0)
    for bdf, value in sorted(facts["devctl"].items()):
        name = _name(facts["devices"].get(bdf, {"bdf": bdf, "kind": "nic", "hca": "-"}))
        try:
            devctl = int(value, 16)
        except ValueError:
            problems.append(f"{name}: its PCIe Device Control register could not be read")
            continue
        if expected.get("nic_relaxed_ordering", True) and not devctl & RELAXED_ORDERING:
            problems.append(f"{name}: relaxed ordering is off in PCIe Device Control ({value}); expected on")
        actual = 128 << ((devctl >> READ_REQUEST_SHIFT) & 0x7)
        if mrrs and actual != mrrs:
            problems.append(f"{name}: PCIe MaxReadReq expected {mrrs}, actual {actual}")
    return problems


def _name(device: Mapping[str, Any]) -> str:
    return f"{device['hca']} ({device['bdf']})" if device.get("hca", "-") != "-" else f"GPU {device['bdf']}"


def _summary(facts: Mapping[str, Any]) -> dict[str, Any]:
    governors = sorted(set(facts["governor"].values()))
    nics = {
        d["hca"]: {
            "pci": d["bdf"],
            "iommu": d["iommu"],
            "numa_node": int(d["numa"]),
            **_devctl_fields(facts["devctl"].get(d["bdf"], "")),
        }
        for d in facts["devices"].values()
        if d["kind"] == "nic"
    }
    gpus = {d["bdf"]: {"iommu": d["iommu"], "numa_node": int(d["numa"])} for d in facts["devices"].values() if d["kind"] == "gpu"}
    return {
        "cpu_governor": ", ".join(governors) if governors else "no cpufreq",
        "numa_balancing": facts["numa_balancing"],
        "gpu_relaxed_ordering": facts["gpu_relaxed_ordering"],
        "acs_bridges": {bdf: value for bdf, (value, _) in sorted(facts["bridges"].items())},
        "gpus": dict(sorted(gpus.items())),
        "nics": dict(sorted(nics.items())),
    }


def _devctl_fields(value: str) -> dict[str, Any]:
    try:
        devctl = int(value, 16)
    except ValueError:
        return {}
    return {"relaxed_ordering": bool(devctl & RELAXED_ORDERING), "max_read_request": 128 << ((devctl >> READ_REQUEST_SHIFT) & 0x7)}


class FilterModule:
    """Registers the filter with Ansible."""

    def filters(self) -> dict[str, Any]:
        return {"gpufabric_host_tuning_report": host_tuning_report}
