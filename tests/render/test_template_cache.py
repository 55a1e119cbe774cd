"""The CLI's compiled-template cache: the same bytes with it cold, warm or off, and no failure where it cannot be written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = "inventories/onprem-roce/cluster.yaml"


def _render(out: Path, **env: str) -> dict[str, bytes]:
    subprocess.run(
        [sys.executable, "-m", "fabric", "render", EXAMPLE, "-o", str(out)],
        cwd=ROOT,
        env={**os.environ, "GPUFABRIC_NO_CACHE": "0", **env},
        check=True,
        capture_output=True,
    )
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_cold_warm_and_off_give_the_same_files(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cold = _render(tmp_path / "cold", XDG_CACHE_HOME=str(cache))
    entries = sorted((cache / "gpufabric" / "jinja").iterdir())
    assert entries, "the first run fills the cache"
    assert (cache / "gpufabric" / "jinja").stat().st_mode & 0o077 == 0, "the cache is private to the user"
    warm = _render(tmp_path / "warm", XDG_CACHE_HOME=str(cache))
    assert sorted((cache / "gpufabric" / "jinja").iterdir()) == entries, "the second run compiles nothing new"
    off = _render(tmp_path / "off", GPUFABRIC_NO_CACHE="1")
    assert cold == warm == off


def test_a_cache_that_cannot_be_made_only_costs_the_compile(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache directory would go", encoding="utf-8")
    files = _render(tmp_path / "out", XDG_CACHE_HOME=str(blocked))
    assert files == _render(tmp_path / "ref", GPUFABRIC_NO_CACHE="1")
