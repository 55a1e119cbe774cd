"""A render imports the renderers of the NOSes its plan runs, and Jinja only where a template is printed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fabric.render.lazy import LazyRenderers

ROOT = Path(__file__).resolve().parents[2]
SONIC, EOS, CUMULUS = (f"fabric.render.nos.{nos}.compute" for nos in ("sonic", "eos", "cumulus"))
PROBE = """
import sys
from fabric.cli import main
code = main(["render", {definition!r}, "-o", {out!r}, "--jobs", "1"])
print(" ".join(sorted(m for m in sys.modules if m == "jinja2" or m.startswith("fabric.render.nos."))))
sys.exit(code)
"""


def _modules_after_render(definition: str, out: Path) -> set[str]:
    """The Jinja and NOS renderer modules a fresh interpreter holds after rendering ``definition``."""
    probe = PROBE.format(definition=definition, out=str(out))
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(done.stdout.splitlines()[-1].split())  # the probe's last line, after the CLI's own output


@pytest.mark.parametrize(
    ("definition", "loaded", "not_loaded"),
    [
        ("tests/data/render/sonic/cluster.yaml", {SONIC}, {"jinja2", EOS, CUMULUS}),
        ("tests/data/render/eos/cluster.yaml", {EOS}, {CUMULUS}),  # its OOB and storage switches print templates
    ],
)
def test_a_render_imports_only_what_its_nos_needs(tmp_path: Path, definition: str, loaded: set[str], not_loaded: set[str]) -> None:
    modules = _modules_after_render(definition, tmp_path / "out")
    assert loaded <= modules, f"expected {loaded - modules} imported"
    assert not modules & not_loaded, f"imported without need: {modules & not_loaded}"
    assert (tmp_path / "out" / "cabling.csv").is_file()


def test_lazy_table_imports_on_first_lookup_and_refuses_an_unknown_nos() -> None:
    table = LazyRenderers({"json": "json:dumps", "missing": "no_such_module_here:run"})
    assert table["json"]([1]) == "[1]"
    assert table["json"] is table["json"]
    with pytest.raises(KeyError):
        table["yaml"]
    with pytest.raises(ModuleNotFoundError):
        table["missing"]
