"""The schema of a node hardware profile data file (``fabric/catalog/data/nodes/<profile>.yaml``): strict, frozen models.

A profile names its GPUs and, per network plane, its ports: their speed, and either the PCI bus number of each port
(interface names then derive from the bus and the link layer, as systemd names them) or fixed interface names, or both
(then one bus per name). ``hcas`` gives the RDMA device of each port. Every check names the field and the fix.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, field_validator, model_validator

from fabric.catalog.nics import NIC_MODELS
from fabric.catalog.text import CatalogKey, Description, GpuModel

PlaneName = Literal["compute", "storage", "inband", "oob"]
Unpublished = Literal["names", "hcas"]
"""A port field a profile marks as not published by the vendor: ``names`` (interface names, and the PCI buses they derive
from) or ``hcas`` (RDMA devices)."""
PORT_SPEEDS: tuple[int, ...] = (1, 10, 25, 40, 50, 100, 200, 400, 800, 1600)
"""Ethernet / InfiniBand port speeds in Gb/s a NIC or BMC port can run (IEEE 802.3 rates; IB HDR 200, NDR 400, XDR 800)."""
MAX_PORTS = 32
MAX_PORTS_PER_NIC = 4  # ConnectX-7 / ConnectX-8 cards carry 1, 2 or 4 ports (NVIDIA ConnectX-7 and ConnectX-8 product briefs)
MAX_MEMORY_GB = 65536
"""The most system memory a node may declare, in GiB (64 TiB). GPU servers ship with 2-4 TiB (DGX H100 and DGX B200:
2 TiB, up to 4 TiB on 2-socket HGX boards); the largest single-system-image machines, 32-socket HPE Superdome Flex,
reach 48 TiB. 64 TiB is above every real node, and keeps Slurm's RealMemory (MiB, ``fabric.export.slurm``) a small
number: 65536 GiB is 67,108,864 MiB, far inside the uint64 slurm.conf(5) takes."""


def _known_port_speed(value: int) -> int:
    if value not in PORT_SPEEDS:
        msg = f"{value} Gb/s is not a port speed; use one of {list(PORT_SPEEDS)}"
        raise ValueError(msg)
    return value


# lspci prints a device as [domain:]bus:device.function in hex, e.g. "0000:1a:00.0" or "1a:00.0" (lspci(8), -D for the
# domain; PCI Local Bus Specification 3.0 §6.2: bus 8 bits, device 5 bits, function 3 bits).
_LSPCI = re.compile(r"^(?:[0-9a-fA-F]{4}:)?([0-9a-fA-F]{2}):[01][0-9a-fA-F]\.[0-7]$")
_HEX = re.compile(r"^0[xX][0-9a-fA-F]{1,2}$")
_PCI_HELP = "write it as lspci prints it, quoted ('0000:1a:00.0' or '1a:00.0', hex), or as a decimal number (26, unquoted)"


def _pci_bus(value: object) -> object:
    """A PCI bus as lspci prints it (hex, quoted) or as a number; the canonical form everywhere after is the number.

    Example:
        >>> [_pci_bus(v) for v in ("0000:1a:00.0", "1a:00.0", "0x1a", 26)]
        [26, 26, 26, 26]
    """
    if isinstance(value, float):  # unquoted 18:00.0 is a YAML 1.1 base-60 number (1080.0): the text is lost
        msg = f"{value!r} is no PCI bus; {_PCI_HELP} (unquoted, YAML reads 18:00.0 as a base-60 number)"
        raise ValueError(msg)
    if not isinstance(value, str):
        return value  # int (decimal) or another type the int check refuses
    text = value.strip()
    match = _LSPCI.match(text)
    if match:
        return int(match.group(1), 16)
    if _HEX.match(text):
        return int(text, 16)
    msg = f"{value!r} is no PCI bus; {_PCI_HELP}"
    raise ValueError(msg)


PciBus = Annotated[
    int,
    BeforeValidator(_pci_bus),
    Field(ge=0, le=255),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 0, "maximum": 255, "description": "decimal bus number, e.g. 26"},
                {"type": "string", "pattern": _LSPCI.pattern, "description": "as lspci prints it (hex), e.g. '0000:1a:00.0' or '1a:00.0'"},
                {"type": "string", "pattern": _HEX.pattern, "description": "hex bus number, e.g. '0x1a'"},
            ]
        }
    ),
]
"""A PCI bus number: decimal (26), or hex as lspci prints the device ('0000:1a:00.0', '1a:00.0') or '0x1a'."""

PortSpeed = Annotated[
    int,
    Field(ge=PORT_SPEEDS[0], le=PORT_SPEEDS[-1], description=f"Line rate of each port, one of {list(PORT_SPEEDS)} Gb/s."),
    AfterValidator(_known_port_speed),
]
"""A port's line rate in Gb/s, checked against :data:`PORT_SPEEDS`."""
_IFNAME = r"^[A-Za-z][A-Za-z0-9_.-]{0,14}$"  # Linux IFNAMSIZ: at most 15 characters
_HCA = r"^[a-z][a-z0-9_]{0,31}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PortGroupSpec(_Strict):
    """The ports a profile has on one plane."""

    speed_gbps: PortSpeed
    pci_buses: tuple[PciBus, ...] = Field(
        default=(),
        max_length=MAX_PORTS,
        description="PCI bus of each port, in the order the ports are cabled: decimal (26) or as lspci prints it ('0000:1a:00.0', hex).",
    )
    names: tuple[Annotated[str, Field(pattern=_IFNAME)], ...] = Field(
        default=(), max_length=MAX_PORTS, description="Fixed interface names; default: derived from pci_buses and the link layer."
    )
    hcas: tuple[Annotated[str, Field(pattern=_HCA)], ...] = Field(
        default=(), max_length=MAX_PORTS, description="RDMA device of each port (mlx5_N); empty when the ports carry no RDMA."
    )
    ports_per_nic: Annotated[int, Field(ge=1, le=MAX_PORTS_PER_NIC)] = Field(
        default=1,
        description="Ports of each NIC (2 on a dual-port card); list the ports NIC by NIC. A multi-plane fabric "
        "(fabric.plane_split: port) sends port k of every NIC to plane k.",
    )
    nic: CatalogKey | None = Field(
        default=None, description="The NIC model of these ports (fabric/catalog/data/nics/<nic>.yaml), e.g. connectx-7; None: not known."
    )
    unpublished: tuple[Unpublished, ...] = Field(
        default=(),
        max_length=2,
        description="Fields of these ports that no vendor document gives ('names': interface names and PCI buses, 'hcas': RDMA "
        "devices): the values are placeholders, and a node group using the profile is warned to set its own (interfaces or ports).",
    )

    @field_validator("nic")
    @classmethod
    def _known_nic(cls, value: str | None) -> str | None:
        if value is not None and value not in NIC_MODELS:
            msg = f"unknown NIC model '{value}'; known: {', '.join(sorted(NIC_MODELS))} (fabric/catalog/data/nics/)"
            raise ValueError(msg)
        return value

    @model_validator(mode="after")
    def _consistent(self) -> PortGroupSpec:
        if not self.names and not self.pci_buses:
            msg = "give the ports' pci_buses or their names (or both, one bus per name)"
            raise ValueError(msg)
        count = len(self.names) or len(self.pci_buses)
        if self.names and self.pci_buses and len(self.names) != len(self.pci_buses):
            msg = f"{len(self.names)} names but {len(self.pci_buses)} pci_buses; give one bus per port"
            raise ValueError(msg)
        if self.hcas and len(self.hcas) != count:
            msg = f"{len(self.hcas)} hcas for {count} ports; give one RDMA device per port or none"
            raise ValueError(msg)
        if "hcas" in self.unpublished and not self.hcas:
            msg = "unpublished lists hcas but the ports give none; drop it from unpublished"
            raise ValueError(msg)
        if len(set(self.unpublished)) != len(self.unpublished):
            msg = "unpublished lists a field more than once"
            raise ValueError(msg)
        if count % self.ports_per_nic:
            msg = f"{count} ports are not whole NICs of ports_per_nic {self.ports_per_nic}; list every port of every NIC"
            raise ValueError(msg)
        # Buses may repeat only beside fixed names (the two ports of a dual-port card share a bus).
        checked = (("names", self.names), ("hcas", self.hcas), ("pci_buses", () if self.names else self.pci_buses))
        for what, values in checked:
            twice = sorted({str(v) for v in values if values.count(v) > 1})
            if twice:
                msg = f"{what} lists {', '.join(twice)} more than once; each port has its own"
                raise ValueError(msg)
        return self


class NodeProfileBody(_Strict):
    """A node model without its name: what a definition's ``hardware`` section gives per profile."""

    description: Description = Field(default="", description="Free text that reaches no device: printable Unicode, one line, at most 200.")
    gpus: Annotated[int, Field(ge=0, le=72)]
    gpu_model: GpuModel | None = Field(
        default=None, description="GPU model, e.g. H100-SXM5-80GB: one token, as it may become a node label or a Slurm GRES type."
    )
    nvswitch: bool = False
    sockets: Annotated[int, Field(ge=1, le=16)] | None = Field(default=None, description="CPU sockets (Slurm's Sockets=).")
    cores_per_socket: Annotated[int, Field(ge=1, le=1024)] | None = Field(
        default=None, description="Physical cores per socket (Slurm's CoresPerSocket=); given together with sockets."
    )
    memory_gb: Annotated[int, Field(ge=1, le=MAX_MEMORY_GB)] | None = Field(
        default=None, description=f"Installed system memory in GiB, at most {MAX_MEMORY_GB} (64 TiB); Slurm's RealMemory derives from it."
    )
    nvlink_domain_nodes: Annotated[int, Field(ge=2, le=576)] | None = Field(
        default=None,
        description="Nodes that share one multi-node NVLink domain (a GB200 NVL72 rack: 18 compute trays); none for single-node NVLink.",
    )
    arch: Literal["x86_64", "arm64"] = Field(
        default="x86_64",
        description="CPU architecture (GB200/GB300 compute trays: arm64, NVIDIA Grace); roles/gpu_driver and roles/rdma_stack refuse a "
        "node whose gathered architecture differs (arm64 = Ansible's aarch64).",
    )
    ports: dict[PlaneName, PortGroupSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> NodeProfileBody:
        if (self.gpus > 0) != (self.gpu_model is not None):
            msg = "gpu_model is given exactly when gpus > 0"
            raise ValueError(msg)
        if (self.sockets is None) != (self.cores_per_socket is None):
            msg = "sockets and cores_per_socket are given together (Slurm needs both to count the cores)"
            raise ValueError(msg)
        if self.nvlink_domain_nodes is not None and self.gpus == 0:
            msg = "nvlink_domain_nodes on a profile without GPUs; an NVLink domain joins GPUs"
            raise ValueError(msg)
        if self.nvswitch and self.gpus < 8:
            msg = f"nvswitch with {self.gpus} GPUs; NVSwitch boards carry 8 GPUs"
            raise ValueError(msg)
        return self

    @field_validator("ports")
    @classmethod
    def _one_plane_per_port(cls, ports: dict[PlaneName, PortGroupSpec]) -> dict[PlaneName, PortGroupSpec]:
        for field in ("names", "pci_buses", "hcas"):
            _unique_across_planes(ports, field)
        return ports


class NodeProfile(NodeProfileBody):
    """A node model, as its data file describes it."""

    name: CatalogKey


def _unique_across_planes(ports: dict[PlaneName, PortGroupSpec], field: str) -> None:
    seen: dict[str, str] = {}
    for plane, group in ports.items():
        values = () if field == "pci_buses" and group.names else getattr(group, field)
        for value in values:
            key = str(value)
            if key in seen and seen[key] != plane:
                msg = f"{field} {key} is on both the {seen[key]} and the {plane} plane; a port belongs to one plane"
                raise ValueError(msg)
            seen[key] = plane
