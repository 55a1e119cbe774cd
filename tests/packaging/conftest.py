"""Fixtures of the packaging tests: the sdist and wheel built from this checkout, and a venv outside it holding the wheel.

Everything is offline: the build runs without isolation on the pinned hatchling of the project venv, and the venv
that receives the wheel (``--no-deps``) reuses the project venv's pinned dependencies through a ``.pth`` file, so no
package index is contacted and nothing of the checkout is on its path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT


@dataclass(frozen=True)
class Dist:
    """The built distributions."""

    wheel: Path
    sdist: Path


@dataclass(frozen=True)
class ToolVenv:
    """A venv outside the checkout with only the wheel installed into it (its dependencies come from the project venv)."""

    root: Path
    work: Path  # an empty working directory outside the checkout

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def run(self, *argv: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run a program of the venv's bin with only that directory and the system's on PATH, no PYTHONPATH or ANSIBLE_*."""
        clean = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"} and not k.startswith("ANSIBLE_")}
        env = {**clean, "PATH": f"{self.bin}{os.pathsep}/usr/local/bin:/usr/bin:/bin", **(env or {})}
        argv = (str(self.bin / argv[0]), *argv[1:])
        return subprocess.run(argv, cwd=cwd or self.work, env=env, capture_output=True, text=True, timeout=300, check=False)


def run_checked(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    """``python -m build --no-isolation``: the sdist, then the wheel built from that sdist (so the sdist must be complete)."""
    out = tmp_path_factory.mktemp("dist")
    run_checked([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)], cwd=out)
    wheels, sdists = sorted(out.glob("gpufabric-*.whl")), sorted(out.glob("gpufabric-*.tar.gz"))
    assert len(wheels) == 1, wheels
    assert len(sdists) == 1, sdists
    return Dist(wheels[0], sdists[0])


@pytest.fixture(scope="session")
def tool_venv(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> ToolVenv:
    """A fresh venv outside the checkout with the wheel installed; its dependencies are the project venv's pinned ones."""
    base = tmp_path_factory.mktemp("tool")
    root = base / "venv"
    run_checked([sys.executable, "-m", "venv", "--without-pip", str(root)], cwd=base)
    python = root / "bin" / "python"
    site = run_checked([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=base).stdout.strip()
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    # A .pth line adds the project venv's site-packages after the venv's own: the wheel's copy of fabric comes first.
    (Path(site) / "_gpufabric_deps.pth").write_text("".join(f"{p}\n" for p in sorted(deps)), encoding="utf-8")
    run_checked([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-index", "--no-deps", str(dist.wheel)], cwd=base)
    work = base / "work"
    work.mkdir()
    return ToolVenv(root, work)


@dataclass(frozen=True)
class Installed:
    """The collection built from this checkout and installed; Ansible runs from the wheel's venv."""

    tree: Path  # the assembled collection (ansible_collections/gpufabric/fabric)
    tarball: Path
    collections: Path  # the collections path the tarball was installed into
    venv: ToolVenv

    def ansible(self, program: str, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """An Ansible CLI (``playbook``, ``adhoc``, ``doc``…) of the wheel's venv, run in its working directory."""
        return self.venv.run("python", "-m", f"ansible.cli.{program}", *argv, env={"NO_COLOR": "1", **(env or {})})


@pytest.fixture(scope="session")
def installed(tool_venv: ToolVenv, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """collection/build.py → ansible-galaxy collection build → install; docs/collection.md's ansible.cfg in the work directory."""
    base = tmp_path_factory.mktemp("collection")
    built = run_checked(
        [sys.executable, str(ROOT / "collection" / "build.py"), "--out", str(base / "tree"), "--tarball", str(base / "dist")], cwd=base
    )
    tree, tarball = (Path(line) for line in built.stdout.splitlines()[-2:])
    collections = base / "installed"
    galaxy = Path(sys.executable).parent / "ansible-galaxy"
    run_checked([str(galaxy), "collection", "install", str(tarball), "-p", str(collections)], cwd=base)
    # docs/collection.md's ansible.cfg: the installed collection, its inventory plugin enabled.
    plugins = "gpufabric.fabric.gpufabric, ansible.builtin.yaml, ansible.builtin.ini"
    config = f"[defaults]\ncollections_path = {collections}\n\n[inventory]\nenable_plugins = {plugins}\n"
    (tool_venv.work / "ansible.cfg").write_text(config, encoding="utf-8")
    for site in ("lab", "onprem-roce", "onprem-ib"):
        shutil.copytree(ROOT / "inventories" / site, tool_venv.work / site, dirs_exist_ok=True)
    return Installed(tree, tarball, collections, tool_venv)
