"""Issue 32: the README's ten-minute walkthrough runs as written. The code block after the ``walkthrough`` marker is
taken from README.md and run line by line in an empty directory, with ``gpufabric`` on PATH as the checkout's CLI, so
the README cannot drift from the tool; and every ``init`` starter validates as written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fabric.cli.init import STARTERS, starter
from fabric.validate import validate_file
from tests.conftest import ROOT

MARKER = "<!-- walkthrough:"


def walkthrough() -> list[str]:
    """The command lines of the README's walkthrough block (comments stripped by the shell)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert MARKER in text, "README.md lost its walkthrough marker"
    block = text.split(MARKER, 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def test_the_readme_walkthrough_runs_in_an_empty_directory(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "gpufabric"  # the installed console script, as the checkout's code
    shim.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m fabric "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    work = tmp_path / "empty"
    work.mkdir()
    lines = walkthrough()
    assert lines[0].startswith("mkdir ")
    assert any(line.startswith("gpufabric init ") for line in lines)
    script = "set -eu\n" + "\n".join(lines) + "\npwd > " + str(tmp_path / "where") + "\n"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GPUFABRIC_JOBS": "1"}
    result = subprocess.run(["bash", "-c", script], cwd=work, capture_output=True, text=True, timeout=600, check=False, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "valid cluster.yaml: pod-b200 (onprem, roce): 50 nodes, 384 GPUs" in result.stdout  # the edit took: 48 DGX B200
    assert "clean: " in result.stdout
    project = Path((tmp_path / "where").read_text(encoding="utf-8").strip())
    assert json.loads((project / "out" / "plan.json").read_text(encoding="utf-8"))["name"] == "pod-b200"
    assert (project / "out" / "report.html").is_file()
    assert list((project / "out" / "switches").glob("*/config_db.json"))
    assert not list((ROOT / "inventories").glob("pod-b200*")), "a cluster not in the examples"


@pytest.mark.parametrize("target", STARTERS)
def test_every_starter_validates_as_written(target: str, tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(starter(target), encoding="utf-8")
    validated = validate_file(path)
    assert not validated.warnings, [str(w) for w in validated.warnings]
    expected = "onprem" if target.startswith("onprem") else target
    assert validated.plan.target == expected
    assert "EDIT" in path.read_text(encoding="utf-8")  # commented: the values to change are marked


def test_init_writes_the_starter_refuses_to_overwrite_and_names_the_cluster(tmp_path: Path) -> None:
    def init(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        return subprocess.run(
            [sys.executable, "-m", "fabric", "init", *args], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False, env=env
        )

    first = init("--target", "gcp", "--name", "train-7")
    assert first.returncode == 0, first.stderr
    assert "name: train-7" in (tmp_path / "cluster.yaml").read_text(encoding="utf-8")
    again = init("--target", "aws")
    assert again.returncode == 2
    assert "--force" in again.stderr
    assert init("--target", "aws", "--force").returncode == 0
    assert "target: aws" in (tmp_path / "cluster.yaml").read_text(encoding="utf-8")
    bad = init("--target", "aws", "--name", "Bad Name!", "-o", "x.yaml")
    assert bad.returncode == 2
    assert not (tmp_path / "x.yaml").exists()
