"""Cloud targets: region/zone, capacity, placement, image and storage per provider."""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Annotated, Literal

from pydantic import Field

from fabric.model.base import SpecModel
from fabric.model.strings import Identifier, TagKey, TagValue

# Upper bounds of the storage sizes, each the largest the provider's API or documentation allows (a typing error such as
# a 30-digit capacity stops at validation instead of reaching a Pulumi resource).
FSX_MAX_GIB = 2_147_483_647
"""FSx API Reference, CreateFileSystem ``StorageCapacity``: an integer, 0..2,147,483,647 GiB (FSx for Lustre grows to petabytes)."""
GCP_STORAGE_MAX_GIB = 84_016_000
"""Managed Lustre "Create an instance": capacity ranges from 9,000 to 84,016,000 GiB (80.1 PiB); Filestore instances are smaller."""
AMLFS_MAX_TIB = 16_384
"""16 PiB. Microsoft's AMLFS prerequisites size subnets for file systems up to 400 TiB and larger ones are arranged on request;
no Azure Managed Lustre offered reaches 16 PiB."""

REGION_MAX = 32  # region and zone names: the longest today, GCP's northamerica-northeast1-a, has 25 characters
# An AWS KMS KeyId (ARN form) is at most 2048 characters (KMS API Reference, KeyId); a GCP reservation path, at most
# four names of 63 plus their keywords, stays below 512.
Tags = Annotated[dict[TagKey, TagValue], Field(max_length=50)]  # AWS allows 50 user tags per resource, GCP 64 labels


class AwsCapacitySpec(SpecModel):
    """How EC2 capacity is obtained."""

    type: Literal["on-demand", "odcr", "capacity-block", "spot"] = "on-demand"
    reservation_id: Annotated[str, Field(pattern=r"^cr-[0-9a-f]{8,17}$")] | None = Field(
        default=None, description="Capacity reservation id (ODCR or Capacity Block)."
    )
    duration_hours: Annotated[int, Field(ge=1, le=8760)] | None = Field(
        default=None,
        description="Length of the Capacity Block bought (1-day steps up to 14 days, 7-day steps up to 182 days); checked and noted.",
    )


class AwsEncryptionSpec(SpecModel):
    """Encryption at rest of the EBS root volumes and the FSx file system."""

    ebs: bool = Field(default=True, description="Encrypt every EBS root volume (opt-out: false, e.g. for an unencrypted shared AMI policy).")
    kms_key_id: Annotated[str, Field(pattern=r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(key|alias)/[A-Za-z0-9/_-]+$", max_length=2048)] | None = Field(
        default=None,
        description="Customer-managed KMS key ARN for EBS, FSx and the flow-log group (its key policy must let EC2, FSx and CloudWatch "
        "Logs use it; with auto_scaling_group the stack grants AWSServiceRoleForAutoScaling its use, so give the key ARN, not an "
        "alias); the AWS-managed keys when absent.",
    )


class AwsPlacementSpec(SpecModel):
    """Cluster placement group. With EFA the choice must be explicit."""

    enabled: bool
    strategy: Literal["cluster", "partition", "spread"] = "cluster"
    name: Identifier | None = Field(default=None, description="Use an existing placement group instead of creating one.")


class FsxLustreSpec(SpecModel):
    """FSx for Lustre PERSISTENT_2 on the storage plane (or, with ``efa``, next to the EFA interfaces)."""

    capacity_gib: Annotated[int, Field(ge=1200, le=FSX_MAX_GIB)] = 4800
    throughput_mb_per_tib: Literal[125, 250, 500, 1000] = 250
    efa: bool = Field(
        default=False, description="EFA and GPUDirect Storage to the file system: it joins the compute subnet and the EFA security group."
    )


class AwsSpec(SpecModel):
    """AWS target. EFA clusters live in one availability zone."""

    region: Annotated[str, Field(pattern=r"^[a-z]{2}(-[a-z]+)+-\d$", max_length=REGION_MAX)]
    availability_zones: tuple[Annotated[str, Field(pattern=r"^[a-z]{2}(-[a-z]+)+-\d[a-z]$", max_length=REGION_MAX)], ...] = Field(
        min_length=1, max_length=8
    )
    image: Annotated[str, Field(pattern=r"^ami-[0-9a-f]{8,17}$")]
    capacity: AwsCapacitySpec = AwsCapacitySpec()
    placement_group: AwsPlacementSpec | None = None
    management_access: Literal["ssm", "bastion"] = Field(
        default="ssm", description="ssm: Session Manager through VPC endpoints, no inbound SSH; bastion: an SSH bastion on the oob subnet."
    )
    bastion_ingress: tuple[IPv4Network, ...] = Field(default=(), max_length=64, description="Prefixes allowed to reach the bastion's SSH port.")
    allow_public_ssh: bool = Field(
        default=False, description="Accept a bastion_ingress prefix wider than /8 that covers public addresses (refused otherwise)."
    )
    auto_scaling_group: bool = Field(
        default=False, description="Launch nodes through auto-scaling groups: every interface then sits in the primary's subnet."
    )
    fsx_lustre: FsxLustreSpec | None = FsxLustreSpec()
    encryption: AwsEncryptionSpec = AwsEncryptionSpec()
    root_volume_gib: Annotated[int, Field(ge=8, le=16384)] | None = Field(
        default=None, description="Root volume size for every node; per instance type from the catalog when absent."
    )
    flow_logs: bool = Field(default=True, description="VPC flow logs (all traffic) to CloudWatch Logs; opt-out: false.")
    restrict_default_security_group: bool = Field(default=True, description="Strip every rule from the VPC's default security group; opt-out: false.")
    tags: Tags = Field(default_factory=dict[str, str])


class GcpCapacitySpec(SpecModel):
    """How GCE capacity is obtained. DWS flex and reservations exclude each other."""

    type: Literal["on-demand", "reservation", "dws-flex", "spot"] = "on-demand"
    reservation: Annotated[str, Field(pattern=r"^[A-Za-z0-9/_-]+$", max_length=512)] | None = Field(
        default=None, description="SPECIFIC reservation: name[/reservationBlocks/B[/reservationSubBlocks/S]] or projects/P/reservations/R."
    )
    reservation_mode: Literal["specific", "calendar", "none"] | None = Field(
        default=None,
        description="specific: an on-demand reservation (STANDARD VMs, its own placement); calendar: a future reservation in calendar "
        "mode or AI Hypercomputer, dense (RESERVATION_BOUND VMs); none: on-demand VMs that consume no reservation. "
        "Default with type reservation: calendar for the types sold as reservation-bound capacity (A3 Ultra, A4, A4X), else specific.",
    )
    max_run_duration_s: Annotated[int, Field(ge=1, le=31_536_000)] | None = Field(
        default=None, description="Run time before GCE stops the VMs; dws-flex needs 600 to 604800 s."
    )

    @property
    def mode(self) -> Literal["specific", "calendar", "none"] | None:
        """The reservation mode in effect for an ordinary machine type (``specific`` for a reservation given without a mode)."""
        return self.mode_for(reservation_bound=False)

    def mode_for(self, *, reservation_bound: bool) -> Literal["specific", "calendar", "none"] | None:
        """The reservation mode in effect for a machine type; a reservation given without a mode is ``calendar`` for the types
        GCP sells as reservation-bound capacity (catalog ``reservation_bound``), else ``specific``.

        Cluster Toolkit a3ultra-vm-deployment.yaml: "if you have a reservation, keep RESERVATION_BOUND"; GCP
        create-reservation-bound-vm: "This provisioning model lets you create A4X, A4, or A3 Ultra VMs by consuming
        pre-reserved capacity."
        """
        if self.reservation_mode is None and self.type == "reservation":
            return "calendar" if reservation_bound else "specific"
        return self.reservation_mode


class GcpPlacementSpec(SpecModel):
    """Compact placement resource policy."""

    enabled: bool = True
    max_distance: Annotated[int, Field(ge=1, le=3)] | None = 2


class GcpStorageSpec(SpecModel):
    """Shared storage on the storage plane."""

    kind: Literal["filestore", "managed-lustre"] = "filestore"
    capacity_gib: Annotated[int, Field(ge=1024, le=GCP_STORAGE_MAX_GIB)] = 2560
    tier: Identifier = "BASIC_SSD"


class GcpShieldedVmSpec(SpecModel):
    """Shielded VM options of every instance."""

    enabled: bool = Field(default=True, description="vTPM and integrity monitoring; opt-out: false.")
    secure_boot: bool = Field(default=False, description="Secure Boot: only with signed kernel modules (the NVIDIA and RDMA drivers).")


class GcpSpec(SpecModel):
    """Google Cloud target."""

    project: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$")]
    region: Annotated[str, Field(pattern=r"^[a-z]+-[a-z]+\d$", max_length=REGION_MAX)]
    zone: Annotated[str, Field(pattern=r"^[a-z]+-[a-z]+\d-[a-z]$", max_length=REGION_MAX)]
    image: Identifier
    capacity: GcpCapacitySpec = GcpCapacitySpec()
    placement: GcpPlacementSpec = GcpPlacementSpec()
    storage: GcpStorageSpec | None = GcpStorageSpec()
    shielded_vm: GcpShieldedVmSpec = GcpShieldedVmSpec()
    flow_logs: bool = Field(default=True, description="VPC flow logs on every subnet that supports them; opt-out: false.")
    service_account: bool = Field(
        default=True, description="A node service account allowed only to write logs and metrics; false runs VMs without any."
    )
    enable_apis: bool = Field(default=True, description="Enable the APIs the cluster uses (compute, service networking, storage, IAP).")
    operators: tuple[Annotated[str, Field(pattern=r"^(user|group|serviceAccount):[^@\s]+@[A-Za-z0-9.-]+$", max_length=254)], ...] = Field(
        default=(),
        max_length=64,
        description="Principals (user:, group:, serviceAccount:) granted IAP TCP tunnelling and OS Login admin on the project.",
    )
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
    capacity_tib: Annotated[int, Field(ge=4, le=AMLFS_MAX_TIB)] = 8


class AzureSpec(SpecModel):
    """Azure target. One InfiniBand group = one Uniform scale set with a single placement group."""

    location: Annotated[str, Field(pattern=r"^[a-z0-9]{1,64}$")]
    resource_group: Annotated[str, Field(pattern=r"^[-\w.()]{1,90}$")]
    image: AzureImageSpec = AzureImageSpec()
    scale_set_size: Annotated[int, Field(ge=1, le=300)] = Field(
        default=100, description="Most VMs per scale set (= per InfiniBand group); above 100 needs a raised limit."
    )
    raised_scale_set_limit: bool = Field(
        default=False, description="Acknowledge that Azure support raised the single-placement-group limit to 300 VMs per scale set."
    )
    capacity: Literal["on-demand", "spot"] = "on-demand"
    managed_lustre: AmlfsSpec | None = AmlfsSpec()
    encryption_at_host: bool = Field(default=False, description="Encrypt temp disks and caches at the host (needs the subscription feature).")
    deny_vnet_inbound: bool = Field(default=True, description="End each plane's NSG with a deny-all inbound below its allow rules; opt-out: false.")
    boot_diagnostics: bool = Field(default=True, description="Boot diagnostics (serial log, screenshot) in managed storage; opt-out: false.")
    managed_identity: bool = Field(default=True, description="A system-assigned managed identity (no roles) on every scale set; opt-out: false.")
    tags: Tags = Field(default_factory=dict[str, str])
