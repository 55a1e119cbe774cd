"""The cloud plan of a definition: dispatch to the provider's layout."""

from __future__ import annotations

from fabric.model.cluster import ClusterSpec
from fabric.plan.cloud_aws import plan_aws
from fabric.plan.cloud_azure import plan_azure
from fabric.plan.cloud_gcp import plan_gcp
from fabric.plan.cloud_types import CloudPlan


def plan_cloud(spec: ClusterSpec) -> CloudPlan | None:
    """What the target's Pulumi component will create, or None on-prem.

    Example:
        >>> from fabric.model import load_cluster
        >>> cloud = plan_cloud(load_cluster("inventories/aws-p5/cluster.yaml"))
        >>> [n.kind for n in cloud.groups[0].nics].count("efa-only")
        32
    """
    builders = {"aws": plan_aws, "gcp": plan_gcp, "azure": plan_azure}
    build = builders.get(spec.target)
    return build(spec) if build else None
