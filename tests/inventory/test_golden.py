"""Golden inventories: the contract between the Python and the roles, every example; any change is a reviewable diff."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fabric.inventory import effective_host_vars, onprem_host_vars
from tests.conftest import DATA, EXAMPLES, check_golden
from tests.inventory.golden import inventory_files, plan_of

ONPREM = [e for e in EXAMPLES if plan_of(e).target == "onprem"]


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.parent.name for e in EXAMPLES])
def test_inventory_matches_golden(example: Path, update_golden: bool) -> None:
    golden = DATA / example.parent.name / "golden" / "inventory"
    files = inventory_files(example)
    for path, text in files.items():
        check_golden(golden / path, text, update_golden)
    stale = {p.relative_to(golden).as_posix() for p in golden.rglob("*") if p.is_file()} - set(files)
    if update_golden:
        for path in stale:
            (golden / path).unlink()
        return
    assert not stale, f"{golden}: {sorted(stale)} no longer generated; run ./dev golden and review the diff"


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.parent.name for e in EXAMPLES])
def test_inventory_files_are_byte_identical_across_runs(example: Path) -> None:
    first = inventory_files(example)
    plan_of.cache_clear()
    assert inventory_files(example) == first


@pytest.mark.parametrize("example", ONPREM, ids=[e.parent.name for e in ONPREM])
def test_the_layout_gives_each_host_what_the_plan_says(example: Path) -> None:
    """``hosts.yml`` with ``group_vars/``, combined as Ansible combines them (all, group, host), is ``onprem_host_vars``."""
    files = {path: yaml.safe_load(text) for path, text in inventory_files(example).items()}
    groups = files["hosts.yml"]["all"]["children"]
    children = {name: {**body, "vars": files.get(f"group_vars/{name}.yml", {})} for name, body in groups.items()}
    assert effective_host_vars({"all": {"vars": files["group_vars/all.yml"], "children": children}}) == onprem_host_vars(plan_of(example))
