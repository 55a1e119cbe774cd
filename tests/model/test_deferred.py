"""The cloud blocks are deferred: an on-prem run never builds the cloud models, and a cloud block is checked as strictly as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fabric.errors import InputError
from fabric.model.cloud import AwsSpec
from fabric.model.loader import parse_cluster

ROOT = Path(__file__).resolve().parents[2]
CLOUD_MODULES = ("fabric.model.cloud", "fabric.catalog.cloud_model", "fabric.plan.cloud.types", "fabric.plan.cloud.aws")
BAD_AWS = """name: x
target: aws
aws: {region: 5, availabilty_zones: [us-east-1a], image: {ssm_parameter: /aws/x}}
planes: {compute: {transport: efa, cidr: 10.0.0.0/16}, storage: {cidr: 10.1.0.0/16}, inband: {cidr: 10.2.0.0/16}, oob: {cidr: 10.3.0.0/16}}
nodes: [{group: gpu, role: gpu, count: 2, instance_type: p5.48xlarge}]
"""


def test_an_onprem_render_imports_no_cloud_model(tmp_path: Path) -> None:
    script = (
        "import sys; from fabric.__main__ import main\n"
        f"assert main(['render', 'inventories/onprem-roce/cluster.yaml', '-o', {str(tmp_path)!r}]) == 0\n"
        f"print(sorted(m for m in {CLOUD_MODULES!r} if m in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert run.stdout.strip().splitlines()[-1] == "[]"


def test_a_cloud_definition_gets_the_cloud_model() -> None:
    spec, _ = parse_cluster((ROOT / "inventories" / "aws-p5" / "cluster.yaml").read_text(encoding="utf-8"), "aws-p5")
    assert isinstance(spec.aws, AwsSpec)
    assert spec.gcp is None
    assert spec.azure is None


def test_a_bad_cloud_block_is_located_and_explained() -> None:
    with pytest.raises(InputError) as caught:
        parse_cluster(BAD_AWS, "bad.yaml")
    found = {f.dotted_path: (f.line, f.message) for f in caught.value.findings}
    assert found["aws.region"] == (3, "5 is not text; write a string (quote it if YAML reads it as a number, a date or true/false)")
    line, message = found["aws.availabilty_zones"]
    assert line == 3
    assert message.startswith("unknown key 'availabilty_zones'; did you mean 'availability_zones'? allowed keys: allow_public_ssh,")
    assert found["aws.availability_zones"] == (3, "required key 'availability_zones' is missing; add it")


def test_python_input_is_lax_and_json_input_strict() -> None:
    """``model_validate`` (Python, as tests build specs) coerces as pydantic does; the loader's JSON path does not."""
    text = (ROOT / "inventories" / "aws-p5" / "cluster.yaml").read_text(encoding="utf-8")
    spec, _ = parse_cluster(text, "aws-p5")
    data = spec.model_dump()
    data["aws"]["fsx_lustre"]["capacity_gib"] = "4800"
    assert type(spec).model_validate(data).aws == spec.aws
    with pytest.raises(InputError, match=r"aws\.fsx_lustre\.capacity_gib"):
        parse_cluster(text.replace("capacity_gib: 4800", "capacity_gib: '4800'"), "aws-p5")
