"""Bare-metal node hardware profiles: GPUs and the NIC ports each profile has on each network plane.

Interface names follow systemd's predictable naming from the PCI bus number, as DGX OS shows them:
``ibp<bus>s0`` when a ConnectX port runs InfiniBand, ``enp<bus>s0np0`` when it runs Ethernet. A node group
may override the names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PlaneName = Literal["compute", "storage", "inband", "oob"]


@dataclass(frozen=True, slots=True)
class PortGroup:
    """The ports a hardware profile has on one plane.

    Attributes:
        speed_gbps: line rate of each port.
        pci_buses: one PCI bus number per port (the port count); used to derive interface names.
        hcas: RDMA device name per port (``mlx5_N``), empty when the ports carry no RDMA.
        names: fixed interface names; when empty, names derive from ``pci_buses`` and the link layer.
    """

    speed_gbps: int
    pci_buses: tuple[int, ...] = ()
    hcas: tuple[str, ...] = ()
    names: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        """Number of ports in the group."""
        return len(self.names) or len(self.pci_buses)

    def interface_names(self, link_layer: Literal["ethernet", "infiniband"]) -> tuple[str, ...]:
        """Interface names of the ports for a link layer.

        Example:
            >>> PortGroup(400, pci_buses=(24,)).interface_names("infiniband")
            ('ibp24s0',)
        """
        if self.names:
            return self.names
        if link_layer == "infiniband":
            return tuple(f"ibp{bus}s0" for bus in self.pci_buses)
        return tuple(f"enp{bus}s0np0" for bus in self.pci_buses)


@dataclass(frozen=True, slots=True)
class HardwareProfile:
    """A node model: GPUs, NVSwitch presence and its ports per plane."""

    name: str
    description: str
    gpus: int
    gpu_model: str | None
    nvswitch: bool
    ports: dict[PlaneName, PortGroup]


_DGX_COMPUTE_BUSES = (24, 64, 79, 94, 154, 192, 206, 220)
_DGX_HCAS = ("mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11")
_BMC = PortGroup(1, names=("bmc",))


def _dgx(name: str, description: str, gpu_model: str) -> HardwareProfile:
    return HardwareProfile(
        name=name,
        description=description,
        gpus=8,
        gpu_model=gpu_model,
        nvswitch=True,
        ports={
            "compute": PortGroup(400, pci_buses=_DGX_COMPUTE_BUSES, hcas=_DGX_HCAS),
            "storage": PortGroup(200, names=("enp170s0f0np0", "enp41s0f0np0"), hcas=("mlx5_7", "mlx5_1")),
            "inband": PortGroup(100, names=("enp170s0f1np1",)),
            "oob": _BMC,
        },
    )


HARDWARE: dict[str, HardwareProfile] = {
    "dgx-h100": _dgx("dgx-h100", "NVIDIA DGX H100: 8 x H100 SXM, 8 x ConnectX-7 400G compute ports", "H100-SXM5-80GB"),
    "dgx-h200": _dgx("dgx-h200", "NVIDIA DGX H200: 8 x H200 SXM, 8 x ConnectX-7 400G compute ports", "H200-SXM5-141GB"),
    "dgx-b200": _dgx("dgx-b200", "NVIDIA DGX B200: 8 x B200, 8 x ConnectX-7 400G compute ports", "B200-180GB"),
    "hgx-h100-4x400": HardwareProfile(
        name="hgx-h100-4x400",
        description="HGX H100 8-GPU server with 4 x 400G compute ports (one NIC per GPU pair)",
        gpus=8,
        gpu_model="H100-SXM5-80GB",
        nvswitch=True,
        ports={
            "compute": PortGroup(400, pci_buses=(27, 93, 155, 219), hcas=("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3")),
            "storage": PortGroup(200, names=("enp66s0f0np0",), hcas=("mlx5_4",)),
            "inband": PortGroup(25, names=("eno1",)),
            "oob": _BMC,
        },
    ),
    "storage-server": HardwareProfile(
        name="storage-server",
        description="Parallel-filesystem server: 2 x 200G storage ports",
        gpus=0,
        gpu_model=None,
        nvswitch=False,
        ports={
            "storage": PortGroup(200, names=("enp65s0f0np0", "enp65s0f1np1"), hcas=("mlx5_0", "mlx5_1")),
            "inband": PortGroup(25, names=("eno1",)),
            "oob": _BMC,
        },
    ),
    "mgmt-server": HardwareProfile(
        name="mgmt-server",
        description="Management / login server",
        gpus=0,
        gpu_model=None,
        nvswitch=False,
        ports={"inband": PortGroup(25, names=("eno1",)), "oob": _BMC},
    ),
    "mgmt-server-ib": HardwareProfile(
        name="mgmt-server-ib",
        description="Management server with one 400G ConnectX-7 port on the compute fabric (hosts a subnet manager)",
        gpus=0,
        gpu_model=None,
        nvswitch=False,
        ports={
            "compute": PortGroup(400, pci_buses=(65,), hcas=("mlx5_0",)),
            "inband": PortGroup(25, names=("eno1",)),
            "oob": _BMC,
        },
    ),
    "lab-node": HardwareProfile(
        name="lab-node",
        description="Virtual node of the local twin: one compute port, one in-band port",
        gpus=0,
        gpu_model=None,
        nvswitch=False,
        ports={
            "compute": PortGroup(100, names=("eth1",)),
            "inband": PortGroup(10, names=("eth0",)),
        },
    ),
}
