"""Load-balancing intent of the compute fabric: ECMP hash fields, adaptive routing, and the NCCL queue pairs to match.

Rendered per NOS where the NOS and its release have the feature, refused with the reason where not
(``fabric.plan.load_balancing``). Left out, nothing is rendered and each switch keeps its NOS's own hash.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from fabric.model.base import SpecModel

HashField = Literal["source-ip", "destination-ip", "ip-protocol", "source-port", "destination-port", "bth-destination-qp"]
FIVE_TUPLE: tuple[HashField, ...] = ("source-ip", "destination-ip", "ip-protocol", "source-port", "destination-port")


class LoadBalancingSpec(SpecModel):
    """How the fabric spreads RoCE flows over equal paths, and how many flows NCCL opens per connection."""

    ecmp_hash: tuple[HashField, ...] | None = Field(
        default=None,
        min_length=1,  # hashing on no field would send every flow one way: an empty list is a definition error
        max_length=6,
        description="Header fields the switches hash on. The 5-tuple covers RoCE v2's UDP source port, which the NIC "
        "varies per queue pair; bth-destination-qp hashes the InfiniBand transport header's destination QP where the NOS "
        "can. Rendered on Cumulus, SONiC (SWITCH_HASH) and NX-OS (ip load-sharing); default: each NOS's own hash, not rendered.",
    )
    adaptive_routing: bool = Field(
        default=False,
        description="Per-packet adaptive routing / dynamic load balancing on the fabric links (Spectrum-4 adaptive "
        "routing on Cumulus, DLB on EOS); refused where the NOS, its release or the switch's ASIC lacks it.",
    )
    nccl_qps_per_connection: Annotated[int, Field(ge=1, le=128)] | None = Field(
        default=None,
        description="NCCL_IB_QPS_PER_CONNECTION: queue pairs (so UDP source ports, so ECMP paths) per connection. "
        "Default: NCCL's own (1), not exported.",
    )
    nccl_split_data_on_qps: bool | None = Field(
        default=None,
        description="NCCL_IB_SPLIT_DATA_ON_QPS: split each message over the queue pairs (true) or send whole messages "
        "round-robin (false, NCCL's default since 2.20). Default: not exported.",
    )


NO_LOAD_BALANCING = LoadBalancingSpec()
"""The intent of a definition that states none: nothing rendered, nothing exported (immutable, so shared)."""
