"""Validate a SONiC ``config_db.json`` against SONiC's own YANG models (sonic-yang-models), with libyang.

What a real switch does before ``config apply-patch`` or a YANG-checked ``config reload``: every table needs a model,
every field a leaf, and the data must satisfy types, patterns, ``mandatory``, ``must``, ``when`` and leafrefs.

The translation follows sonic-yang-mgmt (``sonic_yang_ext.py``): table ``T`` of module ``sonic-x`` lives at
``/sonic-x:sonic-x/T/<list>``; a ``|``-separated key goes to the list whose key has as many leaves; a key that names a
container (``DEVICE_METADATA|localhost``) fills that container; "map" tables (``DSCP_TO_TC_MAP``) put each name's
entries into the inner list; leaf-lists given as comma-separated strings are split; numbers become JSON numbers where
RFC 7951 wants them.

libyang 2 stops at the first error, so ``check_config_db`` records it, drops the offending entry and validates again,
until the rest is clean: every problem is reported once, as ``TABLE|key: field: message``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import libyang

YANG_ROOT = Path(__file__).resolve().parent.parent / "data" / "sonic-yang"  # one directory per release branch (ABOUT.md)
DEFAULT_RELEASE = "202411"  # fabric/catalog/releases.py: the SONiC default
_NUMBERS = {libyang.Type.INT8, libyang.Type.INT16, libyang.Type.INT32, libyang.Type.UINT8, libyang.Type.UINT16, libyang.Type.UINT32}
_LOCATION = re.compile(r"(?:Data location|Schema location|Path) \"?([^\"]+)\"?")


@dataclass(frozen=True, slots=True)
class YangProblem:
    """One problem: where in config_db (table, key, field) and what libyang or the translation says."""

    table: str
    key: str
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.table}|{self.key}" if self.key else self.table
        return f"{where}: {self.field or '(entry)'}: {self.message}"


@dataclass(frozen=True, slots=True)
class _Table:
    module: str
    top: str
    node: libyang.SContainer


def yang_dir(release: str) -> Path:
    """The models of sonic-buildimage branch ``release``; a release with no vendored branch is an error, not a fallback."""
    directory = YANG_ROOT / release
    if not (directory / "SOURCE").is_file():
        have = sorted(p.name for p in YANG_ROOT.iterdir() if (p / "SOURCE").is_file())
        msg = f"no SONiC YANG models vendored for release {release!r} under {YANG_ROOT} (have {have}); see ABOUT.md there"
        raise ValueError(msg)
    return directory


@cache
def _context(release: str) -> tuple[libyang.Context, dict[str, _Table]]:
    directory = yang_dir(release)
    ctx = libyang.Context(str(directory))
    tables: dict[str, _Table] = {}
    names = [file.stem for file in sorted(directory.glob("*.yang"))]
    for name in names:
        ctx.load_module(name)
    for name in names:  # only once every module is in: loading one recompiles the others and frees their nodes
        module = ctx.get_module(name)
        for top in module.children():
            if isinstance(top, libyang.SContainer):
                for table in top.children():
                    if isinstance(table, libyang.SContainer):
                        tables[table.name()] = _Table(module.name(), top.name(), table)
    return ctx, tables


def _json_value(node: libyang.SLeaf | libyang.SLeafList, value: str) -> object:
    """A config_db string as RFC 7951 JSON wants it for this leaf's type."""
    bases = _bases(node.schema_path(), node)
    if bases & _NUMBERS and re.fullmatch(r"-?\d+", value):
        return int(value)
    if libyang.Type.BOOL in bases and value in ("true", "false"):
        return value == "true"
    return value


@cache
def _bases(path: str, node: libyang.SLeaf | libyang.SLeafList) -> frozenset[int]:
    del path  # the cache key
    kind = node.type()
    if kind.base() == libyang.Type.UNION:
        return frozenset(t.base() for t in kind.union_types())
    target = kind.leafref_type() if kind.base() == libyang.Type.LEAFREF else None
    if target is not None:
        return frozenset({target.base()})
    return frozenset({kind.base()})


def _keys(node: libyang.SList) -> tuple[libyang.SLeaf, ...]:
    return _keys_at(node.schema_path(), node)


@cache
def _keys_at(path: str, node: libyang.SList) -> tuple[libyang.SLeaf, ...]:
    del path  # the cache key
    return tuple(k for k in node.keys() if isinstance(k, libyang.SLeaf))  # noqa: SIM118 - SList.keys() is the list key, not a dict view


def _children(node: libyang.SNode) -> dict[str, libyang.SNode]:
    return _children_at(node.schema_path(), node)


@cache
def _children_at(path: str, node: libyang.SNode) -> dict[str, libyang.SNode]:
    del path  # the cache key: nodes of one context are looked up by their schema path
    return {c.name(): c for c in node.children()}  # pyright: ignore[reportAttributeAccessIssue] - containers and lists have children


def _entry(table: str, key: str, fields: dict[str, Any], schema: libyang.SList | libyang.SContainer, problems: list[YangProblem]) -> dict[str, Any]:
    """One config_db entry as YANG JSON; fields no leaf knows become problems (SONiC refuses them: 'All Keys are not parsed')."""
    children = _children(schema)
    out: dict[str, Any] = {}
    inner = children.get(table)
    for name, value in fields.items():
        node = children.get(name)
        if isinstance(node, libyang.SLeafList):
            items = value if isinstance(value, list) else [v for v in str(value).split(",") if v]
            out[name] = [_json_value(node, str(v)) for v in items]
        elif isinstance(node, libyang.SLeaf):
            out[name] = _json_value(node, str(value))
        elif isinstance(inner, libyang.SList):
            key_leaf = _keys(inner)[0].name()
            value_leaf = next(n for n in _children(inner) if n != key_leaf)
            value_node = _children(inner)[value_leaf]
            assert isinstance(value_node, libyang.SLeaf)
            out.setdefault(table, []).append({key_leaf: _json_value(_keys(inner)[0], name), value_leaf: _json_value(value_node, str(value))})
        else:
            problems.append(YangProblem(table, key, name, f"no leaf '{name}' in the YANG model of {table}"))
    return out


Translation = tuple[dict[str, Any], dict[tuple[str, str], libyang.SNode], list["YangProblem"]]


def to_yang(config_db: dict[str, Any], release: str = DEFAULT_RELEASE) -> Translation:
    """YANG JSON for ``config_db``, the schema node (list or container) of every entry, and translation problems."""
    _, tables = _context(release)
    data: dict[str, Any] = {}
    nodes: dict[tuple[str, str], libyang.SNode] = {}
    problems: list[YangProblem] = []
    for table, entries in config_db.items():
        spec = tables.get(table)
        if spec is None:
            problems.append(YangProblem(table, "", "", f"no YANG model has this table on SONiC {release}; SONiC refuses it"))
            continue
        container = data.setdefault(f"{spec.module}:{spec.top}", {}).setdefault(table, {})
        children = _children(spec.node)
        for key, fields in entries.items():
            parts = key.split("|")
            node = children.get(key)
            if isinstance(node, libyang.SContainer):
                container[key] = _entry(table, key, fields, node, problems)
                nodes[table, key] = node
                continue
            lists = [c for c in children.values() if isinstance(c, libyang.SList) and len(_keys(c)) == len(parts)]
            if not lists:
                problems.append(YangProblem(table, key, "", f"no list of {table} takes a key of {len(parts)} part(s)"))
                continue
            found = lists[0]
            item = {k.name(): _json_value(k, p) for k, p in zip(_keys(found), parts, strict=True)}
            item.update(_entry(table, key, fields, found, problems))
            container.setdefault(found.name(), []).append(item)
            nodes[table, key] = found
    return data, nodes, problems


def _first_error(config_db: dict[str, Any], release: str, data: dict[str, Any] | None = None) -> str | None:
    """libyang's first complaint about ``config_db`` (its translation problems aside), or None when it is valid."""
    ctx, _ = _context(release)
    if data is None:
        data, _, _ = to_yang(config_db, release)
    try:
        tree = ctx.parse_data_mem(json.dumps(data), "json", strict=True, validate_present=True)
    except libyang.LibyangError as exc:
        return str(exc).removeprefix("failed to parse data tree: ")
    if tree is not None:
        tree.free()
    return None


def _strip(path: str) -> str:
    return re.sub(r"[a-z0-9_-]+:", "", path)


def _culprits(db: dict[str, Any], nodes: dict[tuple[str, str], libyang.SNode], message: str, release: str) -> list[tuple[str, str, str]]:
    """The (table, key, field) entries a libyang message is about (libyang 2 gives no data path, so it is derived)."""
    if m := re.match(r'Mandatory node "([^"]+)" instance does not exist', message):
        leaf = m.group(1)
        return [
            (t, k, leaf)
            for (t, k), node in nodes.items()
            if leaf not in db[t][k] and isinstance(child := _children(node).get(leaf), libyang.SLeaf) and child.mandatory()
        ]
    if m := re.match(r'Invalid leafref value "([^"]*)" - no target instance "([^"]+)"', message):
        value, target = m.group(1), "/".join(_strip(m.group(2)).split("/")[-2:])
        found: list[tuple[str, str, str]] = []
        for (t, k), node in nodes.items():
            inner = _children(node).get(t)
            if isinstance(inner, libyang.SList):
                key_leaf = _keys(inner)[0]
                if key_leaf.type().base() == libyang.Type.LEAFREF and value in db[t][k]:
                    found.append((t, k, value))
            for name, given in _with_keys(node, k, db[t][k]).items():
                child = _children(node).get(name)
                if isinstance(child, (libyang.SLeaf, libyang.SLeafList)) and child.type().base() == libyang.Type.LEAFREF:
                    values = given if isinstance(given, list) else str(given).split(",")
                    if value in values and _strip(child.type().leafref_path() or "").endswith(target):
                        found.append((t, k, name))
        return found
    if m := re.match(r'Invalid union value "([^"]*)" - no matching subtype found', message):
        return [
            (t, k, n)
            for (t, k), node in nodes.items()
            for n, v in _with_keys(node, k, db[t][k]).items()
            if str(v) == m.group(1) and isinstance(c := _children(node).get(n), libyang.SLeaf) and c.type().base() == libyang.Type.UNION
        ]
    tokens = set(re.findall(r'"([^"]+)"', message))
    found = [(t, k, n) for (t, k), node in nodes.items() for n, v in _with_keys(node, k, db[t][k]).items() if str(v) in tokens or n in tokens]
    if len(found) <= 1:
        return found
    for candidate in found[:20]:  # the first whose removal changes libyang's first complaint
        trial = json.loads(json.dumps(db))
        del trial[candidate[0]][candidate[1]]
        if _first_error(trial, release) != message:
            return [candidate]
    return []


def _repair(db: dict[str, Any], node: libyang.SNode, where: tuple[str, str, str], repaired: set[tuple[str, str, str]]) -> None:
    """Let the next pass see past one problem: drop a bad optional field, stand in for a missing mandatory one, or drop
    the entry (only then do entries that point at it fail too)."""
    table, key, field = where
    entry = db[table].get(key)
    if entry is not None and isinstance(_children(node).get(table), libyang.SList) and field in entry:
        del entry[field]  # one name of a map table (CABLE_LENGTH|AZURE: {Ethernet0: 5m})
        return
    child = _children(node).get(field)
    if entry is None or where in repaired or not isinstance(child, libyang.SLeaf) or (isinstance(node, libyang.SList) and child.is_key()):
        db[table].pop(key, None)
        return
    repaired.add(where)
    if field in entry and not child.mandatory():
        del entry[field]
    elif field not in entry:
        bounds = re.match(r"(\d+)", child.type().range() or "")
        entry[field] = bounds.group(1) if bounds else "0"
    else:
        db[table].pop(key, None)


def _with_keys(node: libyang.SNode, key: str, fields: dict[str, Any]) -> dict[str, Any]:
    """An entry's fields plus its key leaves (``MGMT_INTERFACE|eth0|10.0.0.1/24`` → name, ip_prefix)."""
    if not isinstance(node, libyang.SList):
        return fields
    return {**{k.name(): p for k, p in zip(_keys(node), key.split("|"), strict=True)}, **fields}


def check_config_db(config_db: dict[str, Any], *, release: str = DEFAULT_RELEASE, limit: int = 200) -> list[YangProblem]:
    """Every YANG problem of a config_db document against the models of SONiC ``release``; empty when it would accept it.

    Example:
        >>> [str(p) for p in check_config_db({"PORT": {"Ethernet0": {"speed": "400000"}}}, release="202405")]
        ['PORT|Ethernet0: lanes: Mandatory node "lanes" instance does not exist.']
    """
    db: dict[str, Any] = json.loads(json.dumps(config_db))
    _, nodes, problems = to_yang(db, release)
    for p in problems:  # the next passes see the rest: an unknown field goes, an entry or table no model takes goes
        if p.field:
            db[p.table][p.key].pop(p.field, None)
        elif p.key:
            db[p.table].pop(p.key, None)
        else:
            db.pop(p.table, None)
    repaired: set[tuple[str, str, str]] = set()
    dropped: dict[str, str] = {}
    for _ in range(limit):
        data, nodes, _ = to_yang(db, release)
        message = _first_error(db, release, data)
        if message is None:
            break
        culprits = _culprits(db, nodes, message, release)
        if not culprits:
            problems.append(YangProblem("?", "", "", f"{message} (could not tell which entry; fix it and run again)"))
            break
        value = re.match(r'Invalid (?:leafref|union) value "([^"]*)"', message)
        cause = dropped.get(value.group(1)) if value else None
        note = f" (follows from {cause}, refused above)" if cause else ""
        for table, key, field in culprits:
            problems.append(YangProblem(table, key, field, message + note))
            _repair(db, nodes[table, key], (table, key, field), repaired)
            if key not in db[table]:
                dropped.setdefault(key.split("|")[-1], f"{table}|{key}")
    return sorted(set(problems), key=lambda p: (p.table, p.key, p.field, p.message))
