"""The inventory of every example as files: what ``tests/data/<example>/golden/inventory/`` holds.

On-prem: the plain form (``onprem_inventory(plan, compact=False)``, the values a host sees, no templates) laid out as
Ansible reads an inventory directory: ``hosts.yml`` (groups, hosts and each host's own variables) and
``group_vars/<group>.yml`` (the ``all`` vars and the values a node group or switch tier shares).
AWS and GCP: ``inventory.yml``, the stack output text (``inventory_yaml(cloud_inventory(...))``, what ``pulumi stack
output ansible_inventory`` prints) from fixed fake addresses (``FAKE_FIRST`` onwards in each subnet the provider reports
an address in). Azure: the ``azure_rm`` inventory source the stack exports
(``NdCluster``, run under the Pulumi mocks of tests/cloud), as ``azure_rm.yml``.
"""

from __future__ import annotations

from functools import cache
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import yaml

from fabric.inventory import cloud_inventory, inventory_yaml, onprem_inventory
from fabric.inventory.shared_fs import shared_fs
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.plan.types import ClusterPlan

FAKE_FIRST = 10
"""The first fake host address in a subnet (``.10`` in a /24): the n-th cloud host of the plan gets ``FAKE_FIRST + n``."""
AZURE_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAtest gpufabric"


@cache
def plan_of(example: Path) -> ClusterPlan:
    return plan_cluster(load_cluster(example))


def inventory_files(example: Path) -> dict[str, str]:
    """Path under ``golden/inventory`` → text, for the example definition ``example`` (``inventories/<name>/cluster.yaml``)."""
    plan = plan_of(example)
    if plan.target == "onprem":
        return directory_layout(onprem_inventory(plan, compact=False))
    if plan.target == "azure":
        return {"azure_rm.yml": azure_source(example)}
    return {"inventory.yml": inventory_yaml(cloud_inventory(plan, fake_addresses(plan), fake_shared_fs(plan)))}


def inventories(example: Path) -> list[dict[str, Any]]:
    """The inventories the example gives hosts, as data: on-prem both forms (plain and compact), else the stack output."""
    plan = plan_of(example)
    if plan.target == "onprem":
        return [onprem_inventory(plan, compact=False), onprem_inventory(plan, compact=True)]
    if plan.target == "azure":
        return [yaml.safe_load(azure_source(example))]
    return [cloud_inventory(plan, fake_addresses(plan), fake_shared_fs(plan))]


def directory_layout(inventory: dict[str, Any]) -> dict[str, str]:
    """``hosts.yml`` with the groups, hosts and host vars; ``group_vars/<group>.yml`` for each group with variables."""
    top = inventory["all"]
    hosts = {"all": {"children": {name: {"hosts": body["hosts"]} for name, body in top["children"].items()}}}
    files = {"hosts.yml": inventory_yaml(hosts), "group_vars/all.yml": inventory_yaml(top["vars"])}
    files |= {f"group_vars/{name}.yml": inventory_yaml(body["vars"]) for name, body in top["children"].items() if body.get("vars")}
    return files


def fake_addresses(plan: ClusterPlan) -> dict[str, dict[str, str]]:
    """Host → subnet → address, as the provider reports them: AWS the primary interface (``inband``), GCP every NIC."""
    cloud = plan.cloud
    assert cloud is not None
    cidr = {s.key: s.cidr for n in cloud.networks for s in n.subnets}
    hosts = [(g, h) for g in cloud.groups for h in g.hostnames]
    found: dict[str, dict[str, str]] = {}
    for n, (group, host) in enumerate(hosts):
        keys = ["inband"] if cloud.provider == "aws" else [nic.subnet for nic in group.nics]
        found[host] = {k: str(IPv4Network(cidr[k])[FAKE_FIRST + n]) for k in keys}
    return found


def fake_shared_fs(plan: ClusterPlan) -> dict[str, str] | None:
    """The file system as the provider reports it once created: the first address of its range (FSx: a DNS name and an
    8-character mount name, as ``DescribeFileSystems`` returns them; the AWS stack sets Lustre 2.15)."""
    cloud = plan.cloud
    assert cloud is not None
    storage = cloud.storage
    if storage is None:
        return None
    address = str(IPv4Network(storage.cidr)[FAKE_FIRST])
    if storage.kind == "fsx-lustre":
        return shared_fs("fsx-lustre", f"fs-0123456789abcdef0.fsx.{cloud.region}.amazonaws.com", "abcdefgh", "2.15")
    return shared_fs(storage.kind, address, "shared" if storage.kind == "filestore" else "lustrefs")


@cache
def azure_source(example: Path) -> str:
    """The ``azure_rm`` inventory source the Azure component exports (its ``ansible_inventory`` output)."""
    import pulumi  # here: Pulumi, the Azure SDK and the mocks only for the Azure example

    from fabric.cloud._args import CloudClusterArgs
    from fabric.cloud.azure_nd import NdCluster
    from tests.cloud.conftest import MOCKS, register  # sets Pulumi's mocks (at import)

    MOCKS.created.clear()  # as tests/cloud's fixture does before each test
    MOCKS.calls.clear()
    getattr(pulumi.runtime.settings.get_monitor(), "resources", {}).clear()
    captured: list[str] = []

    def program() -> None:
        NdCluster("c", CloudClusterArgs(plan=plan_of(example), ssh_public_key=AZURE_KEY)).ansible_inventory.apply(captured.append)

    register(program)
    (text,) = captured
    return text
