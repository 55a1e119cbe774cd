"""Per-rail traffic: recording rules that sum each rail's compute ports over all GPU nodes, and the rail imbalance alert.

On a rail-optimized fabric NCCL keeps each ring and tree on one rail (``NCCL_CROSS_NIC=0``), so under a collective
every rail carries about the same traffic. A rail far below (a leaf dropping, ports down, a NIC missing from
``NCCL_IB_HCA``) or far above the mean (traffic crossing rails) is the fabric's problem, not the job's. Metric:
node_exporter's infiniband collector, ``node_infiniband_port_data_transmitted_bytes_total{device="mlx5_N"}`` (the
HCA's ``port_xmit_data``, ``collector/infiniband_linux.go``), which counts RDMA on InfiniBand and RoCE alike; the
netdev byte counters do not see RDMA traffic, which bypasses the kernel's network stack.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import NamedTuple

from fabric.plan.compute.planes import plane_of
from fabric.plan.types import ClusterPlan, HostInterface

RAIL_RECORD = "gpufabric:rail_transmit_bytes:rate5m"
RAIL_LOW, RAIL_HIGH = 0.5, 1.5  # of the mean rail: half or one and a half times is no measurement noise under NCCL
RAIL_BUSY_BYTES_PER_S = 125_000_000  # judge only when the mean rail moves >= 1 Gb/s (an idle fabric is balanced)
RAIL_IMBALANCE_FOR = "15m"  # longer than one collective's phases, shorter than a training run


class Rail(NamedTuple):
    """A rail: its compute plane (0 on a one-plane fabric, k on plane k of a multi-plane one) and its number there."""

    plane: int
    number: int

    def __str__(self) -> str:
        """``3`` on a one-plane fabric (as before planes existed), ``p2-3`` on plane 2."""
        return f"p{self.plane}-{self.number}" if self.plane else str(self.number)

    def labels(self) -> dict[str, str]:
        """Prometheus labels of the rail's series: ``rail``, and ``plane`` on a multi-plane fabric."""
        return {"plane": f"p{self.plane}", "rail": str(self.number)} if self.plane else {"rail": str(self.number)}

    def selector(self) -> str:
        """The PromQL label matchers of :meth:`labels`."""
        return ",".join(f'{k}="{v}"' for k, v in self.labels().items())


def port_rail(port: HostInterface) -> Rail | None:
    """The rail of a compute port (None where it has none)."""
    return Rail(plane_of(port.switch) or 0, port.rail) if port.rail is not None else None


def rail_devices(plan: ClusterPlan) -> dict[Rail, list[str]]:
    """Rail → the RDMA devices (HCAs) that carry it on the GPU nodes (several where groups differ in hardware). A
    multi-plane fabric's rails count per plane: rail 1 of plane 1 and of plane 2 are different leaves.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> rail_devices(plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml")))[Rail(0, 1)]
        ['mlx5_0']
    """
    rails: dict[Rail, set[str]] = defaultdict(set)
    for node in plan.nodes:
        if node.role == "gpu":
            for port in node.interfaces:
                rail = port_rail(port) if port.plane == "compute" and port.hca is not None else None
                if rail is not None:
                    rails[rail].add(port.hca or "")
    return {rail: sorted(names) for rail, names in sorted(rails.items())}


def rail_rules(plan: ClusterPlan) -> list[dict[str, object]]:
    """One recording rule per rail, then ``RailImbalance``; empty with fewer than two rails."""
    rails = rail_devices(plan)
    if len(rails) < 2:
        return []
    rules: list[dict[str, object]] = [
        {
            "record": RAIL_RECORD,
            "expr": f'sum(rate(node_infiniband_port_data_transmitted_bytes_total{{device=~"{"|".join(re.escape(d) for d in devices)}"}}[5m]))',
            "labels": rail.labels(),
        }
        for rail, devices in rails.items()
    ]
    mean = f"scalar(avg({RAIL_RECORD}))"
    rules.append(
        {
            "alert": "RailImbalance",
            "expr": (
                f"({RAIL_RECORD} < {RAIL_LOW} * {mean} or {RAIL_RECORD} > {RAIL_HIGH} * {mean})"
                f" and on() (avg({RAIL_RECORD}) > {RAIL_BUSY_BYTES_PER_S})"
            ),
            "for": RAIL_IMBALANCE_FOR,
            "labels": {"severity": "warning"},
            "annotations": {
                "summary": ("plane {{ $labels.plane }} " if any(r.plane for r in rails) else "")
                + "rail {{ $labels.rail }} carries {{ $value | humanize }}B/s, outside 0.5-1.5x the mean rail: "
                "a rail leaf, its ports or a NIC is off (or traffic crosses rails)"
            },
        }
    )
    return rules
