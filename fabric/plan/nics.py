"""The compute NIC of every RoCE node group, as the plan records it (the rules in fabric.model.nics decide)."""

from __future__ import annotations

from fabric.model.cluster import ClusterSpec
from fabric.model.nics import contract_roce, contract_value, fields_to_set, roce_nics
from fabric.plan.types import NicPlan


def plan_nics(spec: ClusterSpec) -> tuple[NicPlan, ...]:
    """One ``NicPlan`` per RoCE node group whose compute NIC model is known, in definition order.

    Every field the NIC sends is the contract's: the roles set the settable ones, and the rules refused the definition
    if another one differed (fabric.model.nics.check_nic_marking).

    Example:
        >>> from fabric.model import load_cluster
        >>> [(n.group, n.model, n.tool, n.cnp_priority) for n in plan_nics(load_cluster("inventories/onprem-roce/cluster.yaml"))]
        [('gpu', 'connectx-7', 'mlnx', 6)]
    """
    roce = contract_roce(spec)
    plans: list[NicPlan] = []
    for nic in roce_nics(spec):
        model = nic.model
        plans.append(
            NicPlan(
                group=nic.group.group,
                model=model.name,
                vendor=model.vendor,
                tool=model.tool,
                sets=fields_to_set(model, roce),
                roce_dscp=contract_value(roce, "roce_dscp"),
                roce_priority=contract_value(roce, "roce_priority"),
                cnp_dscp=contract_value(roce, "cnp_dscp"),
                cnp_priority=contract_value(roce, "cnp_priority"),
            )
        )
    return tuple(plans)
