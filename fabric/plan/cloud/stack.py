"""Which fabric software a cloud node group needs so that NCCL does not fall back to TCP sockets.

One name per software stack; the ``cloud_fabric`` role installs by it, ``export nccl`` writes its environment, and the
cloud stacks' inventory carries it per host (``gpufabric_gpu_stack``, with ``gpufabric_gpu_nics`` the count the role
verifies on the live node). Sources, per stack:

* ``efa``: AWS EFA user guide (EFA installer with libfabric and aws-ofi-nccl on a custom AMI); the NIC count is the
  group's EFA interfaces.
* ``tcpxo``: A3 Mega, GPUDirect-TCPXO: Google's "Enable GPUDirect-TCPXO" (Cluster Toolkit a3-mega guide): RxDM,
  the ``import-helper`` (dmabuf) kernel module and the NCCL FasTrak plugin; 8 GPU gVNICs.
* ``gib``: A3 Ultra, A4, A4X: Google's NCCL/gIB ("Optimize cluster networking by using NCCL/gIB"): the gIB NCCL
  plugin over the RDMA NICs (8 MRDMA; A4X 4).
* ``nd-ib``: Azure ND with NVIDIA GPUs and InfiniBand: the VM's IB ports and the NCCL topology file of the Azure HPC
  image.
* ``none``: no GPU fabric (login, storage, plain VMs, or a GPU type whose stack this project does not install: A3
  High/Edge GPUDirect-TCPX).
"""

from __future__ import annotations

from typing import Literal

from fabric.catalog.cloud import AWS_INSTANCE_TYPES, AZURE_VM_SIZES, GCP_MACHINE_TYPES
from fabric.plan.cloud.types import CloudGroupPlan

GpuStack = Literal["efa", "tcpxo", "gib", "nd-ib", "none"]


def gpu_stack(provider: str, group: CloudGroupPlan) -> tuple[GpuStack, int]:
    """The fabric software of one cloud node group and the number of fabric NICs each of its nodes must show.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> cloud = plan_cluster(load_cluster("inventories/gcp-a3mega/cluster.yaml")).cloud
        >>> [(g.group, gpu_stack(cloud.provider, g)) for g in cloud.groups]
        [('gpu', ('tcpxo', 8)), ('login', ('none', 0))]
    """
    if group.role != "gpu":
        return "none", 0
    if provider == "aws":
        efa = sum(1 for n in group.nics if n.kind in ("efa", "efa-only"))
        return ("efa", efa) if efa else ("none", 0)
    if provider == "gcp":
        return _gcp(group.instance_type)
    size = AZURE_VM_SIZES.get(group.instance_type) if provider == "azure" else None
    if size is None or not size.ib_ports or (size.gpu_model or "").startswith("MI"):
        return "none", 0  # AMD Instinct (MI300X) ND sizes run RCCL, not NCCL: nothing here for them
    return "nd-ib", size.ib_ports


def _gcp(machine_type: str) -> tuple[GpuStack, int]:
    machine = GCP_MACHINE_TYPES.get(machine_type)
    if machine is not None and machine.transport == "gpudirect-tcpxo":
        return "tcpxo", machine.gpu_vpcs
    if machine is not None and machine.transport == "gcp-rdma":
        return "gib", machine.rdma_nics
    return "none", 0  # A3 High/Edge (GPUDirect-TCPX) and plain VMs: nothing this role installs


# 8-GPU SXM boards of these GPUs are HGX boards whose GPUs meet through NVSwitch, and a VM that owns the whole board runs
# NVIDIA Fabric Manager before CUDA can use it (Fabric Manager User Guide R2.3, "Overview": NVSwitch-based HGX A100/H100/
# H200/B200 systems need FM; node-audit.md C4, R-fm23). GB200 (A4X, 4 GPUs per VM) is an NVL72 rack whose switch trays
# the VM does not own; AMD Instinct is not NVIDIA.
_NVSWITCH_MODELS = ("A100", "H100", "H200", "B200", "B300")


def gpu_board(provider: str, group: CloudGroupPlan) -> tuple[int, bool]:
    """The GPUs each node of ``group`` must show, and whether they sit on an NVSwitch board (Fabric Manager's).

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> cloud = plan_cluster(load_cluster("inventories/aws-p5/cluster.yaml")).cloud
        >>> [(g.group, gpu_board(cloud.provider, g)) for g in cloud.groups]
        [('gpu', (8, True)), ('login', (0, False))]
    """
    catalog = {"aws": AWS_INSTANCE_TYPES, "gcp": GCP_MACHINE_TYPES, "azure": AZURE_VM_SIZES}.get(provider, {})
    machine = catalog.get(group.instance_type)
    if group.role != "gpu" or machine is None:
        return 0, False
    model = machine.gpu_model or ""
    return machine.gpus, machine.gpus == 8 and model.startswith(_NVSWITCH_MODELS)
