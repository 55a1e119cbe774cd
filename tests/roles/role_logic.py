"""A role's own Jinja logic without a node: its defaults and vars files, a task's expressions, rendered by Ansible's
templar with the project's filter plugins. What the plan and verify tasks compute from facts and registered results is
asserted here, fast, from the role's files themselves (no copy of their logic)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.plugins.loader import filter_loader
from ansible.template import Templar, trust_as_template

from tests.conftest import ROOT

filter_loader.add_directory(str(ROOT / "plugins" / "filter"))


def trusted(value: Any) -> Any:
    """``value`` with every string marked as a template, as Ansible marks the role's own files."""
    if isinstance(value, str):
        return trust_as_template(value)
    if isinstance(value, list):
        return [trusted(v) for v in value]
    if isinstance(value, dict):
        return {k: trusted(v) for k, v in value.items()}
    return value


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def role_vars(role: str, *vars_files: str) -> dict[str, Any]:
    """defaults/main.yml, vars/main.yml, then ``vars_files`` (e.g. ``Ubuntu-24.yml``), later files winning."""
    merged: dict[str, Any] = {}
    for path in [ROOT / "roles" / role / "defaults" / "main.yml", ROOT / "roles" / role / "vars" / "main.yml"]:
        merged.update(load(path) or {})
    for name in vars_files:
        merged.update(load(ROOT / "roles" / role / "vars" / name) or {})
    return merged


def task(role: str, tasks_file: str, name: str) -> dict[str, Any]:
    """The one task of ``roles/<role>/tasks/<tasks_file>`` whose name starts with ``name``."""
    found = [t for t in load(ROOT / "roles" / role / "tasks" / tasks_file) if str(t.get("name", "")).startswith(name)]
    assert len(found) == 1, (role, tasks_file, name, [t.get("name") for t in found])
    return found[0]


def render(value: Any, variables: Mapping[str, Any]) -> Any:
    """``value`` (a role's expression or structure) rendered with ``variables`` (role files' values are templates)."""
    templar = Templar(loader=DataLoader(), variables={k: trusted(v) for k, v in variables.items()})
    return plain(templar.template(trusted(value)))


def plain(value: Any) -> Any:
    """Ansible's tagged strings and containers as plain Python values."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    for kind in (bool, str, int, float):
        if isinstance(value, kind):
            return kind(value)
    return value


def facts(
    distribution: str, version: str, family: str, *, arch: str = "x86_64", kernel: str = "6.8.0-45-generic", release: str = ""
) -> dict[str, str]:
    """The gathered facts the roles read."""
    return {
        "distribution": distribution,
        "distribution_version": version,
        "distribution_major_version": version.split(".", maxsplit=1)[0],
        "distribution_release": release,
        "os_family": family,
        "architecture": arch,
        "kernel": kernel,
    }
