"""Cloud rules that warn rather than refuse: the definition stays valid, the user is told the risk."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.plan import check_cluster
from fabric.validate import validate_file
from tests.conftest import DATA, ROOT

BASE = (DATA / "invalid" / "aws-efa-placement-implicit.yaml").read_text(encoding="utf-8")


def _warnings(tmp_path: Path, aws_extra: str) -> list[tuple[str, str]]:
    text = BASE.replace("  image: ami-0123456789abcdef0\n", f"  image: ami-0123456789abcdef0\n{aws_extra}")
    path = tmp_path / "cluster.yaml"
    path.write_text("\n".join(line for line in text.splitlines() if not line.startswith("# expected_error")), encoding="utf-8")
    findings = check_cluster(validate_file(path).spec)
    assert not [f for f in findings if f.severity == "error"]
    return [(f.dotted_path, f.message) for f in findings if f.severity == "warning"]


@pytest.mark.parametrize(
    ("aws_extra", "path", "words"),
    [
        ("  placement_group: {enabled: false}\n", "aws.placement_group", "without a cluster placement group"),
        (
            "  placement_group: {enabled: true}\n  capacity: {type: capacity-block, reservation_id: cr-0123456789abcdef0}\n",
            "aws.placement_group",
            "InsufficientInstanceCapacity",
        ),
        (
            "  placement_group: {enabled: true}\n  management_access: bastion\n  bastion_ingress: [0.0.0.0/0]\n  allow_public_ssh: true\n",
            "aws.bastion_ingress[0]",
            "internet",
        ),
    ],
    ids=["efa-without-placement", "placement-with-capacity-block", "bastion-open-to-internet"],
)
def test_risky_aws_choice_warns(tmp_path: Path, aws_extra: str, path: str, words: str) -> None:
    warnings = _warnings(tmp_path, aws_extra)
    assert [p for p, m in warnings if p == path and words in m], warnings


def test_reservation_without_placement_group_is_the_quiet_recommended_setup(tmp_path: Path) -> None:
    extra = "  placement_group: {enabled: false}\n  capacity: {type: capacity-block, reservation_id: cr-0123456789abcdef0}\n"
    assert _warnings(tmp_path, extra) == []


def test_azure_group_larger_than_a_scale_set_warns_of_infiniband_islands() -> None:
    findings = check_cluster(validate_file(ROOT / "inventories" / "azure-ndv5" / "cluster.yaml").spec)
    warnings = [(f.dotted_path, f.message) for f in findings if f.severity == "warning"]
    assert (
        "nodes[0].count",
        "120 VMs become 2 InfiniBand islands (100 + 20): InfiniBand does not cross scale sets, so no job spans them over IB; "
        "ask Azure support to raise the limit to 300, then set scale_set_size: 120 and raised_scale_set_limit: true, "
        "or keep each job inside one island",
    ) in warnings


def test_azure_raised_limit_keeps_120_nodes_in_one_island(tmp_path: Path) -> None:
    text = (ROOT / "inventories" / "azure-ndv5" / "cluster.yaml").read_text(encoding="utf-8")
    path = tmp_path / "cluster.yaml"
    path.write_text(text.replace("scale_set_size: 100", "scale_set_size: 120\n  raised_scale_set_limit: true"), encoding="utf-8")
    findings = check_cluster(validate_file(path).spec)
    assert not [f for f in findings if "island" in f.message]
