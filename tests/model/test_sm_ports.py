"""An opensm host with several InfiniBand ports is refused unless the definition asks for one subnet per port."""

from __future__ import annotations

from pathlib import Path

from fabric.plan import plan_cluster
from fabric.validate import validate_file
from tests.conftest import DATA

SEVERAL = DATA / "invalid" / "sm-several-ib-ports.yaml"


def test_port_subnets_true_accepts_the_same_sm_host(tmp_path: Path) -> None:
    text = SEVERAL.read_text(encoding="utf-8")
    changed = text.replace("    kind: opensm\n", "    kind: opensm\n    port_subnets: true\n", 1)
    assert changed != text
    path = tmp_path / "cluster.yaml"
    path.write_text(changed, encoding="utf-8")
    plan = plan_cluster(validate_file(path).spec)
    assert plan.infiniband is not None
    assert plan.infiniband.subnet_manager.port_subnets
    assert [n.host for n in plan.infiniband.subnet_manager.nodes] == ["sm1", "gpu01"]
