"""Node groups: role, count, naming, hardware and stable ids."""

from __future__ import annotations

import re
from ipaddress import IPv4Address
from typing import Annotated, Literal

from pydantic import Field, field_validator

from fabric.catalog.hardware import HARDWARE
from fabric.model.base import NAME_RE, Name, SpecModel, unknown_choice
from fabric.model.planes import PlaneName

Role = Literal["gpu", "storage", "management", "login", "subnet-manager"]
_NAME = re.compile(NAME_RE)


class NodeGroupSpec(SpecModel):
    """A group of identical nodes.

    A node's stable id is ``id_offset + index`` (index runs from 1 to ``count``). Addresses and fabric slots derive
    from that id, so growing a group never renumbers another; give groups id ranges that do not overlap.
    """

    group: Name = Field(description="Group name; also the Ansible group '<group>_nodes'.")
    role: Role
    count: Annotated[int, Field(ge=0, le=65536)]
    hostname: str = Field(description="Python format string with {index}, e.g. 'gpu{index:03d}'.")
    id_offset: Annotated[int, Field(ge=0, le=1_000_000)] = 0
    hardware: str | None = Field(default=None, description="On-prem hardware profile (fabric/catalog/hardware.py).")
    instance_type: str | None = Field(default=None, description="Cloud instance type, machine type or VM size.")
    interfaces: dict[PlaneName, tuple[str, ...]] = Field(
        default_factory=dict[PlaneName, tuple[str, ...]], description="Override the hardware's interface names per plane."
    )
    addresses: dict[Name, dict[PlaneName, IPv4Address]] = Field(
        default_factory=dict[str, dict[PlaneName, IPv4Address]],
        description="Explicit addresses: hostname -> plane -> address (first port of that plane).",
    )
    labels: dict[str, str] = Field(default_factory=dict[str, str])

    @field_validator("hostname")
    @classmethod
    def _pattern(cls, value: str) -> str:
        if "{index" not in value:
            msg = f"hostname pattern {value!r} has no {{index}} field; write e.g. 'gpu{{index:03d}}'"
            raise ValueError(msg)
        try:
            sample = value.format(index=1)
        except (KeyError, ValueError, IndexError) as exc:
            msg = f"hostname pattern {value!r} is not a valid format string ({exc}); only {{index}} is available"
            raise ValueError(msg) from None
        if not _NAME.match(sample):
            msg = f"hostname pattern {value!r} gives {sample!r}, not a lower-case DNS label; use letters, digits and '-'"
            raise ValueError(msg)
        return value

    @field_validator("hardware")
    @classmethod
    def _known_hardware(cls, value: str | None) -> str | None:
        if value is not None and value not in HARDWARE:
            raise ValueError(unknown_choice("hardware profile", value, HARDWARE))
        return value

    def hostnames(self) -> list[str]:
        """Every hostname of the group, index 1..count."""
        return [self.hostname.format(index=i) for i in range(1, self.count + 1)]

    def node_ids(self) -> range:
        """The stable ids of the group's nodes."""
        return range(self.id_offset + 1, self.id_offset + self.count + 1)
