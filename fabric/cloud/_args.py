"""Arguments shared by the cloud components."""

from __future__ import annotations

from dataclasses import dataclass

from fabric.model.cloud import GcpSpec
from fabric.plan.types import ClusterPlan


@dataclass(frozen=True, kw_only=True, slots=True)
class CloudClusterArgs:
    """What a cloud cluster component is built from.

    Attributes:
        plan: the cluster plan; its ``cloud`` part holds every layout decision.
        ssh_public_key: admin public key (Azure scale sets need one; AWS uses SSM and GCP OS Login instead).
    """

    plan: ClusterPlan
    ssh_public_key: str | None = None

    def tags(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """Tags/labels every resource carries: the cluster name, the manager, the user's tags."""
        cloud = self.plan.cloud
        assert cloud is not None
        settings = cloud.settings
        user: dict[str, str] = settings.labels if isinstance(settings, GcpSpec) else settings.tags
        return {"gpufabric-cluster": self.plan.name, "managed-by": "gpufabric", **user, **(extra or {})}
