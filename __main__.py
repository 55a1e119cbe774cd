"""Pulumi program: the cloud cluster and its fabric, built from one cluster definition.

pulumi config set cluster inventories/aws-p5/cluster.yaml
pulumi up
"""

from __future__ import annotations

import pulumi

from fabric.cloud import build_cloud_cluster, cluster_outputs
from fabric.errors import FabricError
from fabric.plan import plan_cluster
from fabric.validate import validate_file

config = pulumi.Config()
definition = config.require("cluster")
try:
    validated = validate_file(definition)
    plan = plan_cluster(validated.spec)
    cluster = build_cloud_cluster(plan, ssh_public_key=config.get("sshPublicKey"))
except FabricError as exc:
    raise pulumi.RunError(f"gpufabric: the cluster definition cannot be built\n{exc}") from None

for warning in validated.warnings:
    pulumi.log.warn(str(warning))
for name, value in cluster_outputs(cluster).items():
    pulumi.export(name, value)
pulumi.export("cluster", plan.name)
pulumi.export("resources_planned", dict(plan.cloud.resources) if plan.cloud else {})
