"""plan.json as a stream: the same data as pydantic's dump of the plan, one record per line, and no string can break it."""

from __future__ import annotations

import dataclasses
import io
import json

import pytest
from pydantic import TypeAdapter

from fabric.model import load_cluster
from fabric.model.cloud import AwsSpec, AzureSpec, GcpSpec
from fabric.plan import plan_cluster
from fabric.plan.cloud.types import CloudPlan
from fabric.plan.serialize import plan_to_json, write_plan_json
from fabric.plan.types import ClusterPlan, Link
from tests.conftest import EXAMPLES


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.parent.name for e in EXAMPLES])
def test_streamed_json_equals_pydantics_dump(example: object) -> None:
    plan = plan_cluster(load_cluster(str(example)))
    # The plan's modules name the cloud types for annotations only (an on-prem run does not import them), so they are
    # given here, where pydantic resolves what a module leaves unnamed.
    cloud = {"CloudPlan": CloudPlan, "AwsSpec": AwsSpec, "GcpSpec": GcpSpec, "AzureSpec": AzureSpec}
    adapter: TypeAdapter[ClusterPlan] = TypeAdapter(ClusterPlan)
    assert adapter.rebuild(_types_namespace=cloud) is not False
    assert json.loads(plan_to_json(plan)) == adapter.dump_python(plan, mode="json")


def test_one_line_per_cable() -> None:
    plan = plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml"))
    assert plan.fabric is not None
    text = plan_to_json(plan)
    cables = [line for line in text.splitlines() if line.lstrip().startswith('{"kind": ')]
    assert plan.oob is not None
    storage = sum(len(net.links) for net in plan.storage)
    assert storage
    assert len(cables) == len(plan.fabric.links) + len(plan.oob.links) + storage  # the OOB and storage cables are records too
    first = json.loads(cables[0].strip().rstrip(","))
    assert list(first) == [f.name for f in dataclasses.fields(Link)]
    assert (first["a_device"], first["b_device"]) == (plan.fabric.links[0].a_device, plan.fabric.links[0].b_device)


def test_a_string_that_looks_like_a_record_boundary_stays_in_its_record() -> None:
    links = (Link("host", "leaf1", "x}, {y", "gpu1", "eth0", 400, 3), Link("host", "leaf1", "e2", "gpu2", "eth0", 400, 3))
    stream = io.StringIO()
    write_plan_json(links, stream)  # type: ignore[arg-type] - any plan object streams the same way
    assert [row["a_port"] for row in json.loads(stream.getvalue())] == ["x}, {y", "e2"]
    assert stream.getvalue().count("\n") == 4  # "[", two records, "]" each on its own line
