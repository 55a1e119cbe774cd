"""Azure pre-flight rules: scale-set limit and InfiniBand islands, Gen2 images, IB sizes, Bastion and AMLFS subnets."""

from __future__ import annotations

from collections.abc import Iterator

from fabric.catalog.cloud import AZURE_VM_SIZES
from fabric.errors import Finding
from fabric.model.cluster import ClusterSpec
from fabric.model.rules.common import gpu_groups, image_architecture, usable_addresses

# setup-infiniband.md: a single-placement-group scale set is "capped at 100 VMs by default ... The limit on the number of
# VMs in a single scale set can be increased to 300"; "VMSS serves as the isolation boundary".
AZURE_SCALE_SET_DEFAULT_LIMIT = 100
AZURE_SCALE_SET_RAISED_LIMIT = 300
AZURE_BASTION_PREFIX = 26
AZURE_RESERVED_PER_SUBNET = 5  # network, gateway, two Azure DNS, broadcast
AMLFS_CAPACITY_STEP_TIB = {
    "AMLFS-Durable-Premium-40": 48,
    "AMLFS-Durable-Premium-125": 16,
    "AMLFS-Durable-Premium-250": 8,
    "AMLFS-Durable-Premium-500": 4,
}
# AMLFS prerequisites, "Network size requirements": 4-16 TiB /27, 20-40 TiB /26, 44-92 TiB /25, 96-196 TiB /24, 200-400 TiB /23.
AMLFS_SUBNET_PREFIX = ((16, 27), (40, 26), (92, 25), (196, 24), (400, 23))


def amlfs_subnet_prefix(capacity_tib: int) -> int:
    """The longest prefix Microsoft recommends for an AMLFS subnet of ``capacity_tib`` (/22 past the table).

    Example:
        >>> amlfs_subnet_prefix(16), amlfs_subnet_prefix(48)
        (27, 25)
    """
    return next((prefix for up_to, prefix in AMLFS_SUBNET_PREFIX if capacity_tib <= up_to), 22)


def check_azure(spec: ClusterSpec) -> Iterator[Finding]:
    """Scale-set limit (V23), Gen2 images for ND (V25), InfiniBand sizes for azure-ib, subnet sizes, AMLFS steps."""
    azure = spec.azure
    if azure is None or spec.target != "azure":
        return
    if azure.scale_set_size > AZURE_SCALE_SET_DEFAULT_LIMIT and not azure.raised_scale_set_limit:
        yield Finding(
            ("azure", "scale_set_size"),
            f"a single-placement-group scale set holds {AZURE_SCALE_SET_DEFAULT_LIMIT} VMs unless Azure support raised it to "
            f"{AZURE_SCALE_SET_RAISED_LIMIT}; lower scale_set_size or set raised_scale_set_limit: true",
        )
    ib = spec.planes.compute.transport == "azure-ib"
    for gi, group in gpu_groups(spec, AZURE_VM_SIZES):
        size = AZURE_VM_SIZES[group.instance_type or ""]
        if size.gen2_only and azure.image.generation != 2:
            yield Finding(("azure", "image", "generation"), f"{size.name} boots Generation 2 images only; use a gen2 HPC image")
        yield from _check_architecture(size.name, size.architecture, azure.image.offer, azure.image.sku)
        if ib and size.ib_ports == 0:
            yield Finding(
                ("nodes", gi, "instance_type"), f"{size.name} has no InfiniBand; transport azure-ib needs an ND size such as Standard_ND96isr_H100_v5"
            )
        if ib and size.ib_ports and group.count > azure.scale_set_size:
            yield Finding(("nodes", gi, "count"), _islands(group.count, azure.scale_set_size, azure.raised_scale_set_limit), "warning")
    yield from _check_subnets(spec)


def _check_architecture(size: str, architecture: str, offer: str, sku: str) -> Iterator[Finding]:
    """An image whose offer or SKU spells the other CPU architecture is an error; one that spells none, on an Arm size, a
    warning (Marketplace references carry no architecture field to check)."""
    found = image_architecture(offer, sku)
    if found is not None and found != architecture:
        yield Finding(
            ("azure", "image", "sku"), f"{size} runs {architecture} CPUs, the image {offer}/{sku} is built for {found}; use an {architecture} image"
        )
    elif found is None and architecture == "arm64":
        yield Finding(
            ("azure", "image", "sku"),
            f"{size} runs arm64 (Grace) CPUs and the image {offer}/{sku} does not say it is arm64; check it with "
            "`az vm image show` (architecture Arm64)",
            "warning",
        )


def _islands(count: int, size: int, raised: bool) -> str:
    sets = [size] * (count // size) + ([count % size] if count % size else [])
    split = " + ".join(str(n) for n in sets)
    fix = (
        f"raise scale_set_size up to {AZURE_SCALE_SET_RAISED_LIMIT}"
        if raised
        else f"ask Azure support to raise the limit to {AZURE_SCALE_SET_RAISED_LIMIT}, then set scale_set_size: {min(count, 300)} "
        "and raised_scale_set_limit: true"
    )
    return (
        f"{count} VMs become {len(sets)} InfiniBand islands ({split}): InfiniBand does not cross scale sets, "
        f"so no job spans them over IB; {fix}, or keep each job inside one island"
    )


def _check_subnets(spec: ClusterSpec) -> Iterator[Finding]:
    azure = spec.azure
    assert azure is not None
    planes = spec.planes
    if planes.oob.cidr.prefixlen > AZURE_BASTION_PREFIX:
        yield Finding(("planes", "oob", "cidr"), f"the oob plane becomes AzureBastionSubnet, which needs /{AZURE_BASTION_PREFIX} or larger; widen it")
    nodes = sum(g.count for g in spec.nodes)
    room = usable_addresses(planes.inband.cidr.prefixlen, AZURE_RESERVED_PER_SUBNET)
    if nodes > room:
        yield Finding(("planes", "inband", "cidr"), f"{nodes} VMs do not fit {planes.inband.cidr} ({room} usable in Azure); enlarge it")
    lustre = azure.managed_lustre
    if lustre is None:
        return
    needed = amlfs_subnet_prefix(lustre.capacity_tib)
    if planes.storage.cidr.prefixlen > needed:
        yield Finding(
            ("planes", "storage", "cidr"), f"Azure Managed Lustre of {lustre.capacity_tib} TiB needs a /{needed} or larger storage subnet; widen it"
        )
    if lustre.capacity_tib % AMLFS_CAPACITY_STEP_TIB[lustre.sku]:
        step = AMLFS_CAPACITY_STEP_TIB[lustre.sku]
        yield Finding(("azure", "managed_lustre", "capacity_tib"), f"{lustre.sku} grows in steps of {step} TiB; use a multiple of {step}")
