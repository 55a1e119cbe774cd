"""A command imports the groups it needs and no other (issue 36: the start-up is most of a small command's time)."""

from __future__ import annotations

import subprocess
import sys

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
