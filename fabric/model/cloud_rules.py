"""Cloud pre-flight rules (the V-rules of ``shared/reference/cloud.md`` section 8.1) over a schema-valid ClusterSpec.

Rules that hold by construction in ``fabric.cloud`` (EFA layout V7/V8, no public IP V9, RDMA VPC without firewall V13,
TERMINATE on host maintenance V21, storage ports V28) are proven by the component tests instead.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from fabric.catalog.cloud import AWS_INSTANCE_TYPES, AZURE_VM_SIZES, GCP_MACHINE_TYPES
from fabric.errors import Finding
from fabric.model.cluster import ClusterSpec
from fabric.model.nodes import NodeGroupSpec

AWS_RESERVED_PER_SUBNET = 5  # network, VPC router, DNS, future use, broadcast
AWS_SUBNET_PREFIXES = range(16, 29)  # VPC and subnet blocks: /16 to /28
GCP_PLACEMENT_MAX_VMS = 1500
GCP_SMALLEST_SUBNET = 29  # GCE subnets are /29 or larger
GCP_NO_DISTANCE_ONE = frozenset({"a3-ultragpu-8g", "a4-highgpu-8g", "a4x-highgpu-4g"})
GCP_RESERVATION = re.compile(
    r"^(projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/reservations/)?[a-z]([-a-z0-9]*[a-z0-9])?(/reservationBlocks/[-a-z0-9]+(/reservationSubBlocks/[-a-z0-9]+)?)?$"
)
GCP_FILESTORE_TIERS = ("BASIC_HDD", "BASIC_SSD", "ZONAL", "REGIONAL", "HIGH_SCALE_SSD", "ENTERPRISE")
GCP_LUSTRE_TIERS = ("125", "250", "500", "1000")
AZURE_SCALE_SET_DEFAULT_LIMIT = 100
AZURE_BASTION_PREFIX = 26
AMLFS_SUBNET_PREFIX = 24
AMLFS_CAPACITY_STEP_TIB = {
    "AMLFS-Durable-Premium-40": 48,
    "AMLFS-Durable-Premium-125": 16,
    "AMLFS-Durable-Premium-250": 8,
    "AMLFS-Durable-Premium-500": 4,
}


def _gpu_groups(spec: ClusterSpec, catalog: dict[str, object]) -> Iterator[tuple[int, NodeGroupSpec]]:
    for gi, group in enumerate(spec.nodes):
        if group.role == "gpu" and group.count and group.instance_type in catalog:
            yield gi, group


def check_aws(spec: ClusterSpec) -> Iterator[Finding]:
    """EFA single AZ (V2), explicit placement (V3, V4), capacity (V5), EFA-capable types, subnet room (V10), bastion access."""
    aws = spec.aws
    if aws is None or spec.target != "aws":
        return
    efa_groups = [(gi, g) for gi, g in _gpu_groups(spec, dict(AWS_INSTANCE_TYPES)) if spec.planes.compute.transport == "efa"]
    if efa_groups and len(aws.availability_zones) > 1:
        yield Finding(
            ("aws", "availability_zones"), "EFA traffic stays inside one subnet, so an EFA cluster lives in one availability zone; list one zone"
        )
    for zone in aws.availability_zones:
        if not zone.startswith(aws.region):
            yield Finding(("aws", "availability_zones"), f"zone '{zone}' is not in region '{aws.region}'; use a {aws.region}<letter> zone")
    if efa_groups and aws.placement_group is None:
        yield Finding(
            ("aws", "placement_group"),
            "EFA is on but the placement choice is implicit; "
            "set placement_group: {enabled: true} (cluster strategy) or {enabled: false} (reservations)",
        )
    elif efa_groups and aws.placement_group is not None and not aws.placement_group.enabled and aws.capacity.type in ("on-demand", "spot"):
        yield Finding(
            ("aws", "placement_group"),
            "EFA without a cluster placement group: expect higher latency unless the reservation already packs the nodes",
            "warning",
        )
    yield from _check_aws_capacity(spec, efa_groups)
    for gi, group in efa_groups:
        if AWS_INSTANCE_TYPES[group.instance_type or ""].efa_interfaces == 0:
            yield Finding(("nodes", gi, "instance_type"), f"'{group.instance_type}' has no EFA; transport efa needs an EFA type such as p5.48xlarge")
    yield from _check_aws_subnets(spec)
    if aws.management_access == "bastion" and not aws.bastion_ingress:
        yield Finding(("aws", "bastion_ingress"), "management_access is bastion but no prefix may reach it; list your office or VPN prefixes")
    if any(net.prefixlen == 0 for net in aws.bastion_ingress):
        yield Finding(("aws", "bastion_ingress"), "0.0.0.0/0 opens SSH to the internet; prefer ssm or list your own prefixes", "warning")
    fsx = aws.fsx_lustre
    if fsx is not None and fsx.capacity_gib != 1200 and fsx.capacity_gib % 2400:
        yield Finding(
            ("aws", "fsx_lustre", "capacity_gib"), f"FSx for Lustre PERSISTENT_2 takes 1200 GiB or a multiple of 2400 GiB, not {fsx.capacity_gib}"
        )


def _check_aws_capacity(spec: ClusterSpec, efa_groups: list[tuple[int, NodeGroupSpec]]) -> Iterator[Finding]:
    aws = spec.aws
    assert aws is not None
    kind = aws.capacity.type
    if kind in ("odcr", "capacity-block") and aws.capacity.reservation_id is None:
        yield Finding(("aws", "capacity", "reservation_id"), f"capacity type {kind} needs the reservation id (cr-...) to target; add reservation_id")
    if kind in ("on-demand", "spot") and aws.capacity.reservation_id is not None:
        yield Finding(
            ("aws", "capacity", "reservation_id"), f"a reservation id is given but capacity type is {kind}; set type odcr or capacity-block"
        )
    if kind == "capacity-block":
        for gi, group in efa_groups:
            if not AWS_INSTANCE_TYPES[group.instance_type or ""].capacity_block:
                yield Finding(("nodes", gi, "instance_type"), f"'{group.instance_type}' is not sold as a Capacity Block; use on-demand or odcr")
    if kind in ("odcr", "capacity-block") and aws.placement_group is not None and aws.placement_group.enabled:
        yield Finding(
            ("aws", "placement_group"),
            f"a placement group on top of a {kind} reservation can fail with InsufficientInstanceCapacity; the reservation already places the nodes",
            "warning",
        )


def _check_aws_subnets(spec: ClusterSpec) -> Iterator[Finding]:
    planes = spec.planes
    for name in ("compute", "storage", "inband", "oob"):
        cidr = getattr(planes, name).cidr
        if cidr is not None and cidr.prefixlen not in AWS_SUBNET_PREFIXES:
            yield Finding(("planes", name, "cidr"), f"{cidr} cannot be an AWS subnet (prefix /16 to /28); resize it")
    nodes = sum(g.count for g in spec.nodes)
    room = planes.inband.cidr.num_addresses - AWS_RESERVED_PER_SUBNET
    if nodes > room:
        yield Finding(("planes", "inband", "cidr"), f"{nodes} primary interfaces do not fit {planes.inband.cidr} ({room} usable in AWS); enlarge it")


def check_gcp(spec: ClusterSpec) -> Iterator[Finding]:
    """Machine type ↔ transport and MTU (V12, V14), subnet split (V15), zone (V13), placement (V16, V17), capacity (V19, V20)."""
    gcp = spec.gcp
    if gcp is None or spec.target != "gcp":
        return
    compute = spec.planes.compute
    if not gcp.zone.startswith(f"{gcp.region}-"):
        yield Finding(
            ("gcp", "zone"),
            f"zone '{gcp.zone}' is not in region '{gcp.region}'; the RDMA profile and subnets are zonal, pick a {gcp.region}-<letter> zone",
        )
    layouts: set[tuple[int, int, int]] = set()
    for gi, group in _gpu_groups(spec, dict(GCP_MACHINE_TYPES)):
        machine = GCP_MACHINE_TYPES[group.instance_type or ""]
        layouts.add((machine.gpu_vpcs, machine.gvnic_vpcs, machine.rdma_nics))
        if machine.transport != compute.transport:
            yield Finding(
                ("planes", "compute", "transport"),
                f"{machine.name} uses {machine.transport}, not {compute.transport}; set transport: {machine.transport}",
            )
        if compute.mtu != machine.mtu:
            yield Finding(
                ("planes", "compute", "mtu"), f"{machine.name} GPU networks run at MTU {machine.mtu}, not {compute.mtu}; set mtu: {machine.mtu}"
            )
        subnets = machine.gpu_vpcs or machine.rdma_nics
        widest = GCP_SMALLEST_SUBNET - math.ceil(math.log2(subnets)) if subnets else GCP_SMALLEST_SUBNET
        if compute.cidr is not None and compute.cidr.prefixlen > widest:
            yield Finding(
                ("planes", "compute", "cidr"), f"{compute.cidr} cannot be split into {subnets} subnets for {machine.name}; use /{widest} or larger"
            )
        if gcp.placement.enabled and group.count > GCP_PLACEMENT_MAX_VMS:
            yield Finding(("nodes", gi, "count"), f"a compact placement policy holds at most {GCP_PLACEMENT_MAX_VMS} VMs; split the group")
        if gcp.placement.enabled and gcp.placement.max_distance == 1 and machine.name in GCP_NO_DISTANCE_ONE:
            yield Finding(("gcp", "placement", "max_distance"), f"max_distance 1 is not allowed for {machine.name}; use 2 or 3")
    if len(layouts) > 1:
        yield Finding(
            ("nodes",), "GPU groups mix machine types with different network layouts; the cluster has one GPU network layout, use one family"
        )
    yield from _check_gcp_capacity(spec)
    storage = gcp.storage
    if storage is not None:
        tiers = GCP_LUSTRE_TIERS if storage.kind == "managed-lustre" else GCP_FILESTORE_TIERS
        if storage.tier not in tiers:
            what = "per-unit throughput (MB/s/TiB)" if storage.kind == "managed-lustre" else "tier"
            yield Finding(("gcp", "storage", "tier"), f"{storage.kind} {what} '{storage.tier}' is not one of {', '.join(tiers)}")


def _check_gcp_capacity(spec: ClusterSpec) -> Iterator[Finding]:
    gcp = spec.gcp
    assert gcp is not None
    capacity = gcp.capacity
    if capacity.type == "dws-flex" and capacity.reservation is not None:
        yield Finding(
            ("gcp", "capacity", "reservation"), "DWS flex-start cannot be used with a reservation; remove the reservation or use type reservation"
        )
    if capacity.type == "reservation" and capacity.reservation is None:
        yield Finding(("gcp", "capacity", "reservation"), "capacity type reservation needs the SPECIFIC reservation name; add reservation")
    if capacity.reservation is not None and not GCP_RESERVATION.match(capacity.reservation):
        yield Finding(
            ("gcp", "capacity", "reservation"),
            f"'{capacity.reservation}' is not name[/reservationBlocks/B[/reservationSubBlocks/S]] or projects/P/reservations/name",
        )
    if capacity.max_run_duration_s is not None and capacity.type not in ("dws-flex", "spot"):
        yield Finding(("gcp", "capacity", "max_run_duration_s"), f"max_run_duration_s applies to dws-flex and spot, not {capacity.type}; remove it")
    if capacity.type == "reservation" and gcp.placement.enabled and gcp.placement.max_distance == 1:
        yield Finding(("gcp", "placement", "max_distance"), "max_distance 1 is not allowed with reservations; use 2 or 3")


def check_azure(spec: ClusterSpec) -> Iterator[Finding]:
    """Scale-set limit (V23), Gen2 images for ND (V25), InfiniBand sizes for azure-ib, Managed Lustre capacity steps."""
    azure = spec.azure
    if azure is None or spec.target != "azure":
        return
    if azure.scale_set_size > AZURE_SCALE_SET_DEFAULT_LIMIT and not azure.raised_scale_set_limit:
        yield Finding(
            ("azure", "scale_set_size"),
            f"a single-placement-group scale set holds {AZURE_SCALE_SET_DEFAULT_LIMIT} VMs unless Azure support raised it to 300; "
            "lower scale_set_size or set raised_scale_set_limit: true",
        )
    for gi, group in _gpu_groups(spec, dict(AZURE_VM_SIZES)):
        size = AZURE_VM_SIZES[group.instance_type or ""]
        if size.gen2_only and azure.image.generation != 2:
            yield Finding(("azure", "image", "generation"), f"{size.name} boots Generation 2 images only; use a gen2 HPC image")
        if spec.planes.compute.transport == "azure-ib" and size.ib_ports == 0:
            yield Finding(
                ("nodes", gi, "instance_type"), f"{size.name} has no InfiniBand; transport azure-ib needs an ND size such as Standard_ND96isr_H100_v5"
            )
    if spec.planes.oob.cidr.prefixlen > AZURE_BASTION_PREFIX:
        yield Finding(("planes", "oob", "cidr"), f"the oob plane becomes AzureBastionSubnet, which needs /{AZURE_BASTION_PREFIX} or larger; widen it")
    lustre = azure.managed_lustre
    if lustre is not None and spec.planes.storage.cidr.prefixlen > AMLFS_SUBNET_PREFIX:
        yield Finding(("planes", "storage", "cidr"), f"Azure Managed Lustre needs a /{AMLFS_SUBNET_PREFIX} or larger storage subnet; widen it")
    if lustre is not None and lustre.capacity_tib % AMLFS_CAPACITY_STEP_TIB[lustre.sku]:
        step = AMLFS_CAPACITY_STEP_TIB[lustre.sku]
        yield Finding(("azure", "managed_lustre", "capacity_tib"), f"{lustre.sku} grows in steps of {step} TiB; use a multiple of {step}")
