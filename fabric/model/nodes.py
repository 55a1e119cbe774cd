"""Node groups: role, count, naming, hardware and stable ids."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from functools import lru_cache
from ipaddress import IPv4Address
from typing import Annotated, Literal, cast

from pydantic import Field, ValidationInfo, field_validator, model_validator

from fabric.catalog.hardware import HARDWARE, HardwareProfile, PortGroup
from fabric.catalog.nics import NIC_MODELS
from fabric.catalog.node_model import MAX_PORTS_PER_NIC, PciBus, PortSpeed
from fabric.catalog.text import CatalogKey
from fabric.model.base import NAME_RE, Name, SpecModel, unknown_choice
from fabric.model.planes import PlaneName
from fabric.model.strings import HostnameFormat, Identifier, InterfaceName, TagKey, TagValue

Role = Literal["gpu", "storage", "management", "login", "subnet-manager"]
_NAME = re.compile(NAME_RE)
_INDEX_FIELD = re.compile(r"\{index(?::0([1-6])d)?\}")
# Bounds that keep every stage's work proportional to a real cluster: the largest GPU clusters built so far have a few
# thousand nodes per fabric, and a node has at most a few dozen ports on one plane.
MAX_GROUP_NODES = 16384
MAX_PORTS_PER_PLANE = 32


class NodePortsSpec(SpecModel):
    """The ports a node group has on one plane, described in the definition instead of (or over) a catalog profile.

    Example: a server with two 400G fabric ports: ``{count: 2, speed_gbps: 400, names: [enp24s0np0, enp64s0np0]}``.
    """

    count: Annotated[int, Field(ge=1, le=MAX_PORTS_PER_PLANE)]
    speed_gbps: PortSpeed
    names: tuple[InterfaceName, ...] = Field(default=(), max_length=MAX_PORTS_PER_PLANE, description="Interface name of each port.")
    pci_buses: tuple[PciBus, ...] = Field(
        default=(),
        max_length=MAX_PORTS_PER_PLANE,
        description="PCI bus of each port, decimal (26) or as lspci prints it ('0000:1a:00.0', hex); names derive from them without 'names'.",
    )
    hcas: tuple[Identifier, ...] = Field(default=(), max_length=MAX_PORTS_PER_PLANE, description="RDMA device (mlx5_N) of each port.")
    ports_per_nic: Annotated[int, Field(ge=1, le=MAX_PORTS_PER_NIC)] = Field(
        default=1, description="Ports of each NIC (2 on a dual-port card), listed NIC by NIC; fabric.plane_split: port splits by it."
    )

    @model_validator(mode="after")
    def _one_entry_per_port(self) -> NodePortsSpec:
        if not self.names and not self.pci_buses:
            msg = f"give the {self.count} ports' names (or their pci_buses, to derive the names)"
            raise ValueError(msg)
        for what, values in (("names", self.names), ("pci_buses", self.pci_buses), ("hcas", self.hcas)):
            if values and len(values) != self.count:
                msg = f"count is {self.count} but {len(values)} {what} are given; give one per port"
                raise ValueError(msg)
            if len(set(values)) != len(values):
                msg = f"{what} repeat an entry; each port has its own"
                raise ValueError(msg)
        if self.count % self.ports_per_nic:
            msg = f"count {self.count} is not whole NICs of ports_per_nic {self.ports_per_nic}; list every port of every NIC"
            raise ValueError(msg)
        return self

    def port_group(self) -> PortGroup:
        """The catalog's view of these ports."""
        return PortGroup(self.speed_gbps, self.pci_buses, self.hcas, self.names, self.ports_per_nic)


class NodeGroupSpec(SpecModel):
    """A group of identical nodes.

    A node's stable id is ``id_offset + index`` (index runs from 1 to ``count``). Addresses and fabric slots derive
    from that id, so growing a group never renumbers another; give groups id ranges that do not overlap.
    """

    group: Name = Field(description="Group name; also the Ansible group '<group>_nodes'.")
    role: Role
    count: Annotated[int, Field(ge=0, le=MAX_GROUP_NODES)]
    hostname: HostnameFormat
    id_offset: Annotated[int, Field(ge=0, le=1_000_000)] = 0
    hardware: Identifier | None = Field(
        default=None, description="On-prem hardware profile: built in (fabric/catalog/data/nodes/) or from the definition's 'hardware' section."
    )
    instance_type: Identifier | None = Field(default=None, description="Cloud instance type, machine type or VM size.")
    ports: dict[PlaneName, NodePortsSpec] = Field(
        default_factory=dict[PlaneName, NodePortsSpec],
        description="The group's own ports per plane (count, speed, names): replace the hardware profile's on that plane, "
        "or describe a server no profile fits (then give gpus).",
    )
    gpus: Annotated[int, Field(ge=0, le=72)] | None = Field(
        default=None, description="GPUs per node; default: the hardware profile's (0 without one)."
    )
    interfaces: dict[PlaneName, Annotated[tuple[InterfaceName, ...], Field(max_length=MAX_PORTS_PER_PLANE)]] = Field(
        default_factory=dict[PlaneName, tuple[str, ...]], description="Override the hardware's interface names per plane."
    )
    addresses: dict[Name, dict[PlaneName, IPv4Address]] = Field(
        default_factory=dict[str, dict[PlaneName, IPv4Address]],
        max_length=MAX_GROUP_NODES,
        description="Explicit addresses: hostname -> plane -> address (first port of that plane).",
    )
    labels: dict[TagKey, TagValue] = Field(default_factory=dict[str, str], max_length=64)
    nic: CatalogKey | None = Field(
        default=None,
        description="The compute NIC model of the group's nodes (fabric/catalog/data/nics/), over the hardware profile's: "
        "a server sold with several NICs, or a group whose cards were swapped. Default: the profile's compute ports' nic.",
    )
    rdma_stack: Literal["doca", "inbox"] | None = Field(
        default=None,
        description="RDMA stack the node roles install: doca (NVIDIA DOCA-OFED) or inbox (the distribution's rdma-core). "
        "Default: doca on nodes with RoCE compute ports (the NIC half of the RoCE contract needs DOCA's tools), inbox elsewhere.",
    )

    @field_validator("hostname")
    @classmethod
    def _every_hostname(cls, value: str, info: ValidationInfo) -> str:
        """Every index 1..count gives a DNS label: the only varying part is the digits of the index, so the first and
        the last (longest) name stand for all of them. ``count`` is declared first, so it is validated already."""
        count = info.data.get("count")
        last = count if isinstance(count, int) and count > 1 else 1
        for index in sorted({1, last}):
            name = format_hostname(value, index)
            if not _NAME.match(name):
                msg = (
                    f"hostname pattern {value!r} gives {name!r} for index {index}, not a DNS label "
                    "(1-63 of a-z, 0-9 and '-', no '-' at either end); shorten or change the pattern"
                )
                raise ValueError(msg)
        return value

    @field_validator("hardware")
    @classmethod
    def _known_hardware(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Checked here when the loader passes the definition's own profile names (else by the rules, after the schema)."""
        raw: object = info.context
        context = cast("dict[str, frozenset[str]]", raw) if isinstance(raw, dict) else {}
        defined = context.get("hardware")
        if value is not None and defined is not None and value not in HARDWARE and value not in defined:
            raise ValueError(unknown_choice("hardware profile", value, [*HARDWARE, *defined]))
        return value

    @field_validator("nic")
    @classmethod
    def _known_nic(cls, value: str | None) -> str | None:
        if value is not None and value not in NIC_MODELS:
            raise ValueError(unknown_choice("NIC model", value, NIC_MODELS) + " (fabric/catalog/data/nics/)")
        return value

    def hardware_profile(self, defined: Mapping[str, HardwareProfile] | None = None) -> HardwareProfile | None:
        """The node's hardware: its profile (built-in, or one of ``defined``, the definition's ``hardware`` section) with
        ``ports`` laid over it, or ``ports`` alone; None on cloud groups and for an unknown profile (a rule reports it).

        Example:
            >>> g = NodeGroupSpec(group="gpu", role="gpu", count=1, hostname="gpu{index}", gpus=8,
            ...     ports={"compute": {"count": 2, "speed_gbps": 400, "names": ["enp24s0np0", "enp64s0np0"]}})
            >>> p = g.hardware_profile()
            >>> p.name, p.gpus, p.ports["compute"].count
            ('custom', 8, 2)
        """
        base = None
        if self.hardware is not None:
            base = defined.get(self.hardware) if defined and self.hardware in defined else HARDWARE.get(self.hardware)
        if base is None and not self.ports:
            return None
        ports = dict(base.ports) if base else {}
        ports.update({plane: spec.port_group() for plane, spec in self.ports.items()})
        if self.nic is not None and "compute" in ports:
            ports["compute"] = dataclasses.replace(ports["compute"], nic=self.nic)
        if base is None:
            return HardwareProfile(
                "custom", f"group {self.group}: ports from the definition", self.gpus or 0, None, self.gpus is not None and self.gpus >= 8, ports
            )
        gpus = base.gpus if self.gpus is None else self.gpus
        return dataclasses.replace(base, gpus=gpus, ports=ports)

    def hostnames(self) -> list[str]:
        """Every hostname of the group, index 1..count."""
        return [format_hostname(self.hostname, i) for i in range(1, self.count + 1)]

    def node_ids(self) -> range:
        """The stable ids of the group's nodes."""
        return range(self.id_offset + 1, self.id_offset + self.count + 1)


def format_hostname(pattern: str, index: int) -> str:
    """The host name ``pattern`` gives node ``index``; only ``{index}`` and ``{index:0Nd}`` (N <= 6) are understood.

    Example:
        >>> format_hostname("gpu{index:03d}", 7)
        'gpu007'
    """
    head, width, tail = _index_field(pattern)
    return pattern if width == 0 else f"{head}{index:0{width}d}{tail}"


@lru_cache(maxsize=256)
def _index_field(pattern: str) -> tuple[str, int, str]:
    """``pattern`` around its first index field, and the field's width (0: no field): parsed once per pattern, as a
    4,096-node plan names each node several times."""
    found = _INDEX_FIELD.search(pattern)
    if found is None:
        return pattern, 0, ""
    return pattern[: found.start()], int(found.group(1) or 1), pattern[found.end() :]
