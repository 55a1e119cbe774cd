"""Stage apply (cloud): Pulumi components built from the plan. Importing this package loads the Pulumi SDK."""

from __future__ import annotations

import pulumi

from fabric.cloud._args import CloudClusterArgs
from fabric.cloud.aws_efa import EfaCluster
from fabric.cloud.azure_nd import NdCluster
from fabric.cloud.gcp_a3 import GpuCluster
from fabric.errors import StackConfigError
from fabric.plan.types import ClusterPlan

__all__ = ["CloudClusterArgs", "EfaCluster", "GpuCluster", "NdCluster", "build_cloud_cluster", "cluster_outputs"]

CloudCluster = EfaCluster | GpuCluster | NdCluster


def build_cloud_cluster(plan: ClusterPlan, ssh_public_key: str | None = None) -> CloudCluster:
    """The component for the plan's target, named after the cluster.

    Raises:
        StackConfigError: the plan is for on-prem, or Azure without an SSH public key.
    """
    args = CloudClusterArgs(plan=plan, ssh_public_key=ssh_public_key)
    if plan.target == "aws":
        return EfaCluster(plan.name, args)
    if plan.target == "gcp":
        return GpuCluster(plan.name, args)
    if plan.target == "azure":
        return NdCluster(plan.name, args)
    msg = f"cluster '{plan.name}' targets {plan.target}; pulumi builds cloud clusters, use ansible-playbook and 'python -m fabric push' on-prem"
    raise StackConfigError(msg)


def cluster_outputs(cluster: CloudCluster) -> dict[str, pulumi.Output[object]]:
    """The stack outputs downstream tools read: node addresses (or scale sets) and the Ansible inventory."""
    if isinstance(cluster, NdCluster):
        return {"scale_sets": cluster.scale_sets, "ansible_inventory": cluster.ansible_inventory}
    return {"nodes": cluster.nodes, "ansible_inventory": cluster.ansible_inventory}
