"""The floor plan of ``fabric/`` holds: data flows one way (catalog → model → plan → render/export/inventory →
apply/lint/cloud → twin/reports → cli), no import circle, the twin out of the push path, the pure stages free of
device and process I/O, and rooms of a size a reader takes in at once.

Imports are read with ``ast`` from the source, function-level ones included (a lazy import is still an arrow).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

FABRIC = Path(__file__).resolve().parent.parent / "fabric"

LAYERS = {
    "errors": 0,
    "classcode": 0,  # the dataclass methods' compile cache, installed before any other fabric module is imported
    "catalog": 1,
    "model": 2,
    "nodes": 2,  # the ansible-runner wrapper: takes a finished inventory, knows nothing of the plan
    "plan": 3,
    "validate": 4,
    "render": 4,
    "export": 4,
    "inventory": 4,
    "apply": 5,
    "lint": 5,
    "cloud": 5,
    "twin": 6,
    "reports": 6,
    "cli": 7,
    "__init__": 8,  # fabric/__init__.py: the public verbs of every stage
    "__main__": 8,
}
"""Each room of ``fabric/`` and its floor: a module imports only from its own room or from lower floors."""

PURE = ("catalog", "model", "plan", "validate", "render", "export", "inventory", "lint", "reports")
"""Rooms that compute only: no processes, no sessions to devices, no Ansible or Pulumi runs."""
IO_MODULES = ("subprocess", "netmiko", "paramiko", "ansible_runner", "pulumi", "http", "urllib.request")
PURE_FROM_SOCKET = {"inet_ntoa", "inet_aton"}  # address arithmetic in C, no socket opened

MAX_LINES = 400
MAX_MAIN_LINES = 60


def module_name(path: Path) -> str:
    parts = path.relative_to(FABRIC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(FABRIC.rglob("*.py"))}


def imports_of(path: Path) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Every imported module (absolute), with the names taken from it, function-level imports included."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ()
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module, tuple(a.name for a in node.names)


def fabric_imports(name: str) -> set[str]:
    """The ``fabric`` modules ``name`` imports (``from pkg import module`` counts as the module)."""
    found: set[str] = set()
    for module, names in imports_of(MODULES[name]):
        if not module.startswith("fabric"):
            continue
        subs = {f"{module}.{n}" for n in names} & MODULES.keys()
        found |= subs or ({module} if module in MODULES else set())
    return found - {name}


GRAPH = {name: fabric_imports(name) for name in MODULES}


def room(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_circle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_there_is_no_import_circle_in_fabric() -> None:
    assert cycles(GRAPH) == []


def test_every_room_has_a_floor() -> None:
    assert {room(name) for name in MODULES} <= LAYERS.keys(), "a new room of fabric/: give it a floor in LAYERS"


def test_data_flows_one_way_no_import_climbs_to_a_higher_floor() -> None:
    climbs = [
        f"{name} ({room(name)}, floor {LAYERS[room(name)]}) imports {target} ({room(target)}, floor {LAYERS[room(target)]})"
        for name, targets in GRAPH.items()
        for target in sorted(targets)
        if room(target) != room(name) and LAYERS[room(target)] >= LAYERS[room(name)]
    ]
    assert climbs == []


def test_nothing_outside_the_twin_and_the_cli_imports_the_twin() -> None:
    importers = sorted(name for name, targets in GRAPH.items() if room(name) not in {"twin", "cli"} and any(room(t) == "twin" for t in targets))
    assert importers == []


def test_the_push_path_never_imports_the_twin_or_the_cli() -> None:
    apply = {name: targets for name, targets in GRAPH.items() if room(name) == "apply"}
    assert "fabric.apply.push" in apply
    assert sorted((n, t) for n, targets in apply.items() for t in targets if room(t) in {"twin", "cli"}) == []


@pytest.mark.parametrize("stage", PURE)
def test_the_pure_stages_start_no_process_and_open_no_session(stage: str) -> None:
    offending = [
        f"{name} imports {module}" + (f" ({', '.join(names)})" if names else "")
        for name, path in MODULES.items()
        if room(name) == stage
        for module, names in imports_of(path)
        if any(module == m or module.startswith(f"{m}.") for m in IO_MODULES) or (module == "socket" and not set(names) <= PURE_FROM_SOCKET)
    ]
    assert offending == []


def test_no_module_is_longer_than_a_reader_takes_in() -> None:
    long = {name: n for name, path in MODULES.items() if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}, f"split these modules (at most {MAX_LINES} lines)"


def test_the_entry_point_is_a_few_lines() -> None:
    assert len((FABRIC / "__main__.py").read_text(encoding="utf-8").splitlines()) < MAX_MAIN_LINES


def test_the_public_api_is_the_pipeline() -> None:
    import fabric

    for verb in ("load_cluster", "validate_file", "plan_cluster", "render_configs", "onprem_inventory", "candidates", "push_and_record"):
        assert callable(getattr(fabric, verb)), verb
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = fabric.nothing_here  # type: ignore[attr-defined]
