"""The cloud plan of a definition: dispatch to the provider's layout."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fabric.model.cluster import ClusterSpec
    from fabric.plan.cloud.types import CloudPlan


def plan_cloud(spec: ClusterSpec) -> CloudPlan | None:
    """What the target's Pulumi component will create, or None on-prem.

    Example:
        >>> from fabric.model import load_cluster
        >>> cloud = plan_cloud(load_cluster("inventories/aws-p5/cluster.yaml"))
        >>> [n.kind for n in cloud.groups[0].nics].count("efa-only")
        32
    """
    if spec.target == "aws":  # each provider's planner (and the cloud models) imported only for its own target
        from fabric.plan.cloud.aws import plan_aws

        return plan_aws(spec)
    if spec.target == "gcp":
        from fabric.plan.cloud.gcp import plan_gcp

        return plan_gcp(spec)
    if spec.target == "azure":
        from fabric.plan.cloud.azure import plan_azure

        return plan_azure(spec)
    return None
