"""plan.json as a stream: the same data as pydantic's dump of the plan, one record per line, and no string can break it."""

from __future__ import annotations

import dataclasses
import io
import json

import pytest
from pydantic import TypeAdapter

from fabric.model import load_cluster
from fabric.model.cloud import AwsSpec, AzureSpec, GcpSpec
from fabric.plan import _json_columns, plan_cluster, serialize
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


def _expected(records: tuple[Link, ...]) -> str:
    """The layout written by the standard encoder, record by record: what the orjson path must match byte for byte."""
    return "[\n " + ",\n ".join(json.dumps(dataclasses.asdict(r)) for r in records) + "\n]\n"


def _links(*ports: object, speed: object = 400) -> tuple[Link, ...]:
    return tuple(Link("leaf1", p, "gpu1", "eth0", speed, 3, "host") for p in ports)  # type: ignore[arg-type] - hostile values


def _written(records: tuple[Link, ...]) -> str:
    stream = io.StringIO()
    write_plan_json(records, stream)  # type: ignore[arg-type] - any plan object streams the same way
    return stream.getvalue()


def test_plain_records_take_the_column_path_and_keep_the_bytes() -> None:
    links = _links("Ethernet1/1", "Ethernet2/1", "x")
    assert _json_columns.record_texts(links, serialize._field_names(Link) or ()) is not None
    assert _written(links) == _expected(links)


@pytest.mark.parametrize(
    ("ports", "speed"),
    [
        (("::1", "e2"), 400),  # a string that starts with ':' ("key":":...)
        (("e1,", "e2"), 400),  # one that ends with ',' (...,"...)
        (('a,"b":c', "e2"), 400),  # a quote: escaped by both encoders, refused
        (("x},{y", "e2"), 400),  # a record boundary inside a string
        (("Süd", "e2"), 400),  # non-ASCII: json escapes it, orjson does not
        (("tab\there", "e2"), 400),  # a control character
        (("del\x7f", "e2"), 400),  # DEL: json escapes it, orjson does not
        (("e1", "e2"), 1e16),  # a float: 1e+16 against orjson's 1e16
        (("e1", "e2"), 1 << 70),  # beyond 64 bits: orjson refuses it
        (("e1", "e2"), True),  # a bool where an int belongs: the same text either way
        (("e1", "e2"), [400]),  # a list inside a record
        (("back\\slash", "e2"), 400),  # a backslash: escaped by the standard encoder
    ],
)
def test_records_orjson_cannot_match_are_left_to_the_standard_encoder(ports: tuple[str, ...], speed: object) -> None:
    links = _links(*ports, speed=speed)
    assert _written(links) == _expected(links)
    assert json.loads(_written(links)) == [dataclasses.asdict(link) for link in links]
