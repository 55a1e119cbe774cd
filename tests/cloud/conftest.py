"""Pulumi's mock runtime: the engine and providers are replaced, every registered resource is recorded.

``set_mocks`` runs at import, before any program module creates resources.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pytest
import yaml

from fabric.model import ClusterSpec, load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from tests.conftest import ROOT


@dataclass
class Registered:
    """One resource the program registered: type token, logical name, inputs (parenting is checked through URNs)."""

    typ: str
    name: str
    inputs: dict[str, Any]


@dataclass
class Invoked:
    """One provider function the program called (a data source such as getAmi)."""

    token: str
    args: dict[str, Any]


ROOT_DEVICE = "/dev/sda1"  # what DescribeImages reports for the Ubuntu Deep Learning AMIs
BASTION_AMI = "ami-0al2023x86bastion"


@dataclass
class RecordingMocks(pulumi.runtime.Mocks):
    created: list[Registered] = field(default_factory=list)
    calls: list[Invoked] = field(default_factory=list)
    replaced: dict[str, str] = field(default_factory=dict)  # auto-scaling group → id of the instance that replaced its first
    block_state: str = "active"  # what EC2 reports for a Capacity Block (getCapacityBlockReservation)

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.created.append(Registered(args.typ, args.name, dict(args.inputs)))
        state = dict(args.inputs)
        if args.typ == "aws:ec2/instance:Instance":
            state["privateIp"] = f"10.0.80.{len(self.created) % 250 + 2}"
        if args.typ == "gcp:compute/instance:Instance":
            state["networkInterfaces"] = [
                {**nic, "networkIp": f"10.9.{i}.{len(self.created) % 250 + 2}"} for i, nic in enumerate(state["networkInterfaces"])
            ]
        if args.typ == "gcp:serviceaccount/account:Account":
            state["email"] = f"{state['accountId']}@{state['project']}.iam.gserviceaccount.com"
            state["member"] = f"serviceAccount:{state['email']}"
        # What the providers report once a file system exists (fabric/inventory/shared_fs.py reads these back).
        if args.typ == "aws:fsx/lustreFileSystem:LustreFileSystem":
            state |= {"dnsName": f"fs-{args.name}.fsx.mock.amazonaws.com", "mountName": "mockmnt"}
        if args.typ == "gcp:lustre/instance:Instance":
            state["mountPoint"] = f"10.9.40.2@tcp:/{state['filesystem']}"
        if args.typ == "gcp:filestore/instance:Instance":
            state["networks"] = [{**net, "ipAddresses": ["10.9.40.2"]} for net in state["networks"]]
        if args.typ == "azure-native:storagecache:AmlFilesystem":
            state["clientInfo"] = {"mgsAddress": "10.3.40.4", "lustreVersion": "2.15.7", "mountCommand": "mount -t lustre"}
        state.setdefault("name", args.name)
        state.setdefault("arn", f"arn:mock:{args.name}")
        state.setdefault("selfLink", f"{args.name}-self-link")
        return f"{args.name}-id", state

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        """Answer the data sources the components read, as the providers would."""
        self.calls.append(Invoked(args.token, dict(args.args)))
        if args.token == "aws:ec2/getAmi:getAmi":
            return {"id": "ami", "rootDeviceName": ROOT_DEVICE, "filters": args.args.get("filters")}, []
        if args.token == "aws:ec2/getCapacityBlockReservation:getCapacityBlockReservation":
            return {"id": args.args["id"], "state": self.block_state, "endDate": "2026-12-04T11:30:00Z", "instanceCount": 64}, []
        if args.token == "aws:ssm/getParameter:getParameter":
            return {"id": args.args["name"], "name": args.args["name"], "type": "String", "value": BASTION_AMI}, []
        if args.token == "aws:ec2/getInstances:getInstances":
            # The instances an auto-scaling group launched: as many as its desired capacity, ids unrelated to the group's
            # name or order (a replaced instance: the id given in ``replaced``).
            (group,) = args.args["instanceTags"].values()
            size = int(self.named(group).inputs["desiredCapacity"])
            ids = [f"i-{zlib.crc32(f'{group}/{n}'.encode()):08x}" for n in range(size)]
            if group in self.replaced:
                ids[0] = self.replaced[group]
            return {"id": group, "ids": ids, "privateIps": [f"10.0.81.{n + 10}" for n in range(size)]}, []
        return {}, []

    def of_type(self, typ: str) -> list[Registered]:
        return [r for r in self.created if r.typ == typ]

    def named(self, name: str) -> Registered:
        return next(r for r in self.created if r.name == name)


MOCKS = RecordingMocks()
pulumi.runtime.set_mocks(MOCKS, project="gpufabric", stack="test", preview=False)


def clear_record() -> None:
    """Forget every registration the mock engine recorded."""
    MOCKS.created.clear()
    MOCKS.calls.clear()
    MOCKS.replaced.clear()
    MOCKS.block_state = "active"
    getattr(pulumi.runtime.settings.get_monitor(), "resources", {}).clear()


@pytest.fixture(autouse=True)
def _fresh_record() -> None:
    clear_record()


def example_plan(name: str) -> ClusterPlan:
    return plan_cluster(load_cluster(ROOT / "inventories" / name / "cluster.yaml"))


def edited_plan(name: str, edit: Callable[[dict[str, Any]], None]) -> ClusterPlan:
    """Plan of an example after ``edit`` changed its raw YAML data (every rule still runs)."""
    data = yaml.safe_load((ROOT / "inventories" / name / "cluster.yaml").read_text(encoding="utf-8"))
    edit(data)
    return plan_cluster(ClusterSpec.model_validate(data))


def registered_urns() -> list[str]:
    """URNs the mock monitor saw; a child's URN carries its parent's type (``parent$child``)."""
    monitor = pulumi.runtime.settings.get_monitor()
    return sorted(getattr(monitor, "resources", {}))


_BUILT: dict[str, RecordingMocks] = {}


def built_once(key: str, program: Callable[[], object]) -> RecordingMocks:
    """The record of ``program``, run once per test session: read-only tests of one example share it (keeps tests fast)."""
    if key not in _BUILT:
        pulumi.runtime.test(program)()
        _BUILT[key] = RecordingMocks(created=list(MOCKS.created), calls=list(MOCKS.calls))
        # Leave no trace: a test that builds again after this records only its own build, whether or not an earlier
        # test (another order, another xdist worker) had already built this key.
        clear_record()
    return _BUILT[key]


def register(program: Callable[[], object]) -> RecordingMocks:
    """Run ``program`` under the mock engine until every registration finished; return the record."""
    pulumi.runtime.test(program)()
    return MOCKS
