"""InfiniBand: subnet manager placement and HA, routing, partitions, SHARP and adaptive routing."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from fabric.model.base import Name, SpecModel
from fabric.model.strings import Guid

# ar_updn / ar_ftree: NVIDIA OpenSM's adaptive-routing engines (SHARP Rev 3.3.0, "Setting up NVIDIA SHARP Environment":
# "Tree based topologies: updn, ar_updn, ftree, ar_ftree"); not in upstream opensm (shared/reference/onprem.md section 4).
RoutingEngine = Literal["ftree", "updn", "minhop", "dnup", "lash", "dor", "nue", "dfsssp", "sssp", "ar_updn", "ar_ftree"]
Membership = Literal["full", "limited", "both"]
PortGuid = Guid  # 0x + 16 hex digits, checked before it is ever written (fabric/model/strings.py)


class SmNodeSpec(SpecModel):
    """One subnet-manager instance; the highest priority is master, the others standby."""

    host: Name = Field(description="Hostname of a node (opensm, ufm) or switch name (switch-hosted SM).")
    priority: Annotated[int, Field(ge=0, le=15)]


class SubnetManagerSpec(SpecModel):
    """Where and how the subnet manager runs."""

    kind: Literal["opensm", "switch", "ufm"] = "opensm"
    nodes: tuple[SmNodeSpec, ...] = Field(min_length=1, max_length=8)
    routing_engine: RoutingEngine = "ftree"
    sweep_interval_s: Annotated[int, Field(ge=0, le=3600)] = 10
    lmc: Annotated[int, Field(ge=0, le=7)] = 0
    port_subnets: bool = Field(
        default=False,
        description="opensm hosts with several InfiniBand ports: run one SM per port, each port its own subnet with its own "
        "subnet prefix (0xfe8000000000000N, N the port's order), for ports cabled to separate fabrics. Off (default): such a "
        "host is refused, because opensm binds one port per instance and every port would silently become its own subnet.",
    )
    nvidia_opensm: bool = Field(
        default=False,
        description="kind opensm: the SM hosts run NVIDIA's OpenSM (DOCA-Host / MLNX_OFED, unit opensmd, version 5.x), not the "
        "distribution's upstream 3.3 opensm. Needed for the ar_* routing engines, adaptive routing and SHARP; the opensm role "
        "reads opensm --version and refuses an older one.",
    )


class PartitionMember(SpecModel):
    """A partition member: a whole node group or one host."""

    group: Name | None = None
    host: Name | None = None
    membership: Membership = "full"
    port_guids: tuple[PortGuid, ...] = Field(
        default=(),
        max_length=4096,
        description="Port GUIDs of this member's InfiniBand ports (ibstat 'Port GUID'), for the record; opensm hosts "
        "read them from the nodes. A switch-hosted subnet manager (subnet_manager.kind: switch) does not use them: MLNX-OS "
        "refuses a GUID member ('% Invalid port GUID'), so it is configured with 'member all type full'.",
    )


class PartitionSpec(SpecModel):
    """An InfiniBand partition (PKey)."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")]
    pkey: Annotated[int, Field(ge=0, le=0xFFFF)] = Field(
        description="Partition key, 0x0001-0x7ffe (0x7fff is the default partition). Hex strings accepted. A P_Key is 16 bits "
        "(InfiniBand Architecture Specification vol. 1, 10.9 'Partitioning', the top bit the membership type); the rules narrow it to 0x0001-0x7ffe."
    )
    ipoib: bool = True
    members: tuple[PartitionMember, ...] = Field(min_length=1, max_length=1024)

    @field_validator("pkey", mode="before")
    @classmethod
    def _parse_hex(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                return int(value, 0)
            except ValueError:
                msg = f"pkey {value!r} is not a number; write it as hex, e.g. 0x8001 or 0x0002"
                raise ValueError(msg) from None
        return value


class InfinibandSpec(SpecModel):
    """InfiniBand compute fabric settings."""

    subnet_manager: SubnetManagerSpec
    partitions: tuple[PartitionSpec, ...] = Field(default=(), max_length=128)
    mtu: Literal[2048, 4096] = Field(default=4096, description="IB link MTU (not the IPoIB MTU).")
    sharp: bool = Field(
        default=False,
        description="SHARP in-network reductions: OpenSM enables SHARP on the switches (opensm.conf sharp_enabled 2), the "
        "aggregation manager (sharp_am) runs beside the master SM, and the GPU nodes' NCCL gets NCCL_COLLNET_ENABLE=1 (the "
        "nccl-rdma-sharp plugin). Needs an SM on hosts (NVIDIA OpenSM 5.20+ or UFM), a tree routing engine and a "
        "rail-optimized fabric; see docs/infiniband.md.",
    )
    adaptive_routing: bool = Field(
        default=False,
        description="Adaptive routing: the SM programs AR groups on the switches (routing_engine ar_updn or ar_ftree) and NCCL "
        "gets NCCL_IB_ADAPTIVE_ROUTING=1. Needs an SM on hosts (NVIDIA OpenSM or UFM): the switch-hosted SM has none.",
    )
