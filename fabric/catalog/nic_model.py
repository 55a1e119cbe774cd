"""The schema of a NIC model data file (``fabric/catalog/data/nics/<model>.yaml``): strict, frozen models.

A NIC model gives its vendor, driver and ports, the RoCE marking it uses out of the box (RoCE and CNP DSCP and 802.1p
priority), the congestion-control parameters it exposes with their defaults, and which of the marking fields gpufabric
can set on it (the ``tool`` names the path ``roles/nic_qos`` takes). A figure no vendor document gives stays unset
(``None``): the planner then refuses to rely on it instead of guessing. Sources are in that directory's README.md.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from fabric.catalog.text import CatalogKey, Description

MarkingField = Literal["roce_dscp", "roce_priority", "cnp_dscp", "cnp_priority"]
"""The four values a RoCE NIC puts on the wire that the switches must classify: the RoCE data packets' DSCP and
802.1p priority, and the congestion notification packets' DSCP and 802.1p priority."""
MARKING_FIELDS: tuple[MarkingField, ...] = ("roce_dscp", "roce_priority", "cnp_dscp", "cnp_priority")
CONTRACT_FIELD: dict[MarkingField, str] = {
    "roce_dscp": "roce.dscp",
    "roce_priority": "roce.priority",
    "cnp_dscp": "roce.cnp.dscp",
    "cnp_priority": "roce.cnp.priority",
}
"""Each marking field's place in the cluster definition's ``roce:`` block."""

_Dscp = Annotated[int, Field(ge=0, le=63)]
_Priority = Annotated[int, Field(ge=0, le=7)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RoceMarking(_Strict):
    """What the NIC sends out of the box; ``None``: no vendor document gives it (never a guess)."""

    roce_dscp: _Dscp | None = None
    roce_priority: _Priority | None = None
    cnp_dscp: _Dscp | None = None
    cnp_priority: _Priority | None = None


class CcParameter(_Strict):
    """One congestion-control (DCQCN) parameter the NIC exposes, by the name its own tool uses."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")]
    # the widest DCQCN field is 32 bits (NVIDIA DOCA "DCQCN CC Parameters": rate_reduce_monitor_period "1…UINT32")
    default: Annotated[int, Field(ge=0, le=2**32 - 1)] | None = Field(
        default=None, description="The documented default; None where no document gives it."
    )
    unit: Description = ""
    where: Description = Field(description="Where it is read and set (sysfs/configfs path, NVConfig name).")


class NicModel(_Strict):
    """A RoCE NIC model, as its data file describes it."""

    name: CatalogKey
    description: Description = ""
    vendor: Literal["nvidia", "broadcom", "amd"]
    driver: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,31}$")] | None = Field(default=None, description="The Linux netdev driver (ethtool -i).")
    rdma_driver: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,31}$")] | None = Field(default=None, description="The RDMA driver (rdma link).")
    ports: Annotated[int, Field(ge=1, le=8)] | None = Field(default=None, description="Network ports per card; None: it varies by SKU.")
    speeds_gbps: tuple[Annotated[int, Field(ge=1, le=1600)], ...] = Field(
        default=(), max_length=10, description="Ethernet port speeds the card runs (the cited ones)."
    )
    defaults: RoceMarking = Field(description="RoCE and CNP marking out of the box.")
    settable: tuple[MarkingField, ...] = Field(
        default=(),
        max_length=len(MARKING_FIELDS),
        description="The marking fields roles/nic_qos sets on this NIC (through its tool); the others must already agree.",
    )
    tool: Literal["mlnx", "bnxt"] | None = Field(
        default=None, description="The path roles/nic_qos takes: mlnx (mlnx_qos, sysfs ecn, cma_roce_tos), bnxt (bnxt_re configfs); None: none."
    )
    congestion_control: tuple[CcParameter, ...] = Field(default=(), max_length=64)
    commands: tuple[Description, ...] = Field(
        default=(), max_length=32, description="The documented commands that set the marking, as the vendor writes them (for people)."
    )

    @model_validator(mode="after")
    def _consistent(self) -> NicModel:
        if self.settable and self.tool is None:
            msg = f"settable lists {list(self.settable)} but no tool sets them; name the tool or leave settable empty"
            raise ValueError(msg)
        twice = sorted({f for f in self.settable if self.settable.count(f) > 1})
        if twice:
            msg = f"settable lists {', '.join(twice)} more than once"
            raise ValueError(msg)
        return self
