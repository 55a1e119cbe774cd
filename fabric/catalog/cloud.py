"""Cloud instance, machine and VM types with the fabric facts that decide the network layout.

Sources: ``shared/reference/cloud.md`` sections 3.2 (GCP), 4.1 (AWS) and 5.1 (Azure). On AWS these are the
fixtures against which DescribeInstanceTypes answers are checked, never a replacement for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class AwsInstanceType:
    """An EC2 instance type.

    Attributes:
        efa_interfaces: MaximumEfaInterfaces (0 when EFA is not supported).
        efa_cards: the network-card indexes that carry an EFA interface.
        primary_card_efa: whether card 0 also takes an ``efa-only`` interface next to the ENA primary.
        capacity_block: whether ``capacity-block`` is a supported usage class.
        root_volume_gib: the encrypted gp3 root volume the launch template gives the type (``aws.root_volume_gib`` overrides).
    """

    name: str
    gpus: int
    gpu_model: str | None
    efa_interfaces: int
    efa_cards: tuple[int, ...]
    primary_card_efa: bool
    capacity_block: bool
    root_volume_gib: int


# Root volumes are a project choice, not a provider limit: GPU nodes get room for the Deep Learning AMI (its snapshot is
# already ~100 GiB) plus the enroot/pyxis container cache of a few NGC images; plain nodes the usual 100 GiB.
GPU_ROOT_GIB = 512
PLAIN_ROOT_GIB = 100


def _p(name: str, gpu: str, efa: int, *, card0_efa: bool = True) -> AwsInstanceType:
    cards = tuple(range(efa)) if card0_efa else tuple(range(1, efa + 1))
    return AwsInstanceType(name, 8, gpu, efa, cards, card0_efa, capacity_block=True, root_volume_gib=GPU_ROOT_GIB)


def _plain(name: str, *, efa: bool = False) -> AwsInstanceType:
    return AwsInstanceType(name, 0, None, 1 if efa else 0, (0,) if efa else (), efa, capacity_block=False, root_volume_gib=PLAIN_ROOT_GIB)


AWS_INSTANCE_TYPES: dict[str, AwsInstanceType] = {
    t.name: t
    for t in (
        _p("p4d.24xlarge", "A100-40GB", 4),
        _p("p4de.24xlarge", "A100-80GB", 4),
        _p("p5.48xlarge", "H100-80GB", 32),
        _p("p5e.48xlarge", "H200-141GB", 32),
        _p("p5en.48xlarge", "H200-141GB", 16),
        _p("p6-b200.48xlarge", "B200-180GB", 8),
        _p("p6-b300.48xlarge", "B300-288GB", 16, card0_efa=False),
        _plain("c6in.32xlarge", efa=True),
        _plain("m7i.2xlarge"),
        _plain("m7i.4xlarge"),
        _plain("c7i.2xlarge"),
        _plain("t3.medium"),
    )
}


@dataclass(frozen=True, slots=True)
class GcpMachineType:
    """A GCE machine type.

    Attributes:
        gpu_vpcs: extra gVNIC VPCs for GPUDirect-TCPX/TCPXO (A3 High/Edge 4, A3 Mega 8).
        gvnic_vpcs: regular gVNIC VPCs including the primary (A3 Ultra / A4: 2).
        rdma_nics: MRDMA NICs on the RDMA VPC (A3 Ultra / A4: 8, A4X: 4).
        mtu: the MTU the GPU networks must use.
        transport: the compute-plane transport the type implies.
        gpu_topology: the GPU slice shape of a compact placement policy for slice-based families (A4X: one 1x72 NVLink
            domain = 18 VMs of 4 GPUs), else None.
    """

    name: str
    gpus: int
    gpu_model: str | None
    gpu_vpcs: int
    gvnic_vpcs: int
    rdma_nics: int
    mtu: int
    transport: Literal["gpudirect-tcpx", "gpudirect-tcpxo", "gcp-rdma", "none"]
    gpu_topology: str | None = None


GCP_MACHINE_TYPES: dict[str, GcpMachineType] = {
    t.name: t
    for t in (
        GcpMachineType("a3-highgpu-8g", 8, "H100-80GB", 4, 1, 0, 8244, "gpudirect-tcpx"),
        GcpMachineType("a3-edgegpu-8g", 8, "H100-80GB", 4, 1, 0, 8244, "gpudirect-tcpx"),
        GcpMachineType("a3-megagpu-8g", 8, "H100-80GB", 8, 1, 0, 8244, "gpudirect-tcpxo"),
        GcpMachineType("a3-ultragpu-8g", 8, "H200-141GB", 0, 2, 8, 8896, "gcp-rdma"),
        GcpMachineType("a4-highgpu-8g", 8, "B200-180GB", 0, 2, 8, 8896, "gcp-rdma"),
        # A4X: "four NVIDIA ConnectX-7 (CX-7) network interface cards (NICs) and two Titanium NICs" (GCP gpu-network-bandwidth);
        # Cluster Toolkit examples/machine-learning/a4x-highgpu-4g/a4x-vm.yaml attaches a4x_net_0 and a4x_net_1 (gVNIC,
        # MTU 8896) plus 4 MRDMA subnets of one RoCE VPC; the compact policy takes gpuTopology "Specifies the shape of the
        # GPU slice, in slice based GPU families eg. A4X" (Compute API ResourcePolicyGroupPlacementPolicy).
        GcpMachineType("a4x-highgpu-4g", 4, "GB200", 0, 2, 4, 8896, "gcp-rdma", gpu_topology="1x72"),
        GcpMachineType("n2-standard-8", 0, None, 0, 1, 0, 1460, "none"),
        GcpMachineType("n2-standard-16", 0, None, 0, 1, 0, 1460, "none"),
        GcpMachineType("c3-standard-22", 0, None, 0, 1, 0, 1460, "none"),
    )
}


@dataclass(frozen=True, slots=True)
class AzureVmSize:
    """An Azure VM size.

    Attributes:
        ib_ports: InfiniBand ports per VM (0 when the size has none).
        ib_speed_gbps: speed of each InfiniBand port.
        gen2_only: the size accepts only Generation 2 images.
    """

    name: str
    gpus: int
    gpu_model: str | None
    ib_ports: int
    ib_speed_gbps: int
    gen2_only: bool


AZURE_VM_SIZES: dict[str, AzureVmSize] = {
    s.name: s
    for s in (
        AzureVmSize("Standard_ND96asr_A100_v4", 8, "A100-40GB", 8, 200, gen2_only=True),
        AzureVmSize("Standard_ND96amsr_A100_v4", 8, "A100-80GB", 8, 200, gen2_only=True),
        AzureVmSize("Standard_ND96isr_H100_v5", 8, "H100-80GB", 8, 400, gen2_only=True),
        AzureVmSize("Standard_ND96isr_H200_v5", 8, "H200-141GB", 8, 400, gen2_only=True),
        AzureVmSize("Standard_ND96isr_MI300X_v5", 8, "MI300X-192GB", 8, 400, gen2_only=True),
        AzureVmSize("Standard_D4s_v5", 0, None, 0, 0, gen2_only=False),
        AzureVmSize("Standard_D8s_v5", 0, None, 0, 0, gen2_only=False),
        AzureVmSize("Standard_E8s_v5", 0, None, 0, 0, gen2_only=False),
    )
}
