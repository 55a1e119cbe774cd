"""Cloud instance, machine and VM types with the fabric facts that decide the network layout.

The figures live in data files, ``fabric/catalog/data/cloud/<provider>/<type>.yaml`` (schema:
``fabric/catalog/cloud_model.py``; sources per field: that folder's README). On AWS they are the fixtures against
which DescribeInstanceTypes answers are checked, never a replacement for them. A broken built-in file is a
``CatalogError`` naming the file, the line and the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Literal

from fabric.catalog._load import BuiltinCatalog, read_builtin

# The data files' pydantic schema (``cloud_model``) is imported by the loaders below, on first use of a catalog:
# building its models costs ~40 ms, which an on-prem run never needs.


@dataclass(frozen=True, slots=True)
class AwsInstanceType:
    """An EC2 instance type.

    Attributes:
        efa_interfaces: MaximumEfaInterfaces (0 when EFA is not supported).
        efa_cards: the network-card indexes that carry an EFA interface.
        primary_card_efa: whether card 0 also takes an ``efa-only`` interface next to the ENA primary.
        capacity_block: whether ``capacity-block`` is a supported usage class.
        root_volume_gib: the encrypted gp3 root volume the launch template gives the type (``aws.root_volume_gib`` overrides).
        architecture: the CPU architecture an AMI must be built for (``arm64`` on Grace-based GB200/GB300 types).
        nvlink_domain_gpus: GPUs of one NVLink domain (UltraServer / NVL72: 72), 0 when the domain is the instance itself.
    """

    name: str
    gpus: int
    gpu_model: str | None
    efa_interfaces: int
    efa_cards: tuple[int, ...]
    primary_card_efa: bool
    capacity_block: bool
    root_volume_gib: int
    architecture: str = "x86_64"
    nvlink_domain_gpus: int = 0


@cache
def _aws() -> dict[str, AwsInstanceType]:
    from fabric.catalog.cloud_model import load_aws

    return {
        name: AwsInstanceType(
            t.name,
            t.gpus,
            t.gpu_model,
            t.efa_interfaces,
            tuple(t.efa_cards),
            t.primary_card_efa,
            t.capacity_block,
            t.root_volume_gib,
            t.architecture,
            t.nvlink_domain_gpus,
        )
        for name, t in read_builtin(load_aws).items()
    }


AWS_INSTANCE_TYPES: Mapping[str, AwsInstanceType] = BuiltinCatalog("AWS_INSTANCE_TYPES", _aws)


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
        architecture: the CPU architecture the boot image must be built for (A4X: ``arm64``).
        flex_start: whether DWS flex-start can provision the type (A4X: no).
        reservation_bound: whether reserved capacity of the type comes as RESERVATION_BOUND VMs (A3 Ultra, A4, A4X), so a
            reservation given without a mode means calendar mode.
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
    architecture: str = "x86_64"
    flex_start: bool = True
    reservation_bound: bool = False


@cache
def _gcp() -> dict[str, GcpMachineType]:
    from fabric.catalog.cloud_model import load_gcp

    return {
        name: GcpMachineType(
            t.name,
            t.gpus,
            t.gpu_model,
            t.gpu_vpcs,
            t.gvnic_vpcs,
            t.rdma_nics,
            t.mtu,
            t.transport,
            t.gpu_topology,
            t.architecture,
            t.flex_start,
            t.reservation_bound,
        )
        for name, t in read_builtin(load_gcp).items()
    }


GCP_MACHINE_TYPES: Mapping[str, GcpMachineType] = BuiltinCatalog("GCP_MACHINE_TYPES", _gcp)


@dataclass(frozen=True, slots=True)
class AzureVmSize:
    """An Azure VM size.

    Attributes:
        ib_ports: InfiniBand ports per VM (0 when the size has none).
        ib_speed_gbps: speed of each InfiniBand port.
        gen2_only: the size accepts only Generation 2 images.
        architecture: the CPU architecture the image must be built for (ND GB200/GB300 v6: ``arm64``).
        nvlink_domain_gpus: GPUs of one NVLink domain (NVL72 rack: 72), 0 when the domain is the VM itself.
    """

    name: str
    gpus: int
    gpu_model: str | None
    ib_ports: int
    ib_speed_gbps: int
    gen2_only: bool
    architecture: str = "x86_64"
    nvlink_domain_gpus: int = 0


@cache
def _azure() -> dict[str, AzureVmSize]:
    from fabric.catalog.cloud_model import load_azure

    return {
        name: AzureVmSize(
            t.name,
            t.gpus,
            t.gpu_model,
            t.ib_ports,
            t.ib_speed_gbps,
            gen2_only=t.gen2_only,
            architecture=t.architecture,
            nvlink_domain_gpus=t.nvlink_domain_gpus,
        )
        for name, t in read_builtin(load_azure).items()
    }


AZURE_VM_SIZES: Mapping[str, AzureVmSize] = BuiltinCatalog("AZURE_VM_SIZES", _azure)
