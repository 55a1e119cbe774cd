"""GCP pre-flight rules: machine layout, placement, reservations, flex-start, Managed Lustre sizes, subnet room."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from fabric.catalog.cloud import GCP_MACHINE_TYPES, GcpMachineType
from fabric.errors import Finding
from fabric.model.cluster import ClusterSpec
from fabric.model.rules.common import gpu_groups, image_architecture, usable_addresses

GCP_PLACEMENT_MAX_VMS = 1500
GCP_SMALLEST_SUBNET = 29  # GCE subnets are /29 or larger
GCP_RESERVED_PER_SUBNET = 4  # network, default gateway, second-to-last (reserved), broadcast (VPC "Reserved IP addresses")
GCP_NO_DISTANCE_ONE = frozenset({"a3-ultragpu-8g", "a4-highgpu-8g", "a4x-highgpu-4g"})
GCP_RESERVATION = re.compile(
    r"^(projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/reservations/)?[a-z]([-a-z0-9]*[a-z0-9])?(/reservationBlocks/[-a-z0-9]+(/reservationSubBlocks/[-a-z0-9]+)?)?$"
)
GCP_FILESTORE_TIERS = ("BASIC_HDD", "BASIC_SSD", "ZONAL", "REGIONAL", "HIGH_SCALE_SSD", "ENTERPRISE")
GCP_LUSTRE_TIERS = ("125", "250", "500", "1000")
# Cluster Toolkit schedmd-slurm-gcp-v6-nodeset dws_flex: "Max duration must be at least than 10 minutes, and cannot be more
# than one week" (600..604800 s); GCP about-flex-start-vms: flex-start VMs run for up to seven days.
FLEX_START_MIN_S = 600
FLEX_START_MAX_S = 604800
# A4X slices: gpu_topology 1x72 = one 72-GPU NVLink domain = 18 VMs of 4 GPUs.
GPUS_PER_SLICE = {"1x72": 72}


class LustreTier:
    """One Managed Lustre performance tier: minimum, step (and the larger step past a threshold) and maximum, in GiB.

    Minimum and step: Managed Lustre "Performance tiers" / "Increase capacity" tables (docs.cloud.google.com/managed-lustre).
    Maximum: Managed Lustre quotas and limits (https://cloud.google.com/managed-lustre/docs/quotas), "System limits", which
    "can't be changed": "125 MBps per TiB: 7,632,000 GiB (7.28 PiB) / 250 MBps per TiB: 3,816,000 GiB (3.64 PiB)" and
    "500 MB/s per TiB: 1,908,000 GiB (1.82 PiB) / 1000 MB/s per TiB: 954,000 GiB (0.91 PiB)" (quoted in the 2026-11 cloud
    audit, W3). With these maxima the larger step past the threshold is never reached (every threshold is above them).
    """

    def __init__(self, minimum: int, step: int, threshold: int, big_step: int, maximum: int) -> None:
        """Record the tier's limits."""
        self.minimum, self.step, self.threshold, self.big_step, self.maximum = minimum, step, threshold, big_step, maximum

    def problem(self, capacity: int) -> str | None:
        """Why ``capacity`` GiB is not a valid size for the tier, or None."""
        if capacity < self.minimum or capacity > self.maximum:
            return f"between {self.minimum:,} and {self.maximum:,} GiB"
        if capacity <= self.threshold and capacity % self.step:
            return f"a multiple of {self.step:,} GiB (up to {self.threshold:,} GiB)"
        if capacity > self.threshold and capacity % self.big_step:
            return f"a multiple of {self.big_step:,} GiB above {self.threshold:,} GiB"
        return None


LUSTRE_TIERS = {
    "1000": LustreTier(9_000, 9_000, 1_530_000, 72_000, 954_000),
    "500": LustreTier(18_000, 18_000, 3_060_000, 144_000, 1_908_000),
    "250": LustreTier(36_000, 36_000, 6_120_000, 288_000, 3_816_000),
    "125": LustreTier(72_000, 72_000, 12_240_000, 72_000, 7_632_000),
}


def check_gcp(spec: ClusterSpec) -> Iterator[Finding]:
    """Machine type ↔ transport and MTU (V12, V14), subnet split (V15), zone (V13), placement (V16, V17), capacity (V19, V20)."""
    gcp = spec.gcp
    if gcp is None or spec.target != "gcp":
        return
    if not gcp.zone.startswith(f"{gcp.region}-"):
        yield Finding(
            ("gcp", "zone"),
            f"zone '{gcp.zone}' is not in region '{gcp.region}'; the RDMA profile and subnets are zonal, pick a {gcp.region}-<letter> zone",
        )
    layouts: set[tuple[int, int, int]] = set()
    for gi, group in gpu_groups(spec, GCP_MACHINE_TYPES):
        machine = GCP_MACHINE_TYPES[group.instance_type or ""]
        layouts.add((machine.gpu_vpcs, machine.gvnic_vpcs, machine.rdma_nics))
        yield from _check_machine(spec, gi, group.count, machine)
    if len(layouts) > 1:
        yield Finding(
            ("nodes",), "GPU groups mix machine types with different network layouts; the cluster has one GPU network layout, use one family"
        )
    machine = next((GCP_MACHINE_TYPES[g.instance_type or ""] for _, g in gpu_groups(spec, GCP_MACHINE_TYPES)), None)
    yield from _check_capacity(spec, machine)
    yield from _check_storage(spec)
    yield from _check_subnet_room(spec)


def _check_machine(spec: ClusterSpec, gi: int, count: int, machine: GcpMachineType) -> Iterator[Finding]:
    gcp = spec.gcp
    assert gcp is not None
    compute = spec.planes.compute
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
    yield from _check_image(gcp.image, machine)
    if gcp.capacity.type == "dws-flex" and not machine.flex_start:
        # about-flex-start-vms (https://cloud.google.com/compute/docs/instances/about-flex-start-vms): "Flex-start VMs
        # support all accelerator-optimized machine types (except A4X and G4) and H4D machine types."
        yield Finding(
            ("gcp", "capacity", "type"),
            f"DWS flex-start cannot provision {machine.name}; use a reservation (reservation-bound), spot or on-demand capacity",
        )
    placed = gcp.placement.enabled
    if placed and count > GCP_PLACEMENT_MAX_VMS:
        yield Finding(("nodes", gi, "count"), f"a compact placement policy holds at most {GCP_PLACEMENT_MAX_VMS} VMs; split the group")
    if placed and gcp.placement.max_distance == 1 and machine.name in GCP_NO_DISTANCE_ONE:
        yield Finding(("gcp", "placement", "max_distance"), f"max_distance 1 is not allowed for {machine.name}; use 2 or 3")
    if machine.gpu_topology is not None:
        # GCP placement-policy-and-workload-policy: "When creating multiple instances for machine series that support
        # partitioning, such as A4X Max and A4X, you must apply a compact placement policy or a workload policy."
        # The rule holds on a reservation too: Cluster Toolkit a4x-vm.yaml sets reservation_name and placement_policy
        # {collocation: COLLOCATED, gpu_topology: "1x72"} on the same VMs; slurm-gcp resume.py attaches its placement group
        # to VMs of a dense reservation.
        slice_vms = GPUS_PER_SLICE[machine.gpu_topology] // machine.gpus
        if not placed:
            yield Finding(
                ("gcp", "placement", "enabled"),
                f"{machine.name} VMs must be created with a compact placement policy (GPU slice {machine.gpu_topology}), "
                "on a reservation too; set placement: {enabled: true}",
            )
        if placed and count > slice_vms:
            yield Finding(
                ("nodes", gi, "count"),
                f"one {machine.gpu_topology} GPU slice holds {slice_vms} {machine.name} VMs, not {count}; use groups of at most {slice_vms}",
            )


def _check_image(image: str, machine: GcpMachineType) -> Iterator[Finding]:
    """An image whose name spells the other CPU architecture (CTK a4x-vm.yaml boots ``…-2404-arm64-with-nvidia-580`` on A4X)."""
    found = image_architecture(image)
    if found is not None and found != machine.architecture:
        yield Finding(
            ("gcp", "image"),
            f"{machine.name} runs {machine.architecture} CPUs, the image '{image}' is built for {found}; use an {machine.architecture} image "
            f"(e.g. family ubuntu-accelerator-2404-{'arm64' if machine.architecture == 'arm64' else 'amd64'}-with-nvidia-580)",
        )


def _check_capacity(spec: ClusterSpec, machine: GcpMachineType | None) -> Iterator[Finding]:
    gcp = spec.gcp
    assert gcp is not None
    capacity = gcp.capacity
    mode = capacity.mode_for(reservation_bound=machine is not None and machine.reservation_bound)
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
    if capacity.reservation_mode in ("specific", "calendar") and capacity.type != "reservation":
        yield Finding(
            ("gcp", "capacity", "reservation_mode"), f"reservation_mode {capacity.reservation_mode} consumes a reservation; set type: reservation"
        )
    if capacity.reservation_mode == "none" and capacity.type == "reservation":
        yield Finding(
            ("gcp", "capacity", "reservation_mode"), "reservation_mode none consumes no reservation; use specific or calendar with type reservation"
        )
    if capacity.max_run_duration_s is not None and capacity.type not in ("dws-flex", "spot"):
        yield Finding(("gcp", "capacity", "max_run_duration_s"), f"max_run_duration_s applies to dws-flex and spot, not {capacity.type}; remove it")
    if capacity.type == "dws-flex":
        yield from _check_flex_duration(capacity.max_run_duration_s)
    sliced = machine is not None and machine.gpu_topology is not None
    if capacity.type == "reservation" and sliced and mode == "specific":
        assert machine is not None
        yield Finding(
            ("gcp", "capacity", "reservation_mode"),
            f"{machine.name} VMs need a compact placement policy, which VMs of a specific (non-dense) reservation cannot take; "
            "use reservation_mode calendar (RESERVATION_BOUND, the AI Hypercomputer reservation)",
        )
    elif capacity.type == "reservation" and gcp.placement.enabled and not sliced:
        yield Finding(("gcp", "placement", "enabled"), _reservation_placement(mode))


def _reservation_placement(mode: str | None) -> str:
    if mode == "calendar":
        # GCP placement-policy-and-workload-policy: resources that consume the same future reservation in calendar mode
        # "are already densely colocated".
        return (
            "VMs of a calendar-mode reservation are already densely co-located and take no placement policy of ours; set placement: {enabled: false}"
        )
    # slurm-gcp resume.py: "vanilla reservations don't support external policies" (only policies attached to the reservation).
    return "VMs consuming a specific reservation use the reservation's own placement policy, never one of ours; set placement: {enabled: false}"


def _check_flex_duration(seconds: int | None) -> Iterator[Finding]:
    path = ("gcp", "capacity", "max_run_duration_s")
    fix = f"set max_run_duration_s between {FLEX_START_MIN_S} and {FLEX_START_MAX_S}"
    if seconds is None:
        yield Finding(path, f"DWS flex-start VMs need a run duration; {fix}")
    elif not FLEX_START_MIN_S <= seconds <= FLEX_START_MAX_S:
        yield Finding(path, f"DWS flex-start runs VMs for 10 minutes to 7 days, not {seconds} s; {fix}")


def _check_storage(spec: ClusterSpec) -> Iterator[Finding]:
    gcp = spec.gcp
    assert gcp is not None
    storage = gcp.storage
    if storage is None:
        return
    tiers = GCP_LUSTRE_TIERS if storage.kind == "managed-lustre" else GCP_FILESTORE_TIERS
    if storage.tier not in tiers:
        what = "per-unit throughput (MB/s/TiB)" if storage.kind == "managed-lustre" else "tier"
        yield Finding(("gcp", "storage", "tier"), f"{storage.kind} {what} '{storage.tier}' is not one of {', '.join(tiers)}")
        return
    if storage.kind == "managed-lustre":
        problem = LUSTRE_TIERS[storage.tier].problem(storage.capacity_gib)
        if problem is not None:
            yield Finding(
                ("gcp", "storage", "capacity_gib"),
                f"Managed Lustre at {storage.tier} MB/s/TiB takes {problem}, not {storage.capacity_gib:,}; resize capacity_gib",
            )


def _check_subnet_room(spec: ClusterSpec) -> Iterator[Finding]:
    """Every subnet a node joins holds one address per node (V10 for GCP): inband, the storage gVNIC, each GPU/RDMA subnet."""
    planes = spec.planes
    nodes = sum(g.count for g in spec.nodes)
    gpu_nodes = sum(g.count for _, g in gpu_groups(spec, GCP_MACHINE_TYPES))
    machine = next((GCP_MACHINE_TYPES[g.instance_type or ""] for _, g in gpu_groups(spec, GCP_MACHINE_TYPES)), None)
    needs = [(("planes", "inband", "cidr"), planes.inband.cidr.prefixlen, nodes, "inband")]
    if machine is not None and machine.gvnic_vpcs >= 2:
        needs.append((("planes", "storage", "cidr"), planes.storage.cidr.prefixlen + 1, nodes, "storage (the nodes' half)"))
    split = (machine.gpu_vpcs or machine.rdma_nics) if machine is not None else 0
    if split and planes.compute.cidr is not None:
        per_subnet = planes.compute.cidr.prefixlen + math.ceil(math.log2(split))
        needs.append((("planes", "compute", "cidr"), per_subnet, gpu_nodes, f"GPU subnet (1 of {split})"))
    for path, prefixlen, count, what in needs:
        if prefixlen > GCP_SMALLEST_SUBNET:
            continue  # too small to exist at all: reported by the split rule
        room = usable_addresses(prefixlen, GCP_RESERVED_PER_SUBNET)
        if count > room:
            yield Finding(path, f"{count} nodes do not fit the {what} subnet (/{prefixlen}, {room} usable in GCP); enlarge the plane")
