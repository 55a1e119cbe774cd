"""Bare-metal node hardware profiles, kept as data: one file per profile in ``fabric/catalog/data/nodes/``.

``HARDWARE`` maps a profile name to its ``HardwareProfile``: GPUs and the NIC ports the profile has on each network
plane. The files are read and validated (``fabric.catalog.node_model``) the first time the mapping is used, once per
process; a broken file stops that first use with a ``CatalogError`` naming file, line, field and problem
(``load_node_profiles`` on another directory raises ``InputError``).

Interface names follow systemd's predictable naming from the PCI bus number, as DGX OS shows them:
``ibp<bus>s0`` when a ConnectX port runs InfiniBand, ``enp<bus>s0np0`` when it runs Ethernet. A node group
may override the names, or describe its ports itself (``NodeGroupSpec.ports``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from fabric.catalog._load import BuiltinCatalog, data_files, load_models, read_builtin
from fabric.catalog.node_model import NodeProfile, NodeProfileBody, PlaneName

__all__ = ["HARDWARE", "NODE_DATA", "HardwareProfile", "PlaneName", "PortGroup", "load_node_profiles"]

NODE_DATA = Path(__file__).parent / "data" / "nodes"


@dataclass(frozen=True, slots=True)
class PortGroup:
    """The ports a hardware profile has on one plane.

    Attributes:
        speed_gbps: line rate of each port.
        pci_buses: one PCI bus number per port (the port count); used to derive interface names.
        hcas: RDMA device name per port (``mlx5_N``), empty when the ports carry no RDMA.
        names: fixed interface names; when empty, names derive from ``pci_buses`` and the link layer.
        ports_per_nic: ports of each NIC; the ports are listed NIC by NIC (NIC n's port k is ``n * ports_per_nic + k``).
            A multi-plane fabric splits by it (``fabric.plane_split``).
        nic: the NIC model (``fabric.catalog.nics``), None when the profile does not name it.
        unpublished: the fields no vendor document gives (``names``, ``hcas``): placeholders a node group should replace
            (``fabric.model.rules`` warns where it does not).
    """

    speed_gbps: int
    pci_buses: tuple[int, ...] = ()
    hcas: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    ports_per_nic: int = 1
    nic: str | None = None
    unpublished: tuple[str, ...] = ()

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
    sockets: int | None = None
    cores_per_socket: int | None = None
    memory_gb: int | None = None
    nvlink_domain_nodes: int | None = None
    arch: str = "x86_64"


def to_profile(data: NodeProfileBody, name: str | None = None) -> HardwareProfile:
    """The planner's view of a validated profile (a data file's, or one a definition names ``name``)."""
    ports: dict[PlaneName, PortGroup] = {
        plane: PortGroup(g.speed_gbps, g.pci_buses, g.hcas, g.names, g.ports_per_nic, g.nic, g.unpublished) for plane, g in data.ports.items()
    }
    title = name if name is not None else getattr(data, "name", "")
    return HardwareProfile(
        title,
        data.description,
        data.gpus,
        data.gpu_model,
        data.nvswitch,
        ports,
        data.sockets,
        data.cores_per_socket,
        data.memory_gb,
        data.nvlink_domain_nodes,
        data.arch,
    )


def load_node_profiles(directory: Path = NODE_DATA) -> dict[str, HardwareProfile]:
    """Every node profile file of ``directory``, validated, by name.

    Raises:
        InputError: a file is not YAML or not a valid profile; every problem of every file is listed.

    Example:
        >>> load_node_profiles()["dgx-h100"].ports["compute"].count
        8
    """
    return {name: to_profile(data) for name, data in load_models(data_files(directory), NodeProfile, where=str(directory)).items()}


@cache
def _builtin() -> dict[str, HardwareProfile]:
    return read_builtin(lambda: load_node_profiles(NODE_DATA))


HARDWARE: Mapping[str, HardwareProfile] = BuiltinCatalog("HARDWARE", _builtin)
