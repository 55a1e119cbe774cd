"""AWS pre-flight rules (the V-rules of ``shared/reference/cloud.md`` section 8.1) over a schema-valid ClusterSpec.

GCP's are in ``fabric.model.rules.gcp``, Azure's in ``fabric.model.rules.azure``. Every provider limit carries its source.
Rules that hold by construction in ``fabric.cloud`` (EFA layout V7/V8, no public IP V9, RDMA VPC without firewall V13,
TERMINATE on host maintenance V21, storage ports V28) are proven by the component tests instead.
"""

from __future__ import annotations

from collections.abc import Iterator

from fabric.catalog.cloud import AWS_INSTANCE_TYPES
from fabric.errors import Finding
from fabric.model.cluster import ClusterSpec
from fabric.model.nodes import NodeGroupSpec
from fabric.model.rules.common import gpu_groups

__all__ = ["check_aws"]

AWS_RESERVED_PER_SUBNET = 5  # network, VPC router, DNS, future use, broadcast
AWS_SUBNET_PREFIXES = range(16, 29)  # VPC and subnet blocks: /16 to /28
# EC2 user guide, capacity-blocks-purchase: "You must specify reservation durations in 1-day increments up to 14 days,
# and in 7-day increments up to 182 days. Each Capacity Block can have up to 64 instances".
CAPACITY_BLOCK_MAX_INSTANCES = 64
CAPACITY_BLOCK_DAY_STEPS_UNTIL_H = 14 * 24
CAPACITY_BLOCK_MAX_H = 182 * 24
WIDEST_PRIVATE_SSH_PREFIX = 8  # anything wider than a /8 necessarily covers public IPv4 space (no private /7 exists)


def check_aws(spec: ClusterSpec) -> Iterator[Finding]:
    """EFA single AZ (V2), explicit placement (V3, V4), capacity (V5), EFA-capable types, subnet room (V10), access, storage."""
    aws = spec.aws
    if aws is None or spec.target != "aws":
        return
    efa_groups = [(gi, g) for gi, g in gpu_groups(spec, dict(AWS_INSTANCE_TYPES)) if spec.planes.compute.transport == "efa"]
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
    yield from _check_ultraservers(spec)
    for gi, group in efa_groups:
        if AWS_INSTANCE_TYPES[group.instance_type or ""].efa_interfaces == 0:
            yield Finding(("nodes", gi, "instance_type"), f"'{group.instance_type}' has no EFA; transport efa needs an EFA type such as p5.48xlarge")
    yield from _check_aws_subnets(spec)
    yield from _check_aws_access(spec)
    yield from _check_fsx(spec, has_efa=any(AWS_INSTANCE_TYPES[g.instance_type or ""].efa_interfaces for _, g in efa_groups))


def _check_aws_capacity(spec: ClusterSpec, efa_groups: list[tuple[int, NodeGroupSpec]]) -> Iterator[Finding]:
    aws = spec.aws
    assert aws is not None
    capacity = aws.capacity
    kind = capacity.type
    if kind in ("odcr", "capacity-block") and capacity.reservation_id is None:
        yield Finding(("aws", "capacity", "reservation_id"), f"capacity type {kind} needs the reservation id (cr-...) to target; add reservation_id")
    if kind in ("on-demand", "spot") and capacity.reservation_id is not None:
        yield Finding(
            ("aws", "capacity", "reservation_id"), f"a reservation id is given but capacity type is {kind}; set type odcr or capacity-block"
        )
    if kind == "capacity-block":
        for gi, group in efa_groups:
            if not AWS_INSTANCE_TYPES[group.instance_type or ""].capacity_block:
                yield Finding(("nodes", gi, "instance_type"), f"'{group.instance_type}' is not sold as a Capacity Block; use on-demand or odcr")
        reserved = sum(g.count for _, g in efa_groups)
        if reserved > CAPACITY_BLOCK_MAX_INSTANCES:
            yield Finding(
                ("nodes",),
                f"{reserved} GPU instances target one Capacity Block, which holds at most {CAPACITY_BLOCK_MAX_INSTANCES}; "
                "split the cluster or buy several blocks and use one definition each",
            )
    if capacity.duration_hours is not None:
        yield from _check_block_duration(kind, capacity.duration_hours)
    if kind in ("odcr", "capacity-block") and aws.placement_group is not None and aws.placement_group.enabled:
        yield Finding(
            ("aws", "placement_group"),
            f"a placement group on top of a {kind} reservation can fail with InsufficientInstanceCapacity; the reservation already places the nodes",
            "warning",
        )


def _check_ultraservers(spec: ClusterSpec) -> Iterator[Finding]:
    """UltraServer types (one NVLink domain across instances: p6e-gb200) come only as reserved UltraServers.

    EC2 capacity-blocks-how: "you can purchase the following UltraServer types through Capacity Blocks: P6e-GB200";
    SageMaker API UltraServer: "An UltraServer consists of multiple instances within a shared NVLink interconnect domain".
    The plan makes each group one NVLink domain (one Slurm block), so the instances the definition's one reservation
    targets must fit one UltraServer.
    """
    aws = spec.aws
    assert aws is not None
    ultra = [(gi, g, AWS_INSTANCE_TYPES[g.instance_type or ""]) for gi, g in gpu_groups(spec, dict(AWS_INSTANCE_TYPES))]
    ultra = [(gi, g, t) for gi, g, t in ultra if t.nvlink_domain_gpus and t.gpus]
    if not ultra:
        return
    name = ultra[0][2].name
    if aws.capacity.type not in ("capacity-block", "odcr"):
        yield Finding(
            ("aws", "capacity", "type"),
            f"{name} runs only as part of an UltraServer, which EC2 sells as reserved capacity (UltraServer Capacity Blocks), "
            f"not as {aws.capacity.type}; set capacity type capacity-block (or odcr) with the UltraServer's reservation_id",
        )
    size = ultra[0][2].nvlink_domain_gpus // ultra[0][2].gpus
    total = sum(g.count for _, g, _ in ultra)
    if total > size:
        yield Finding(
            ("nodes", ultra[-1][0], "count"),
            f"{total} {name} instances target one reservation, but one UltraServer (one NVLink domain) holds {size}; "
            f"keep at most {size} per definition and use one definition per UltraServer reservation",
        )
    for gi, group, _ in ultra[1:]:
        yield Finding(
            ("nodes", gi, "group"),
            f"group '{group.group}' splits one UltraServer into several groups; "
            f"put its {size} instances in one group (one NVLink domain, one Slurm block)",
        )


def _check_block_duration(kind: str, hours: int) -> Iterator[Finding]:
    path = ("aws", "capacity", "duration_hours")
    if kind != "capacity-block":
        yield Finding(path, f"duration_hours describes a Capacity Block, not capacity type {kind}; remove it")
        return
    days_ok = hours % 24 == 0 and hours <= CAPACITY_BLOCK_DAY_STEPS_UNTIL_H
    weeks_ok = hours % (7 * 24) == 0 and hours <= CAPACITY_BLOCK_MAX_H
    if not (days_ok or weeks_ok):
        yield Finding(
            path,
            f"a Capacity Block lasts 1 to 14 days in 1-day steps or up to 182 days in 7-day steps, not {hours} h; "
            "use a multiple of 24 up to 336 or of 168 up to 4368",
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


def _check_aws_access(spec: ClusterSpec) -> Iterator[Finding]:
    aws = spec.aws
    assert aws is not None
    key = aws.encryption.kms_key_id
    if aws.auto_scaling_group and aws.encryption.ebs and key is not None and ":alias/" in key:
        # The stack grants Auto Scaling's service-linked role the key (fabric.cloud.aws_asg); KMS CreateGrant KeyId:
        # "Specify the key ID or key ARN of the KMS key" (an alias names no key a grant can hold).
        yield Finding(
            ("aws", "encryption", "kms_key_id"),
            "auto-scaling groups need a KMS grant for AWSServiceRoleForAutoScaling, which takes the key ARN, not an alias; give the key/... ARN",
        )
    if aws.management_access == "bastion" and not aws.bastion_ingress:
        yield Finding(("aws", "bastion_ingress"), "management_access is bastion but no prefix may reach it; list your office or VPN prefixes")
    for i, net in enumerate(aws.bastion_ingress):
        if net.prefixlen >= WIDEST_PRIVATE_SSH_PREFIX:
            continue
        if aws.allow_public_ssh:
            yield Finding(("aws", "bastion_ingress", i), f"{net} opens the bastion's SSH port to the internet (allow_public_ssh is set)", "warning")
        else:
            yield Finding(
                ("aws", "bastion_ingress", i),
                f"{net} opens SSH to public addresses (wider than a /8); list your office or VPN prefixes, "
                "use management_access: ssm, or set allow_public_ssh: true",
            )


def _check_fsx(spec: ClusterSpec, *, has_efa: bool) -> Iterator[Finding]:
    aws = spec.aws
    assert aws is not None
    fsx = aws.fsx_lustre
    if fsx is None:
        return
    # FSx API StorageCapacity: "For SCRATCH_2, PERSISTENT_2 ... SSD ... the valid values are 1200 GiB, 2400 GiB, and increments of 2400 GiB."
    if fsx.capacity_gib != 1200 and fsx.capacity_gib % 2400:
        yield Finding(
            ("aws", "fsx_lustre", "capacity_gib"), f"FSx for Lustre PERSISTENT_2 takes 1200 GiB or a multiple of 2400 GiB, not {fsx.capacity_gib}"
        )
    # An EFA-enabled file system talks to the clients' EFA interfaces (FSx cannot-create-fs: "An EFA requires a security
    # group that allows all inbound and outbound traffic to and from the security group itself and the security group of the clients").
    if fsx.efa and not has_efa:
        yield Finding(
            ("aws", "fsx_lustre", "efa"), "an EFA-enabled file system needs EFA clients, but no GPU group has EFA interfaces; set efa: false"
        )
