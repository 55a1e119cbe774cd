"""The exception tree: every exception class of gpufabric lives in ``fabric/errors.py``, and its docstring draws that tree.

Three checks keep the drawing honest (issue 27: it drew three classes nothing raised and missed eight that were real):
- no module of ``fabric/`` but ``errors.py`` defines an exception class (read with ``ast``, so no module is imported);
- no ``raise`` in ``fabric/`` names a class that is neither in ``errors.py``, a builtin exception nor an allowed foreign one;
- the drawing's names and parent edges are exactly the classes ``errors.py`` defines and their ``__bases__``.

Each scanner is also run on a stray module written to a temporary directory, so the checks are seen to fail.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import re
from pathlib import Path

import pytest

import fabric.errors
from fabric.__main__ import main
from fabric.errors import FabricError

ERRORS_PY = Path(fabric.errors.__file__)
FABRIC = ERRORS_PY.parent
BUILTIN_EXCEPTIONS = frozenset(name for name, obj in vars(builtins).items() if isinstance(obj, type) and issubclass(obj, BaseException))
# Foreign exceptions fabric raises itself, by the dotted name it raises them with: argparse's way to refuse an option value.
# pulumi.RunError: Pulumi's documented clean stop of a program ("terminating a program abruptly, but resulting in a clean
# exit rather than the usual verbose unhandled error logic", pulumi/sdk/python/lib/pulumi/errors.py).
FOREIGN_RAISED = frozenset({"argparse.ArgumentTypeError", "pulumi.RunError"})
# A base class from a library that names an exception by the usual suffix (yaml's ComposerError, hier_config's ...Error).
EXCEPTION_SUFFIX = re.compile(r"(Error|Exception|Warning|Exit|Interrupt)$")
# One class of the drawing: the tree's connectors, then ``Name(Base, Base)``, then the note.
DRAWN = re.compile(r"^    (?P<indent>(?:│   |    )*)(?P<branch>[├└]── )?(?P<name>[A-Z]\w*)\((?P<bases>[\w, ]+)\)(?:\s|$)")


def _modules(root: Path) -> list[Path]:
    return sorted(root.rglob("*.py"))


def _dotted(node: ast.expr) -> str | None:
    """``a.b.C`` for a name or an attribute chain; None for anything else (a call, a subscript)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Each name a module binds by ``from x import Y as Z``: Z -> Y, so an alias of an error is still seen."""
    return {alias.asname: alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names if alias.asname}


def _project_errors() -> frozenset[str]:
    return frozenset(name for name, obj in vars(fabric.errors).items() if inspect.isclass(obj) and issubclass(obj, BaseException))


def stray_classes(root: Path, errors_py: Path) -> list[str]:
    """Every exception class defined under ``root`` outside ``errors_py``, as ``path:line: Name(bases)``.

    A class is an exception when a base is a builtin exception, a class of ``fabric.errors``, a name with an exception's
    suffix, or (to a fixpoint) another class found so.
    """
    classes: list[tuple[Path, ast.ClassDef, list[str]]] = []
    for path in _modules(root):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        aliases = _aliases(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = [aliases.get(d, d).rsplit(".", 1)[-1] for d in map(_dotted, node.bases) if d]
                classes.append((path, node, bases))
    known = set(BUILTIN_EXCEPTIONS | _project_errors())
    grew = True
    while grew:
        grew = False
        for _, node, bases in classes:
            if node.name not in known and any(b in known or EXCEPTION_SUFFIX.search(b) for b in bases):
                known.add(node.name)
                grew = True
    return [
        f"{path.relative_to(root.parent)}:{node.lineno}: {node.name}({', '.join(bases)})"
        for path, node, bases in classes
        if node.name in known and path != errors_py
    ]


def stray_raises(root: Path) -> list[str]:
    """Every ``raise X`` / ``raise X(...)`` under ``root`` whose class X is not in ``fabric.errors``, builtin or allowed.

    Only class-like names (CapWords) are judged: ``raise exc`` re-raises a caught exception, and ``raise _usage_error(...)``
    raises what a factory returns (an InputError), which is checked where that factory builds it.
    """
    allowed = BUILTIN_EXCEPTIONS | _project_errors() | FOREIGN_RAISED
    found: list[str] = []
    for path in _modules(root):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        aliases = _aliases(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            raised = _dotted(node.exc.func if isinstance(node.exc, ast.Call) else node.exc)
            if raised is None or not raised.rsplit(".", 1)[-1][:1].isupper():
                continue
            name = aliases.get(raised, raised)
            if name.startswith("fabric.errors."):
                name = name.removeprefix("fabric.errors.")
            if name not in allowed:
                found.append(f"{path.relative_to(root.parent)}:{node.lineno}: raise {raised}")
    return found


def drawn_tree(doc: str) -> dict[str, tuple[str | None, tuple[str, ...]]]:
    """The drawing in ``doc``: class name -> (its parent in the tree, the bases written after its name)."""
    drawn: dict[str, tuple[str | None, tuple[str, ...]]] = {}
    path: list[str] = []
    for line in doc.splitlines():
        match = DRAWN.match(line)
        if not match:
            continue
        depth = len(match["indent"]) // 4 + (1 if match["branch"] else 0)
        assert depth <= len(path), f"the drawing skips a level at {line.strip()!r}"
        del path[depth:]
        name = match["name"]
        assert name not in drawn, f"{name} is drawn twice"
        drawn[name] = (path[-1] if path else None, tuple(b.strip() for b in match["bases"].split(",")))
        path.append(name)
    return drawn


def defined_tree() -> dict[str, tuple[str | None, tuple[str, ...]]]:
    """The classes ``fabric.errors`` defines: name -> (its one base inside the tree, ``__bases__`` by name)."""
    defined: dict[str, tuple[str | None, tuple[str, ...]]] = {}
    for name, cls in inspect.getmembers(fabric.errors, inspect.isclass):
        if not issubclass(cls, BaseException) or cls.__module__ != fabric.errors.__name__:
            continue
        inside = [b.__name__ for b in cls.__bases__ if b.__module__ == fabric.errors.__name__]
        assert len(inside) <= 1, f"{name} has more than one parent in the tree: {inside}"
        defined[name] = (inside[0] if inside else None, tuple(b.__name__ for b in cls.__bases__))
    return defined


def test_no_exception_class_outside_errors_py() -> None:
    assert stray_classes(FABRIC, ERRORS_PY) == []


def test_every_raised_class_is_in_errors_py_or_builtin() -> None:
    assert stray_raises(FABRIC) == []


def test_the_drawing_is_the_defined_tree() -> None:
    assert fabric.errors.__doc__
    drawn = drawn_tree(fabric.errors.__doc__)
    assert drawn == defined_tree()
    assert drawn["FabricError"] == (None, ("Exception",))


@pytest.mark.parametrize("name", sorted(defined_tree()))
def test_every_class_is_a_fabric_error_with_a_one_line_docstring(name: str) -> None:
    cls = getattr(fabric.errors, name)
    assert issubclass(cls, FabricError)
    doc = vars(cls).get("__doc__")
    assert doc, f"{name} has no docstring"
    assert "\n" not in doc.strip(), f"{name}: one line of docstring"


def test_the_scanners_see_a_stray_class_and_its_raise(tmp_path: Path) -> None:
    package = tmp_path / "fabric"
    package.mkdir()
    errors_py = package / "errors.py"
    errors_py.write_text("class FabricError(Exception):\n    pass\n", encoding="utf-8")
    (package / "stray.py").write_text(
        "from fabric.errors import PushError as Base\n"
        "from yaml.composer import ComposerError\n\n"
        "class StrayError(Base):\n    pass\n\n"
        "class Deeper(StrayError):\n    pass\n\n"
        "class Bounded(ComposerError):\n    pass\n\n"
        "class NotAnError:\n    pass\n\n"
        "def f(exc: Exception) -> None:\n"
        "    if exc:\n        raise exc\n"
        "    raise Deeper('x')\n",
        encoding="utf-8",
    )
    assert stray_classes(package, errors_py) == [
        "fabric/stray.py:4: StrayError(PushError)",
        "fabric/stray.py:7: Deeper(StrayError)",
        "fabric/stray.py:10: Bounded(ComposerError)",
    ]
    assert stray_raises(package) == ["fabric/stray.py:19: raise Deeper"]


def test_the_drawing_parser_sees_a_wrong_edge() -> None:
    doc = "    FabricError(Exception)\n    ├── PushError(FabricError)\n    │   └── DrainError(PushError)\n    └── LabError(PushError)\n"
    assert drawn_tree(doc) == {
        "FabricError": (None, ("Exception",)),
        "PushError": ("FabricError", ("FabricError",)),
        "DrainError": ("PushError", ("PushError",)),
        "LabError": ("FabricError", ("PushError",)),
    }


def test_nodes_still_refuses_a_missing_project_with_exit_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ProjectMissingError became a FabricError; ``nodes`` still reports it itself: "nodes refused:", exit 2."""
    monkeypatch.setattr("fabric.nodes.runner.CHECKOUT", tmp_path / "checkout")
    monkeypatch.setattr("fabric.nodes.runner.PACKAGED", tmp_path / "packaged")
    assert main(["nodes", "inventories/lab/cluster.yaml"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("nodes refused: the Ansible project that nodes runs is missing: no ")
    assert "Fix: reinstall the package from a wheel built by ./dev dist" in err
