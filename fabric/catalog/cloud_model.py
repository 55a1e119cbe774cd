"""The schema of a cloud instance-type data file (``fabric/catalog/data/cloud/<provider>/<type>.yaml``): strict,
frozen models, one per provider, and the loader that turns the files into the catalog's types (``catalog.cloud``).

Sources for every figure are in ``fabric/catalog/data/cloud/README.md``. Every check names the field and the fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from fabric.catalog._load import data_files, load_models
from fabric.catalog.text import GpuModel

CLOUD_DATA = Path(__file__).resolve().parent / "data" / "cloud"

Gpus = Annotated[int, Field(ge=0, le=16, description="GPUs per instance (0: a plain VM).")]
_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
Architecture = Literal["x86_64", "arm64"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=_NAME, description="The provider's instance type name; the file is <name>.yaml.")
    gpus: Gpus
    gpu_model: GpuModel | None = None
    architecture: Architecture = Field(default="x86_64", description="CPU architecture the image must be built for (GB200/GB300: arm64).")

    @model_validator(mode="after")
    def _gpu_model_with_gpus(self) -> _Strict:
        if (self.gpus > 0) != (self.gpu_model is not None):
            msg = "gpu_model is given exactly when gpus > 0"
            raise ValueError(msg)
        return self


class AwsInstanceTypeSpec(_Strict):
    """An EC2 instance type (AWS: "Supported instance types" for EFA, the network-card table)."""

    efa_interfaces: Annotated[int, Field(ge=0, le=32, description="MaximumEfaInterfaces (0: no EFA).")]
    efa_cards: tuple[Annotated[int, Field(ge=0, le=31)], ...] = Field(max_length=32, description="Network-card indexes that carry an EFA interface.")
    primary_card_efa: bool = Field(description="Card 0 also takes an efa-only interface beside the ENA primary.")
    capacity_block: bool = Field(description="capacity-block is a supported usage class.")
    root_volume_gib: Annotated[int, Field(ge=8, le=16384, description="The gp3 root volume the launch template gives the type.")]
    nvlink_domain_gpus: Annotated[int, Field(ge=0, le=576, description="GPUs of one NVLink domain spanning instances (0: the instance).")] = 0

    @model_validator(mode="after")
    def _cards(self) -> AwsInstanceTypeSpec:
        if len(self.efa_cards) != self.efa_interfaces or len(set(self.efa_cards)) != len(self.efa_cards):
            msg = f"efa_cards lists {len(self.efa_cards)} cards for {self.efa_interfaces} efa_interfaces; give each EFA card once"
            raise ValueError(msg)
        if self.primary_card_efa != (0 in self.efa_cards):
            msg = "primary_card_efa is true exactly when card 0 is in efa_cards"
            raise ValueError(msg)
        if self.nvlink_domain_gpus and (not self.gpus or self.nvlink_domain_gpus % self.gpus):
            msg = f"nvlink_domain_gpus {self.nvlink_domain_gpus} is not a whole number of instances of {self.gpus} GPUs; give a multiple of gpus"
            raise ValueError(msg)
        return self


class GcpMachineTypeSpec(_Strict):
    """A Compute Engine machine type (GCP "GPU network bandwidth", Cluster Toolkit blueprints)."""

    gpu_vpcs: Annotated[int, Field(ge=0, le=8, description="Extra gVNIC VPCs for GPUDirect-TCPX/TCPXO.")]
    gvnic_vpcs: Annotated[int, Field(ge=1, le=10, description="Regular gVNIC VPCs including the primary.")]
    rdma_nics: Annotated[int, Field(ge=0, le=8, description="MRDMA NICs on the RDMA VPC.")]
    mtu: Annotated[int, Field(ge=1300, le=8896, description="The MTU the GPU networks must use.")]
    transport: Literal["gpudirect-tcpx", "gpudirect-tcpxo", "gcp-rdma", "none"]
    gpu_topology: str | None = Field(default=None, pattern=r"^\d{1,3}x\d{1,4}$", description="GPU slice shape of a compact policy (A4X: 1x72).")
    flex_start: bool = Field(default=True, description="DWS flex-start can provision the type (false: A4X, G4).")
    reservation_bound: bool = Field(
        default=False, description="Reserved capacity comes as RESERVATION_BOUND VMs (A3 Ultra, A4, A4X): a reservation defaults to calendar mode."
    )

    @model_validator(mode="after")
    def _transport(self) -> GcpMachineTypeSpec:
        tcp = self.gpu_vpcs > 0 and self.rdma_nics == 0  # GPUDirect-TCPX/TCPXO: GPU gVNICs, no RDMA NICs
        fits = {"gpudirect-tcpx": tcp, "gpudirect-tcpxo": tcp, "gcp-rdma": self.rdma_nics > 0 and self.gpu_vpcs == 0}
        if not fits.get(self.transport, self.gpu_vpcs == 0 and self.rdma_nics == 0):
            msg = f"transport {self.transport} does not match gpu_vpcs={self.gpu_vpcs}, rdma_nics={self.rdma_nics}"
            raise ValueError(msg)
        return self


class AzureVmSizeSpec(_Strict):
    """An Azure VM size (Microsoft's size pages: InfiniBand ports and speed, generation)."""

    ib_ports: Annotated[int, Field(ge=0, le=8, description="InfiniBand ports per VM (0: none).")]
    ib_speed_gbps: Literal[0, 100, 200, 400, 800] = Field(description="Speed of each InfiniBand port (0 without IB).")
    gen2_only: bool = Field(description="The size accepts only Generation 2 images.")
    nvlink_domain_gpus: Annotated[int, Field(ge=0, le=576, description="GPUs of one NVLink domain spanning VMs (0: the VM).")] = 0

    @model_validator(mode="after")
    def _speed(self) -> AzureVmSizeSpec:
        if (self.ib_ports > 0) != (self.ib_speed_gbps > 0):
            msg = "ib_speed_gbps is given (non-zero) exactly when ib_ports > 0"
            raise ValueError(msg)
        return self


def load_aws(directory: Path = CLOUD_DATA / "aws") -> dict[str, AwsInstanceTypeSpec]:
    """Every ``aws/<type>.yaml``. Raises ``InputError`` naming file, line and field of every problem."""
    return load_models(data_files(directory), AwsInstanceTypeSpec, where=str(directory))


def load_gcp(directory: Path = CLOUD_DATA / "gcp") -> dict[str, GcpMachineTypeSpec]:
    """Every ``gcp/<type>.yaml``. Raises ``InputError`` naming file, line and field of every problem."""
    return load_models(data_files(directory), GcpMachineTypeSpec, where=str(directory))


def load_azure(directory: Path = CLOUD_DATA / "azure") -> dict[str, AzureVmSizeSpec]:
    """Every ``azure/<size>.yaml``. Raises ``InputError`` naming file, line and field of every problem."""
    return load_models(data_files(directory), AzureVmSizeSpec, where=str(directory))
