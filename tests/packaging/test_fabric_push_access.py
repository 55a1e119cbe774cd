"""fabric_push's device access: the definition's, with the module's credentials on top (no device needed)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from fabric.apply.planes import select_devices
from fabric.plan import plan_cluster
from fabric.validate import validate_file
from tests.conftest import ROOT


def module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fabric_push", ROOT / "plugins" / "modules" / "fabric_push.py")
    assert spec is not None
    assert spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def params(**given: object) -> dict[str, object]:
    return {"username": None, "known_hosts": None, "planes": ["oob", "storage", "inband", "compute"], **given}  # as Ansible fills the defaults


def test_definition_access_with_the_module_credentials_on_top(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_SWITCH_PASSWORD", "unused")  # the definition names it; validation wants it set
    validated = validate_file(ROOT / "inventories" / "onprem-roce" / "cluster.yaml")
    plan = plan_cluster(validated.spec)
    access = module()._access  # the seam between the parameters and the apply stage
    plain = access(params(), validated, plan, tmp_path, None)
    assert plan.fabric is not None
    assert sorted(plain) == sorted(d.name for d in select_devices(plan))  # every plane's switches, by default
    assert {s.name for s in plan.fabric.switches} < set(plain)
    first = plain[plan.fabric.switches[0].name]
    assert first.host == plan.fabric.switches[0].mgmt_address.split("/")[0]
    assert first.username == validated.spec.switches.credentials.username
    given = access(params(username="netops", known_hosts="kh"), validated, plan, tmp_path, "/run/key")
    assert {(d.username, d.key_file, d.known_hosts) for d in given.values()} == {("netops", "/run/key", str(Path("kh").resolve()))}
    assert [d.host for d in given.values()] == [d.host for d in plain.values()]
