"""Cloud types users ask for that the planners refuse on purpose, each with the reason and what would lift it.

A type here is not in the catalog (``fabric/catalog/data/cloud/``): the rules name the reason instead of "unknown type".
"""

from __future__ import annotations

from collections.abc import Mapping

REFUSED_TYPES: Mapping[str, Mapping[str, str]] = {
    "aws": {},
    "gcp": {
        # Cluster Toolkit examples/machine-learning/a4x-maxgpu-4g-metal/a4xmax-bm-slurm-blueprint.yaml
        # (GoogleCloudPlatform/cluster-toolkit @ 11299f6): machine_type a4x-maxgpu-4g-metal, guest_accelerator
        # nvidia-gb300 x 4, eight additional networks "nic_type: MRDMA / stack_type: IPV6_ONLY" all on
        # "default-subnet-1-...-rdma-net", built_image_family "Needs to be built with MOFED".
        "a4x-maxgpu-4g-metal": (
            "A4X Max (bare metal, 4 x GB300) puts its 8 MRDMA NICs on one IPv6-only subnet of the RDMA network and boots "
            "a custom image built with MOFED (Cluster Toolkit a4xmax-bm-slurm-blueprint.yaml); the GCP planner builds one "
            "IPv4 subnet per RDMA NIC and has no IPv6-only subnets yet. Use a4x-highgpu-4g (GB200) or deploy A4X Max "
            "with Cluster Toolkit"
        ),
    },
    "azure": {
        # The size name exists (azhpc-images tests standard_nd128isr_gb300_v6), but no Microsoft size page for
        # ND GB300 v6 was readable; only announcements ("800 Gb/s per GPU", Quantum-X800), which do not give the
        # InfiniBand ports per VM the scale-set plan and NCCL topology need. Searched again for issue 31 (2026-11-27):
        # the only new source is .NET Aspire's AKS size list (microsoft/aspire AksNodeVmSizes.cs: "Standard_ND128isr_GB300_v6
        # -- 128 vCPUs -- 864 GB RAM -- Premium SSD"), which names no GPU, InfiniBand port or speed either.
        "Standard_ND128isr_GB300_v6": (
            "ND GB300 v6 has no Microsoft size page read here (InfiniBand ports and speed per VM unknown; the "
            "announcements speak only of 800 Gb/s per GPU on Quantum-X800), so its InfiniBand layout cannot be planned. "
            "Use Standard_ND128isr_NDR_GB200_v6, or add azure/Standard_ND128isr_GB300_v6.yaml from the size page"
        ),
    },
}
