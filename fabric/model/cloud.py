"""Cloud targets: region/zone, capacity, placement, image and storage per provider."""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Annotated, Literal

from pydantic import Field

from fabric.model.base import SpecModel
from fabric.model.strings import Identifier, TagKey, TagValue

Tags = Annotated[dict[TagKey, TagValue], Field(max_length=50)]  # AWS allows 50 user tags per resource, GCP 64 labels


class AwsCapacitySpec(SpecModel):
    """How EC2 capacity is obtained."""

    type: Literal["on-demand", "odcr", "capacity-block", "spot"] = "on-demand"
    reservation_id: Annotated[str, Field(pattern=r"^cr-[0-9a-f]{8,17}$")] | None = Field(
        default=None, description="Capacity reservation id (ODCR or Capacity Block)."
    )


class AwsPlacementSpec(SpecModel):
    """Cluster placement group. With EFA the choice must be explicit."""

    enabled: bool
    strategy: Literal["cluster", "partition", "spread"] = "cluster"
    name: Identifier | None = Field(default=None, description="Use an existing placement group instead of creating one.")


class FsxLustreSpec(SpecModel):
    """FSx for Lustre on the storage plane."""

    capacity_gib: Annotated[int, Field(ge=1200)] = 4800
    throughput_mb_per_tib: Literal[125, 250, 500, 1000] = 250


class AwsSpec(SpecModel):
    """AWS target. EFA clusters live in one availability zone."""

    region: Annotated[str, Field(pattern=r"^[a-z]{2}(-[a-z]+)+-\d$")]
    availability_zones: tuple[Annotated[str, Field(pattern=r"^[a-z]{2}(-[a-z]+)+-\d[a-z]$")], ...] = Field(min_length=1, max_length=8)
    image: Annotated[str, Field(pattern=r"^ami-[0-9a-f]{8,17}$")]
    capacity: AwsCapacitySpec = AwsCapacitySpec()
    placement_group: AwsPlacementSpec | None = None
    management_access: Literal["ssm", "bastion"] = Field(
        default="ssm", description="ssm: Session Manager through VPC endpoints, no inbound SSH; bastion: an SSH bastion on the oob subnet."
    )
    bastion_ingress: tuple[IPv4Network, ...] = Field(default=(), max_length=64, description="Prefixes allowed to reach the bastion's SSH port.")
    auto_scaling_group: bool = Field(default=False, description="Launch GPU nodes through an auto-scaling group instead of instances.")
    fsx_lustre: FsxLustreSpec | None = FsxLustreSpec()
    tags: Tags = Field(default_factory=dict[str, str])


class GcpCapacitySpec(SpecModel):
    """How GCE capacity is obtained. DWS flex and reservations exclude each other."""

    type: Literal["on-demand", "reservation", "dws-flex", "spot"] = "on-demand"
    reservation: Annotated[str, Field(pattern=r"^[A-Za-z0-9/_-]+$")] | None = Field(
        default=None, description="SPECIFIC reservation: name[/reservationBlocks/B[/reservationSubBlocks/S]] or projects/P/reservations/R."
    )
    max_run_duration_s: Annotated[int, Field(ge=60, le=604800)] | None = None


class GcpPlacementSpec(SpecModel):
    """Compact placement resource policy."""

    enabled: bool = True
    max_distance: Annotated[int, Field(ge=1, le=3)] | None = 2


class GcpStorageSpec(SpecModel):
    """Shared storage on the storage plane."""

    kind: Literal["filestore", "managed-lustre"] = "filestore"
    capacity_gib: Annotated[int, Field(ge=1024)] = 2560
    tier: Identifier = "BASIC_SSD"


class GcpSpec(SpecModel):
    """Google Cloud target."""

    project: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$")]
    region: Annotated[str, Field(pattern=r"^[a-z]+-[a-z]+\d$")]
    zone: Annotated[str, Field(pattern=r"^[a-z]+-[a-z]+\d-[a-z]$")]
    image: Identifier
    capacity: GcpCapacitySpec = GcpCapacitySpec()
    placement: GcpPlacementSpec = GcpPlacementSpec()
    storage: GcpStorageSpec | None = GcpStorageSpec()
    labels: Tags = Field(default_factory=dict[str, str])


class AzureImageSpec(SpecModel):
    """Marketplace image reference."""

    publisher: Identifier = "microsoft-dsvm"
    offer: Identifier = "ubuntu-hpc"
    sku: Identifier = "2204"
    version: Identifier = "latest"
    generation: Literal[1, 2] = 2


class AmlfsSpec(SpecModel):
    """Azure Managed Lustre on the storage plane."""

    sku: Literal["AMLFS-Durable-Premium-40", "AMLFS-Durable-Premium-125", "AMLFS-Durable-Premium-250", "AMLFS-Durable-Premium-500"] = (
        "AMLFS-Durable-Premium-250"
    )
    capacity_tib: Annotated[int, Field(ge=4)] = 8


class AzureSpec(SpecModel):
    """Azure target. One InfiniBand group = one Uniform scale set with a single placement group."""

    location: Annotated[str, Field(pattern=r"^[a-z0-9]+$")]
    resource_group: Annotated[str, Field(pattern=r"^[-\w.()]{1,90}$")]
    image: AzureImageSpec = AzureImageSpec()
    scale_set_size: Annotated[int, Field(ge=1, le=300)] = Field(
        default=100, description="Most VMs per scale set (= per InfiniBand group); above 100 needs a raised limit."
    )
    raised_scale_set_limit: bool = Field(default=False, description="Set when Azure support raised the limit to 300.")
    capacity: Literal["on-demand", "spot"] = "on-demand"
    managed_lustre: AmlfsSpec | None = AmlfsSpec()
    tags: Tags = Field(default_factory=dict[str, str])
