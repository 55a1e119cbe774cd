"""Cloud from other programs: a Pulumi program outside the checkout imports EfaCluster from the installed wheel.

The program is another team's: its own project name, its own mocks (the Pulumi engine and the AWS provider replaced,
nothing else), gpufabric used only through its public imports (``fabric.load_cluster``, ``fabric.plan_cluster``,
``fabric.cloud.EfaCluster`` and ``CloudClusterArgs``).
"""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from tests.conftest import ROOT
from tests.packaging.conftest import ToolVenv

pytestmark = pytest.mark.slow

PROGRAM = '''"""Another team's Pulumi program: gpufabric's EfaCluster imported from the installed package, run under mocks."""

import json
import sys

import pulumi


class Mocks(pulumi.runtime.Mocks):
    """The engine and the AWS provider: resources echo their inputs, data sources answer as AWS would."""

    def __init__(self) -> None:
        self.types: list[str] = []
        self.inputs: dict[str, dict] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        self.types.append(args.typ)
        self.inputs[args.name] = dict(args.inputs)
        state = dict(args.inputs)
        if args.typ == "aws:ec2/instance:Instance":
            state["privateIp"] = f"10.0.80.{len(self.types) % 250 + 2}"
        return f"{args.name}-id", state

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict, list]:
        if args.token == "aws:ec2/getAmi:getAmi":
            return {"id": "ami-0123", "rootDeviceName": "/dev/sda1"}, []
        if args.token == "aws:ec2/getInstances:getInstances":  # the instances an auto-scaling group launched
            (group,) = args.args["instanceTags"].values()
            size = int(self.inputs[group]["desiredCapacity"])
            return {"id": group, "ids": [f"i-{n:04d}" for n in range(size)], "privateIps": [f"10.0.81.{n + 10}" for n in range(size)]}, []
        return {}, []


mocks = Mocks()
pulumi.runtime.set_mocks(mocks, project="other-team", stack="dev", preview=False)

from fabric import load_cluster, plan_cluster  # noqa: E402 - after the mocks, as a Pulumi program under test
from fabric.cloud import CloudClusterArgs, EfaCluster  # noqa: E402

cluster = EfaCluster("training", CloudClusterArgs(plan=plan_cluster(load_cluster(sys.argv[1]))))


@pulumi.runtime.test
def report() -> pulumi.Output:
    def show(values: list) -> None:
        nodes, inventory = values
        print(json.dumps({"nodes": nodes, "inventory": inventory, "types": sorted(set(mocks.types))}, default=str))

    return pulumi.Output.all(cluster.nodes, cluster.ansible_inventory).apply(show)


report()
'''


def test_another_pulumi_program_builds_an_efa_cluster_from_the_installed_package(tool_venv: ToolVenv) -> None:
    work = tool_venv.work / "other-program"
    work.mkdir()
    (work / "program.py").write_text(PROGRAM, encoding="utf-8")
    shutil.copy(ROOT / "inventories" / "aws-p5" / "cluster.yaml", work / "cluster.yaml")
    done = tool_venv.run("python", "program.py", "cluster.yaml", cwd=work)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert "gpufabric:aws:EfaCluster" in result["types"]
    assert {"aws:ec2/launchTemplate:LaunchTemplate", "aws:ec2/instance:Instance"} <= set(result["types"])
    gpu = [name for name in result["nodes"] if name.startswith("p5-")]
    assert len(gpu) == 16
    assert all(result["nodes"][name]["inband"].startswith("10.0.80.") for name in gpu)
    inventory = yaml.safe_load(result["inventory"])  # the stack output is the YAML text of an Ansible inventory
    assert sorted(inventory["all"]["children"]["gpu_nodes"]["hosts"]) == sorted(gpu)
