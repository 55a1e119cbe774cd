"""Issue 32: a user-facing three-tier example in inventories/ (goldens come from the harnesses that take every example:
plan, inventory, exports and, for on-prem examples, render)."""

from __future__ import annotations

from fabric.lint import lint_configs
from fabric.lint.parse.qos import CONFIG_FILE
from fabric.render import render_configs
from fabric.validate import validate_file
from tests.conftest import DATA, EXAMPLES
from tests.render.conftest import ONPREM_EXAMPLES


def test_a_three_tier_example_validates_renders_lints_and_has_goldens() -> None:
    three = [e for e in EXAMPLES if e.parent.name == "three-tier"]
    assert three, "inventories/three-tier/cluster.yaml"
    validated = validate_file(three[0])
    assert not validated.warnings
    fabric = validated.plan.fabric
    assert fabric is not None
    assert fabric.super_spines, "a third tier"
    files = render_configs(validated.plan)
    configs = {s.name: files.get(f"switches/{s.name}/{CONFIG_FILE.get(s.nos, '')}") for s in fabric.switches}
    assert all(configs.values())
    assert lint_configs(validated.plan, configs) == []
    assert "three-tier" in ONPREM_EXAMPLES  # the render goldens pick up every on-prem example
    golden = DATA / "three-tier" / "golden"
    assert (golden / "plan.json").is_file()
    assert list((golden / "render" / "switches").glob("superspine*/*"))
