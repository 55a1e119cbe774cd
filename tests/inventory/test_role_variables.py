"""The variable contract between the inventory and the roles: every ``gpufabric_*`` variable a role, playbook or plugin
reads is produced by the inventory of some example (or is a documented user-set override), and every one the
inventory produces is read by something (or is documented as kept for people).

Reads are found where Ansible evaluates them: inside ``{{ }}`` / ``{% %}`` of YAML values and templates, in the
bare expressions of ``when``/``that``/``failed_when``/``changed_when``/``until``, and as string constants in the
Python plugins (``hostvars[host]["gpufabric_interfaces"]``); not in comments, messages' plain text or string
literals inside expressions, and not the filters' names. Produced: every variable of the inventories the examples give
hosts (``tests.inventory.golden.inventories``: on-prem plain and compact, the cloud stack outputs). Variables the
compact form adds are read by the templates it writes itself, which count as readers.

The roles read some structured variables field by field (``RECORDS``): each field the inventory produces must be read
too, through the variable or a role variable that holds it (``network_planes_planes: "{{ gpufabric_planes | ... }}"``,
``{% set plane = network_planes_planes[item.plane] %}``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import EXAMPLES, ROOT
from tests.inventory.golden import inventories

USER_SET: dict[str, str] = {
    "gpufabric_serial": "playbooks' batch size (serial), set with -e or in AWX; a roll-out choice, not a fact of the definition",
    "gpufabric_max_fail_percentage": "playbooks' failure budget per batch, set with -e or in AWX, like gpufabric_serial",
    "gpufabric_definition": "collection playbook fabric_push: the cluster.yaml to push (default: the -i inventory source)",
    "gpufabric_state_dir": "collection playbook fabric_push: where the change record and lock live; must persist, set by the operator",
    "gpufabric_push_parallel": "collection playbook fabric_push: switches pushed at once, an operator's choice",
    "gpufabric_push_offline": "collection playbook fabric_push: --check against the change record without reaching a switch",
    "gpufabric_push_canaries": "collection playbook fabric_push: only each plane's canary (AWX canary job template), an operator's step",
    "gpufabric_rollback_to": "collection playbook fabric_push: the recorded change to return to (AWX rollback survey), an operator's choice",
}
"""Variables the roles and playbooks read that the inventory never sets: the operator sets them (``-e``, AWX extra vars)."""

FOR_PEOPLE: dict[str, str] = {
    "gpufabric_group": "the node group by name, for ad-hoc plays and `ansible-inventory --host` (membership: group_<name>)",
    "gpufabric_role": "the node role by name, for ad-hoc plays and `ansible-inventory --host` (membership: gpu_nodes ...)",
    "gpufabric_nos": "a switch's NOS in the definition's words (ansible_network_os is the collection's), for switch plays",
    "gpufabric_asn": "a switch's BGP ASN, for switch plays and people; no node role needs it",
    "gpufabric_loopback": "a switch's loopback address, for switch plays and people; no node role needs it",
    "gpufabric_instance_type": "cloud: the instance type a host was launched as, for people (the stack decided it)",
    "gpufabric_addresses": "cloud: every address the provider reported (ansible_host is the in-band one), for people",
}
"""Variables the inventory produces that no role reads, kept on purpose: the reason each is worth its bytes."""

UNREAD_FIELDS: dict[str, str] = {}
"""Fields of ``RECORDS`` that no role reads, each with why it stays."""

RECORDS: dict[str, int] = {
    "gpufabric_roce": 0,
    "gpufabric_infiniband": 0,
    "gpufabric_planes": 1,
    "gpufabric_dns": 0,
    "gpufabric_shared_fs": 0,
}
"""Structured variables the roles read field by field → how many keys lead to a record (planes: by plane name)."""

EXPRESSION_KEYS = frozenset({"when", "that", "failed_when", "changed_when", "until"})
BLOCK = re.compile(r"\{\{(.*?)\}\}|\{%(.*?)%\}", re.DOTALL)
LITERAL = re.compile(r"'[^']*'|\"[^\"]*\"")
NAME = re.compile(r"(?<![\w.])gpufabric_\w+\b(?!\s*\()")
YAML_DIRS = ("tasks", "defaults", "vars", "handlers", "meta")


def expressions(path: Path) -> Iterator[str]:
    """The Jinja expressions of a role/playbook YAML file or a template, string literals left in."""
    if path.suffix == ".j2":
        yield from (a or b for a, b in BLOCK.findall(path.read_text(encoding="utf-8")))
        return
    for key, value in _strings(yaml.safe_load(path.read_text(encoding="utf-8")), None):
        if key in EXPRESSION_KEYS and "{{" not in value:
            yield value
        yield from (a or b for a, b in BLOCK.findall(value))


def _strings(data: Any, key: str | None) -> Iterator[tuple[str | None, str]]:
    if isinstance(data, str):
        yield key, data
    elif isinstance(data, dict):
        for k, v in data.items():
            yield from _strings(v, str(k))
    elif isinstance(data, list):
        for v in data:
            yield from _strings(v, key)


def reader_files() -> list[Path]:
    files = [p for d in YAML_DIRS for p in ROOT.glob(f"roles/*/{d}/*.yml")] + list(ROOT.glob("roles/*/templates/*.j2"))
    files += list(ROOT.glob("playbooks/*.yml")) + list(ROOT.glob("collection/playbooks/*.yml"))
    return sorted(files)


def filter_names() -> set[str]:
    """The names the filter plugins register (``FilterModule.filters``: ``| gpufabric_ping_targets``), never variables."""
    names: set[str] = set()
    for path in ROOT.glob("plugins/filter/*.py"):
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(function, ast.FunctionDef) and function.name == "filters":
                for node in ast.walk(function):
                    if isinstance(node, ast.Dict):
                        names |= {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return names


def python_reads() -> dict[str, set[str]]:
    """``gpufabric_*`` string constants in the filter and module plugins (the variables they look up in hostvars)."""
    filters, reads = filter_names(), {}
    for path in sorted(ROOT.glob("plugins/filter/*.py")) + sorted(ROOT.glob("plugins/modules/*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            value = node.value if isinstance(node, ast.Constant) else None
            if isinstance(value, str) and re.fullmatch(r"gpufabric_\w+", value) and value not in filters:
                reads.setdefault(value, set()).add(str(path.relative_to(ROOT)))
    return reads


def read_variables() -> dict[str, set[str]]:
    """Variable → the files that read it."""
    reads = python_reads()
    for path in reader_files():
        for expression in expressions(path):
            for name in NAME.findall(LITERAL.sub("''", expression)):
                reads.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    filters = filter_names()
    return {k: v for k, v in reads.items() if k not in filters}


def _variables(inventory: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    top = inventory.get("all", {})
    yield from top.get("vars", {}).items()
    for body in top.get("children", {}).values():
        yield from (body.get("vars") or {}).items()
        for host_vars in body.get("hosts", {}).values():
            yield from (host_vars or {}).items()
    yield from inventory.get("hostvar_expressions", {}).items()  # the Azure source: set on each VM it finds


def produced() -> dict[str, list[Any]]:
    """Variable → every value an example's inventory gives it."""
    found: dict[str, list[Any]] = {}
    for example in EXAMPLES:
        for inventory in inventories(example):
            for name, value in _variables(inventory):
                found.setdefault(name, []).append(value)
    return found


def template_reads(values: dict[str, list[Any]]) -> set[str]:
    """The variables the compact form's own templates read (``{{ gpufabric_roce_json | from_json }}``)."""
    texts = [v for vs in values.values() for v in vs if isinstance(v, str) and "{{" in v]
    return {name for text in texts for expression in expressions_of(text) for name in NAME.findall(expression)}


def expressions_of(text: str) -> list[str]:
    return [a or b for a, b in BLOCK.findall(text)]


def test_every_variable_a_role_reads_is_produced_or_set_by_the_operator() -> None:
    reads, made = read_variables(), produced()
    missing = {name: sorted(files) for name, files in reads.items() if name not in made and name not in USER_SET}
    assert not missing, f"read, but no example's inventory produces them (and USER_SET does not say why): {missing}"
    assert not set(USER_SET) & set(made), "a USER_SET variable is produced by the inventory: drop it from USER_SET"
    assert set(USER_SET) <= set(reads), f"USER_SET names variables nothing reads: {sorted(set(USER_SET) - set(reads))}"


def test_every_variable_the_inventory_produces_is_read() -> None:
    made = produced()
    readers = set(read_variables()) | template_reads(made)
    unread = sorted(name for name in made if name.startswith("gpufabric_") and name not in readers and name not in FOR_PEOPLE)
    assert not unread, f"produced by the inventory, read by no role, playbook, plugin or inventory template: {unread}"
    assert set(FOR_PEOPLE) <= set(made), f"FOR_PEOPLE names variables nobody produces: {sorted(set(FOR_PEOPLE) - set(made))}"
    assert not set(FOR_PEOPLE) & readers, f"FOR_PEOPLE names variables a role reads: {sorted(set(FOR_PEOPLE) & readers)}"


def aliases(name: str, depth: int) -> dict[str, int]:
    """Role variables holding ``name`` whole (``x: "{{ name | default({}) }}"``) → keys left to the record."""
    found = {name: depth}
    for path in reader_files():
        if path.suffix != ".yml" or path.parent.name not in {"defaults", "vars"}:
            continue
        for key, value in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).items():
            for alias, left in list(found.items()):
                if isinstance(value, str) and re.fullmatch(rf"\{{\{{\s*{alias}\s*(\|\s*default\([^()]*\)\s*)?\}}\}}", value.strip()):
                    found[key] = left
    return found


ACCESS = re.compile(r"\.(\w+)|\[\s*'(\w+)'\s*\]|\[[^\]]*\]")
ATTRIBUTE = re.compile(r"(?:selectattr|rejectattr)\(\s*'(?:value\.)?(\w+)'|attribute\s*=\s*'(?:value\.)?(\w+)'")


def fields_read(name: str, depth: int) -> set[str]:
    """The fields of the record ``name`` leads to that some expression reads (directly, through an alias, or ``set``)."""
    names, fields = aliases(name, depth), set[str]()
    for path in reader_files():
        local = dict(names)
        for expression in expressions(path):
            for alias, left in list(local.items()):
                for m in re.finditer(rf"(?<![\w.]){alias}\b((?:\.\w+|\[[^\]]*\])*)", LITERAL.sub("''", expression)):
                    steps = [a or b or None for a, b in ACCESS.findall(m.group(1))]
                    if len(steps) > left and steps[left] not in {None, "values", "items", "keys"}:
                        fields.add(str(steps[left]))
                    if left > 0 and len(steps) == left and (bound := re.match(r"\s*set\s+(\w+)\s*=", expression)):
                        local[bound.group(1)] = 0  # {% set plane = planes[item.plane] %}
                    if len(steps) < left or (left == 0 and not steps) or "values" in steps or "dict2items" in expression:
                        fields |= {a or b for a, b in ATTRIBUTE.findall(expression)}
    return fields


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_every_field_of_a_record_the_roles_read_is_read(name: str) -> None:
    depth = RECORDS[name]
    values = [v for v in produced().get(name, []) if isinstance(v, dict)]  # the compact form's templates aside
    records = [r for value in values for r in ([value] if depth == 0 else value.values()) if isinstance(r, dict)]
    assert records, f"no example produces {name}"
    made = {f"{name}.{k}" for record in records for k in record}
    read = {f"{name}.{k}" for k in fields_read(name, depth)}
    unread = sorted(made - read - set(UNREAD_FIELDS))
    assert not unread, f"fields the inventory produces that no role reads: {unread}"
    stale = sorted(f for f in UNREAD_FIELDS if f.startswith(f"{name}.") and (f not in made or f in read))
    assert not stale, f"UNREAD_FIELDS lists fields that are read now or no longer produced: {stale}"
