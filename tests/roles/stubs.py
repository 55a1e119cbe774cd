"""Stub NIC hardware for the node-role tests: ``mlnx_qos`` and ``cma_roce_tos`` that keep state, log their argv and
print the real tools' formats, and the sysfs tree of mlx5 ports (ECN knobs, RDMA device, traffic class)."""

from __future__ import annotations

import ipaddress
import re
import shlex
from pathlib import Path

import jinja2

from tests.roles.nic_tools import FLINT, MLNX_QOS, MLXCONFIG, captures

CMA_ROCE_TOS = r"""#!/bin/sh
# stub cma_roce_tos: -d DEV [-t TOS]; without -t prints the current ToS
STUB_DIR=${STUB_DIR:-$(dirname "$0")}
echo "cma_roce_tos $*" >> "$STUB_DIR/calls.log"
dev=$2
if [ "${3:-}" = "-t" ]; then echo "$4" > "$STUB_DIR/$dev.tos"; else cat "$STUB_DIR/$dev.tos" 2>/dev/null || echo 0; fi
"""


def nic_stub_vars(prefix: str) -> dict[str, str]:
    """nic_qos variables pointing the role at the tree ``fake_nic`` wrote under ``prefix``."""
    return {"nic_qos_sysfs": f"{prefix}/sys", "nic_qos_mlnx_qos": f"{prefix}/stubs/mlnx_qos", "nic_qos_cma_roce_tos": f"{prefix}/stubs/cma_roce_tos"}


def fake_nic(ports: list[str]) -> dict[str, tuple[str, int]]:
    """Relative path → (text, mode): ``sys/…`` for each port and ``stubs/{mlnx_qos,cma_roce_tos}``."""
    files: dict[str, tuple[str, int]] = {}
    for n, port in enumerate(ports):
        ecn = f"sys/class/net/{port}/ecn"
        for side in ("roce_np", "roce_rp"):
            for p in range(8):
                files[f"{ecn}/{side}/enable/{p}"] = ("0\n", 0o644)
        files[f"{ecn}/roce_np/cnp_dscp"] = ("0\n", 0o644)
        files[f"{ecn}/roce_np/cnp_802p_prio"] = ("0\n", 0o644)
        files[f"sys/class/net/{port}/device/infiniband/mlx5_{n}/.keep"] = ("", 0o644)
        files[f"sys/class/infiniband/mlx5_{n}/tc/1/traffic_class"] = ("Global tclass=0\n", 0o644)
    files["stubs/mlnx_qos"] = (MLNX_QOS, 0o755)
    files["stubs/cma_roce_tos"] = (CMA_ROCE_TOS, 0o755)
    return {**files, **captures("mlnx_qos-trust-dscp.txt")}


def write_tree(base: Path, files: dict[str, tuple[str, int]]) -> None:
    """Write ``files`` (relative path → (text, mode)) under ``base``."""
    for rel, (text, mode) in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.chmod(mode)


NVIDIA_SMI = r"""#!/bin/sh
# stub nvidia-smi: logs argv, answers --query-gpu with the CSV lines in its directory's gpus.csv
d=$(dirname "$0")
echo "nvidia-smi $*" >> "$d/calls.log"
cat "$d/gpus.csv"
"""

SERVICE = """[Unit]
Description=stand-in for {name} (the NVIDIA package's unit)

[Service]
ExecStart=/bin/sleep infinity

[Install]
WantedBy=multi-user.target
"""


UNITS = ("nvidia-persistenced.service", "nvidia-fabricmanager.service")


def fake_gpus(driver: str, count: int) -> dict[str, tuple[str, int]]:
    """Relative path → (text, mode): a stub nvidia-smi reporting ``count`` GPUs on ``driver`` with persistence on,
    a sysfs tree where nvidia-peermem is loaded, a procfs version of the open kernel module, a stub
    nvidia-persistenced, and stand-ins for the driver packages' systemd units."""
    return {
        "srv/gpu/nvidia-smi": (NVIDIA_SMI, 0o755),
        "srv/gpu/gpus.csv": ("".join(f"{i}, {driver}, Enabled\n" for i in range(count)), 0o644),
        "srv/gpu/sys/module/nvidia_peermem/refcnt": ("0\n", 0o644),
        "srv/gpu/proc/driver/nvidia/version": (f"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {driver}  Release Build\n", 0o644),
        # the persistence daemon our drop-in runs (ExecStart=/usr/bin/nvidia-persistenced --user root --persistence-mode …)
        "usr/bin/nvidia-persistenced": ('#!/bin/sh\necho "nvidia-persistenced $*" >> /srv/gpu/calls.log\nexec sleep infinity\n', 0o755),
        **{
            f"lib/systemd/system/{unit}": (SERVICE.format(name=unit), 0o644)
            for unit in ("nvidia-persistenced.service", "nvidia-fabricmanager.service")
        },
    }


IB_WRITE_BW = r"""#!/bin/sh
# stub ib_write_bw: logs argv; as a client (last argument an address) prints perftest's --report_gbits table with
# the average from bw.gbps in its directory; as a server it waits a moment, as the real one waits for its client
# and, asked for --help, lists --use_cuda only when a file cuda is in its directory (a perftest built with CUDA)
d=$(dirname "$0")
if [ "$1" = --help ]; then
    echo " -d, --ib-dev=<dev> Use IB device <dev> (default first device found)"
    [ -f "$d/cuda" ] && echo "      --use_cuda=<cuda device id> Use CUDA specific device for GPUDirect RDMA testing"
    exit 0
fi
echo "ib_write_bw $*" >> "$d/calls.log"
for last; do :; done
case "$last" in
[0-9]*.[0-9]*.[0-9]*.[0-9]*)
    echo "---------------------------------------------------------------------------------------"
    echo " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
    echo " 65536      745123           0.00               $(cat "$d/bw.gbps")               0.745123"
    echo "---------------------------------------------------------------------------------------" ;;
*) sleep 1 ;;
esac
"""


def fake_perftest(gbps: str) -> dict[str, tuple[str, int]]:
    """Relative path → (text, mode): a stub ib_write_bw whose clients report ``gbps`` on average."""
    return {"srv/perf/ib_write_bw": (IB_WRITE_BW, 0o755), "srv/perf/bw.gbps": (gbps + "\n", 0o644)}


def role_templates(role_dir: Path) -> jinja2.Environment:
    """A Jinja environment over a role's templates with the Ansible filters they use (quote, regex_replace, bool)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(role_dir / "templates"), undefined=jinja2.StrictUndefined)
    env.filters["quote"] = lambda value: shlex.quote(str(value))
    env.filters["regex_replace"] = lambda value, pattern, replacement="": re.sub(pattern, replacement, str(value))
    env.filters["bool"] = lambda value: str(value).lower() in ("1", "true", "yes", "on")
    return env


def firmware_bdfs(hcas: list[str], functions: int = 1) -> list[str]:
    """The PCI function of each RDMA device: ``functions`` per card (2: a dual-port card, one RDMA device per port)."""
    return [f"0000:{0x18 + n // functions:02x}:00.{n % functions}" for n, _ in enumerate(hcas)]


def fake_firmware(hcas: list[str], version: str, *, functions: int = 1) -> dict[str, tuple[str, int]]:
    """Relative path → (text, mode): ``stubs/{mlxconfig,flint}`` with the captures they print from, the firmware
    version, the ports per card, and per RDMA device a PCI device directory its ``sys/class/infiniband/<hca>/device``
    link (made by :func:`firmware_links`) points at."""
    files = {"stubs/mlxconfig": (MLXCONFIG, 0o755), "stubs/flint": (FLINT, 0o755), "stubs/fw.version": (version + "\n", 0o644)}
    files["stubs/ports"] = (f"{functions}\n", 0o644)
    for bdf in firmware_bdfs(hcas, functions):
        files[f"sys/devices/pci0000:00/{bdf}/vendor"] = ("0x15b3\n", 0o644)
    return {**files, **captures("mlxconfig-e-query.txt", "mlxconfig-query-connectx7.txt", "flint-query-connectx7.txt")}


def firmware_links(prefix: str, hcas: list[str], functions: int = 1) -> str:
    """Shell commands making ``<prefix>/sys/class/infiniband/<hca>/device`` → its PCI device directory."""
    return "; ".join(
        f"mkdir -p {prefix}/sys/class/infiniband/{hca} && ln -sfn {prefix}/sys/devices/pci0000:00/{bdf} {prefix}/sys/class/infiniband/{hca}/device"
        for hca, bdf in zip(hcas, firmware_bdfs(hcas, functions), strict=True)
    )


PCI_SETPCI = r"""#!/usr/bin/env python3
# stub setpci -s BDF REG[=VALUE[:MASK]] over registers kept in <dir>/pci/<BDF>.<REG> (4 hex digits); a register with no
# file is a capability the device does not have (exit 1, as setpci does). A write changes only the bits of MASK
# (default all); a register listed in <dir>/pci/stuck (BDF.REG) accepts writes and keeps its value. argv is logged.
import os, sys
d = os.path.dirname(os.path.abspath(__file__)); args = sys.argv[1:]
open(os.path.join(d, "calls.log"), "a").write("setpci " + " ".join(args) + "\n")
bdf, spec = args[args.index("-s") + 1], args[-1]
reg, _, write = spec.partition("=")
path = os.path.join(d, "pci", f"{bdf}.{reg}")
if not os.path.exists(path):
    sys.exit(f"setpci: {bdf}: no {reg.split('+')[0]}")
old = int(open(path).read(), 16)
if not write:
    print(f"{old:04x}"); sys.exit(0)
value, _, mask = write.partition(":")
mask = int(mask or "ffff", 16)
stuck = open(os.path.join(d, "pci", "stuck")).read().split() if os.path.exists(os.path.join(d, "pci", "stuck")) else []
if f"{bdf}.{reg}" not in stuck:
    open(path, "w").write(f"{(old & ~mask) | (int(value, 16) & mask):04x}\n")
"""

# A GPU and a ConnectX NIC behind one PCIe switch, as on an HGX board: root port → switch upstream port → two downstream
# ports, one with the GPU, one with the NIC. Root port and downstream ports have ACS (on: 001d), the upstream port none.
PCI_ROOT = "0000:00:01.0"
PCI_SWITCH = ("0000:15:00.0", "0000:16:00.0", "0000:16:01.0")
PCI_GPU, PCI_NIC = "0000:18:00.0", "0000:19:00.0"


def fake_pci_host(cpus: int, devctl: str = "2930") -> dict[str, tuple[str, int]]:
    """Relative path → (text, mode): CPUs on powersave, NUMA balancing on, no iommu=pt, one GPU and NIC ``mlx5_0`` behind
    a PCIe switch with ACS on, both in translated IOMMU domains (``DMA-FQ``), the NIC's DevCtl ``devctl`` (2930: relaxed
    ordering on, MaxReadReq 512), the NVIDIA driver's params; ``stubs/setpci`` over ``stubs/pci/``. The sysfs links
    (bus/pci/devices, class/infiniband, iommu_group) are made by :func:`pci_links`."""
    files = {f"sys/devices/system/cpu/cpu{n}/cpufreq/scaling_governor": ("powersave\n", 0o644) for n in range(cpus)}
    files["proc/sys/kernel/numa_balancing"] = ("1\n", 0o644)
    files["proc/cmdline"] = ("BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet\n", 0o644)
    files["proc/driver/nvidia/params"] = ("ResmanDebugLevel: 4294967295\nEnablePCIERelaxedOrderingMode: 0\n", 0o644)
    upstream, down_gpu, down_nic = PCI_SWITCH
    tree = f"sys/devices/pci0000:00/{PCI_ROOT}/{upstream}"
    for path, vendor, cls in ((f"{tree}/{down_gpu}/{PCI_GPU}", "0x10de", "0x030200"), (f"{tree}/{down_nic}/{PCI_NIC}", "0x15b3", "0x020700")):
        files[f"{path}/vendor"] = (vendor + "\n", 0o644)
        files[f"{path}/class"] = (cls + "\n", 0o644)
        files[f"{path}/numa_node"] = ("0\n", 0o644)
    files["sys/kernel/iommu_groups/7/type"] = ("DMA-FQ\n", 0o644)
    files["sys/kernel/iommu_groups/8/type"] = ("DMA-FQ\n", 0o644)
    for bridge in (PCI_ROOT, down_gpu, down_nic):
        files[f"stubs/pci/{bridge}.ECAP_ACS+0x6.w"] = ("001d\n", 0o644)
    files[f"stubs/pci/{PCI_NIC}.CAP_EXP+08.w"] = (devctl + "\n", 0o644)
    files["stubs/setpci"] = (PCI_SETPCI, 0o755)
    files["stubs/lspci"] = (PCI_LSPCI, 0o755)
    return files


PCI_LSPCI = r"""#!/bin/sh
# stub lspci -D -n of fake_pci_host's board: the root port, the switch's three ports (class 0604), the GPU and the NIC
echo "lspci $*" >> "$(dirname "$0")/calls.log"
printf '0000:00:01.0 0604: 8086:352a (rev 04)\n0000:15:00.0 0604: 1000:c030 (rev b0)\n0000:16:00.0 0604: 1000:c030 (rev b0)\n'
printf '0000:16:01.0 0604: 1000:c030 (rev b0)\n0000:18:00.0 0302: 10de:2330 (rev a1)\n0000:19:00.0 0207: 15b3:1021\n'
"""


def pci_links(prefix: str) -> str:
    """Shell commands making the sysfs links of :func:`fake_pci_host`'s tree under ``prefix`` (absolute, as readlink -f
    resolves them on a node)."""
    upstream, down_gpu, down_nic = PCI_SWITCH
    tree = f"{prefix}/sys/devices/pci0000:00/{PCI_ROOT}/{upstream}"
    gpu, nic = f"{tree}/{down_gpu}/{PCI_GPU}", f"{tree}/{down_nic}/{PCI_NIC}"
    return " && ".join(
        [
            f"mkdir -p {prefix}/sys/bus/pci/devices {prefix}/sys/class/infiniband/mlx5_0",
            f"ln -sfn {gpu} {prefix}/sys/bus/pci/devices/{PCI_GPU}",
            f"ln -sfn {nic} {prefix}/sys/bus/pci/devices/{PCI_NIC}",
            f"ln -sfn {nic} {prefix}/sys/class/infiniband/mlx5_0/device",
            f"ln -sfn {prefix}/sys/kernel/iommu_groups/7 {gpu}/iommu_group",
            f"ln -sfn {prefix}/sys/kernel/iommu_groups/8 {nic}/iommu_group",
        ]
    )


def fake_roce_gids(
    interfaces: list[dict[str, object]],
    bonds: list[dict[str, object]],
    *,
    root: str,
    lag: bool = True,
    broken: str | None = None,
    extra_ipv6: int = 0,
) -> dict[str, tuple[str, int]]:
    """sysfs GID tables as ConnectX ports have them under ``root``: link-local GIDs at 0/1, the IPv4-mapped address at 2
    (RoCE v1) and 3 (RoCE v2), each with its net device in gid_attrs/ndevs.

    A bond's address is on the bond's net device: with ``lag`` (RoCE LAG, one card) on a single ``mlx5_bond_0`` that
    replaces the members' devices, else on each member's own device. ``broken``: that port or bond has only the RoCE v1
    entry (RoCE v2 off, a classic NCCL_IB_GID_INDEX trap), or, for a bond, its address sits on a member's net device.
    ``extra_ipv6``: that many more IPv6 addresses (two entries each) before the IPv4-mapped one, which moves its RoCE v2
    GID from index 3 to 5 with one.
    """
    files: dict[str, tuple[str, int]] = {}

    def table(hca: str, ndev: str, address: str, v2_ndev: str | None) -> None:
        mapped = ipaddress.IPv6Address(f"::ffff:{address.split('/', maxsplit=1)[0]}").exploded
        port = f"{root}/class/infiniband/{hca}/ports/1"
        ipv6 = ["fe80:0000:0000:0000:0a42:a1ff:fe00:0001"] + [f"fd00:0000:0000:0000:0000:0000:0000:{n + 1:04x}" for n in range(extra_ipv6)]
        entries = [(gid, ndev, kind) for gid in ipv6 for kind in ("IB/RoCE v1", "RoCE v2")]
        entries += [(mapped, ndev, "IB/RoCE v1")] + ([(mapped, v2_ndev, "RoCE v2")] if v2_ndev else [])
        for n, (gid, dev, kind) in enumerate(entries):
            files[f"{port}/gids/{n}"] = (gid + "\n", 0o444)
            files[f"{port}/gid_attrs/ndevs/{n}"] = (dev + "\n", 0o444)
            files[f"{port}/gid_attrs/types/{n}"] = (kind + "\n", 0o444)

    roce = [i for i in interfaces if i["link_layer"] == "ethernet" and i["hca"] and i["plane"] in ("compute", "storage")]
    for i in roce:
        if not i.get("bond") and i["address"]:
            table(str(i["hca"]), str(i["name"]), str(i["address"]), None if i["name"] == broken else str(i["name"]))
    for bond in bonds:
        members = [i for i in roce if i.get("bond") == bond["name"]]
        if not members:
            continue
        name, address = str(bond["name"]), str(bond["address"])
        v2 = str(members[0]["name"]) if broken == name else name
        for hca in ["mlx5_bond_0"] if lag else [str(m["hca"]) for m in members]:
            table(hca, name, address, v2)
    return files
