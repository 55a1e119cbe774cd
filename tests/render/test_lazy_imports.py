"""A render imports the renderers of the NOSes its plan runs, and Jinja only where a template is printed."""

from __future__ import annotations

import inspect
import subprocess
import sys
import typing
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from fabric.render import RENDERERS, Renderer
from fabric.render.lazy import LazyRenderers
from fabric.render.storage import STORAGE_RENDERERS, StorageRenderer

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


def _signature(renderer: Callable[..., object]) -> tuple[list[object], object]:
    """The annotated types of ``renderer``'s required parameters, and its return type."""
    hints = typing.get_type_hints(renderer)
    required = [p.name for p in inspect.signature(renderer).parameters.values() if p.default is inspect.Parameter.empty]
    return [hints[name] for name in required], hints["return"]


@pytest.mark.parametrize(("table", "renderer"), [(RENDERERS, Renderer), (STORAGE_RENDERERS, StorageRenderer)])
def test_every_entry_is_annotated_as_its_table_is_typed(table: Mapping[str, Callable[..., object]], renderer: object) -> None:
    """pyright reads a table's type (``LazyRenderers[Renderer]``), not its ``"module:function"`` strings: each entry,
    imported, takes and returns what the table's type says, so a path to the wrong function is caught here."""
    parameters, returns = typing.get_args(renderer)
    assert table
    for nos in table:
        assert _signature(table[nos]) == (parameters, returns), nos


def test_negative_control_an_entry_of_the_other_table_is_caught() -> None:
    """A storage renderer named in the compute table would not match the compute table's type."""
    parameters, returns = typing.get_args(Renderer)
    assert _signature(STORAGE_RENDERERS["eos"]) != (parameters, returns)
    assert _signature(RENDERERS["eos"]) == (parameters, returns)
