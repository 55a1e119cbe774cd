"""Assemble the Ansible collection ``gpufabric.fabric`` from this repository, and optionally build its tarball.

The repository keeps ``roles/``, ``plugins/`` and ``playbooks/`` at the top (``ansible.cfg`` runs them from the
checkout); this script copies them with ``collection/galaxy.yml``, ``collection/meta/runtime.yml``,
``collection/README.md``, ``collection/CHANGELOG.md``, ``collection/tests/`` (ansible-test's ignore file) and
``collection/playbooks/`` into ``<out>/ansible_collections/gpufabric/fabric``:

    python collection/build.py                      # the tree, in build/collection
    python collection/build.py --tarball build      # and build/gpufabric-fabric-<version>.tar.gz
    python collection/build.py --ee build/ee        # the execution environment's build context (./dev ee)

One rewrite happens on the way: filters of ``plugins/filter`` are called by their short names in the repository
(``filter_plugins`` in ``ansible.cfg``), but a collection's filters are found only by their fully qualified name
(https://docs.ansible.com/ansible/latest/collections_guide/collections_using_playbooks.html: the ``collections``
keyword searches modules and action plugins only), so ``| gpufabric_x`` becomes ``| gpufabric.fabric.gpufabric_x``.
Roles and modules keep short names: a playbook of a collection searches its own collection first.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
NAMESPACE, NAME = "gpufabric", "fabric"
ROLE_EXCLUDES = ("molecule", "__pycache__", "*.pyc")  # role tests stay in the repository
TEXT_SUFFIXES = {".yml", ".yaml", ".j2"}


def filter_names(filter_dir: Path) -> list[str]:
    """The names every ``FilterModule`` under ``filter_dir`` registers."""
    names: list[str] = []
    for path in sorted(filter_dir.glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"_gpufabric_filter_{path.stem}", path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        names.extend(module.FilterModule().filters())
    return sorted(names)


def qualify_filters(text: str, names: list[str]) -> str:
    """``| name`` → ``| gpufabric.fabric.name`` for each filter name (only in filter position, never a variable)."""
    for name in names:
        text = re.sub(rf"\|(\s*){re.escape(name)}\b", rf"|\1{NAMESPACE}.{NAME}.{name}", text)
    return text


def assemble(out: Path, root: Path = ROOT) -> Path:
    """Write the collection tree under ``out``; returns the collection's directory.

    Raises:
        SystemExit: galaxy.yml's version differs from pyproject.toml's (the two releases must match).
    """
    galaxy = yaml.safe_load((root / "collection" / "galaxy.yml").read_text(encoding="utf-8"))
    version = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    if galaxy["version"] != version:
        msg = f"collection/galaxy.yml: version {galaxy['version']} differs from pyproject.toml's {version}; set both to the release"
        raise SystemExit(msg)
    target = out / "ansible_collections" / NAMESPACE / NAME
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for name in ("galaxy.yml", "README.md", "CHANGELOG.md", "meta", "tests"):
        source = root / "collection" / name
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, target / name)
    shutil.copy2(root / ".yamllint", target / ".yamllint")  # the repository's YAML style, for ansible-lint of the collection
    shutil.copytree(root / "roles", target / "roles", ignore=shutil.ignore_patterns(*ROLE_EXCLUDES))
    shutil.copytree(root / "playbooks", target / "playbooks")
    # Playbooks that need the collection's own module (it has no short name in the checkout) live in collection/.
    shutil.copytree(root / "collection" / "playbooks", target / "playbooks", dirs_exist_ok=True)
    for kind in sorted(p.name for p in (root / "plugins").iterdir() if p.is_dir() and p.name != "__pycache__"):
        shutil.copytree(root / "plugins" / kind, target / "plugins" / kind, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    names = filter_names(root / "plugins" / "filter")
    for path in sorted((target / "roles").rglob("*")) + sorted((target / "playbooks").rglob("*")):
        if path.suffix in TEXT_SUFFIXES and path.is_file():
            text = path.read_text(encoding="utf-8")
            path.write_text(qualify_filters(text, names), encoding="utf-8")
    return target


def build_tarball(collection: Path, output: Path) -> Path:
    """``ansible-galaxy collection build`` of the assembled tree; returns the tarball."""
    output.mkdir(parents=True, exist_ok=True)
    galaxy = Path(sys.executable).parent / "ansible-galaxy"
    done = subprocess.run(  # noqa: S603 - argv, no shell
        [str(galaxy), "collection", "build", str(collection), "--output-path", str(output), "--force"], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        msg = f"ansible-galaxy collection build failed:\n{done.stdout}{done.stderr}"
        raise SystemExit(msg)
    version = yaml.safe_load((collection / "galaxy.yml").read_text(encoding="utf-8"))["version"]
    return output / f"{NAMESPACE}-{NAME}-{version}.tar.gz"


def build_ee_context(collection: Path, context: Path, root: Path = ROOT) -> Path:
    """The wheel and the collection tarball into ``build/ee-dist`` (execution-environment.yml copies them from there),
    then ``ansible-builder create`` into ``context``; returns the Containerfile. The image itself needs podman or docker.
    """
    dist = root / "build" / "ee-dist"
    if dist.exists():
        shutil.rmtree(dist)
    _run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", str(dist), str(root)])
    build_tarball(collection, dist)
    builder = Path(sys.executable).parent / "ansible-builder"
    _run([str(builder), "create", "-f", str(root / "execution-environment.yml"), "-c", str(context), "--output-filename", "Containerfile"])
    return context / "Containerfile"


def _run(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)  # noqa: S603 - argv, no shell
    if done.returncode != 0:
        msg = f"{' '.join(argv)} failed:\n{done.stdout}{done.stderr}"
        raise SystemExit(msg)


def main(argv: list[str] | None = None) -> int:
    """Command line: assemble; build the tarball with ``--tarball DIR``, the EE context with ``--ee DIR``."""
    parser = argparse.ArgumentParser(prog="python collection/build.py", description="Assemble (and build) the gpufabric.fabric collection.")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "collection", help="where the tree goes (default build/collection)")
    parser.add_argument("--tarball", type=Path, metavar="DIR", help="also build the collection tarball into DIR")
    parser.add_argument("--ee", type=Path, metavar="DIR", help="also create the execution environment's build context in DIR")
    args = parser.parse_args(argv)
    collection = assemble(args.out)
    sys.stdout.write(f"{collection}\n")
    if args.tarball:
        sys.stdout.write(f"{build_tarball(collection, args.tarball)}\n")
    if args.ee:
        sys.stdout.write(f"{build_ee_context(collection, args.ee)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
