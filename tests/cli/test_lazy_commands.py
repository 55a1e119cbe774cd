"""A command imports the groups it needs and no other (issue 36: the start-up is most of a small command's time)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

LAB = "inventories/lab/cluster.yaml"
ELSEWHERE = ("fabric.apply", "fabric.twin", "fabric.nodes", "fabric.cloud", "fabric.render", "fabric.lint", "jinja2", "ansible_runner")


@pytest.mark.parametrize("words", [["schema"], ["validate", LAB], ["plan", LAB]], ids=["schema", "validate", "plan"])
def test_a_definition_command_imports_no_render_apply_or_twin(words: list[str]) -> None:
    code = (
        "import contextlib, io, sys\nfrom fabric.__main__ import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()):\n    assert main({words!r}) == 0\n"
        f"print(sorted(m for m in sys.modules if m.startswith({ELSEWHERE!r})))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


RENDER_NEEDS_NOT = (
    *("fabric.apply", "fabric.twin", "fabric.nodes", "fabric.cloud", "fabric.lint", "ansible_runner"),
    *("fabric.reports.html", "fabric.export", "fabric.inventory", "importlib.metadata", "email", "zipfile", "tomllib", "rich.table"),
)
"""What a render of the lab never uses: apply, the twin, the node runs, the cloud, lint, Ansible, the HTML report; and
what ``--version`` (``importlib.metadata``, ``tomllib``), pydantic's plugin discovery (``importlib.metadata``, ``email``,
``zipfile``) and the plan command's tables (``rich.table``) used to load into every command."""


def _imported_by(code: str) -> list[str]:
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    last = result.stdout.splitlines()[-1]  # the printed names, comma-separated; "" when none
    return last.split(",") if last else []


def test_render_imports_only_what_it_renders_with(tmp_path: Path) -> None:
    words = ["render", LAB, "-o", str(tmp_path / "out")]
    names = f"(m for n in {RENDER_NEEDS_NOT!r} for m in sys.modules if m == n or m.startswith(n + '.'))"
    code = (
        "import contextlib, io, sys\nfrom fabric.__main__ import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()):\n    assert main({words!r}) == 0\n"
        f"assert 'fabric.render' in sys.modules and 'jinja2' in sys.modules\nprint(','.join(sorted(set({names}))))"
    )
    assert _imported_by(code) == []


def test_a_callers_models_still_find_pydantic_plugins() -> None:
    """fabric's own models are built without pydantic's plugin discovery; a model built after ``import fabric`` (a
    caller's) gets pydantic's own loader back, entry points and all."""
    code = (
        "import sys, fabric, pydantic\nassert 'importlib.metadata' not in sys.modules, 'fabric imported the plugin discovery'\n"
        "class Mine(pydantic.BaseModel):\n    x: int\n"
        "loader = sys.modules['pydantic.plugin._loader']\nassert loader.__file__.endswith('_loader.py') and loader._plugins == {}\n"
        "print('importlib.metadata' in sys.modules)"
    )
    assert _imported_by(code) == ["True"]
