"""The execution environment's build context (``ansible-builder create``), checked the way the image build reads it.

Building the image needs podman or docker, which CI machines lack: the context is what is checked here. Its
introspection step (the script the builder stage runs) is run on the context's own files and the installed collection.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tests.packaging.conftest import run_checked

pytestmark = pytest.mark.slow


def pins(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        spec = line.split("#")[0].strip()
        if "==" in spec:
            name, version = spec.split("==")
            out[name.lower()] = version
    return out


def test_ee_context_holds_the_package_the_collection_and_the_lock(tmp_path: Path) -> None:
    context = tmp_path / "ee"
    run_checked([sys.executable, str(ROOT / "collection" / "build.py"), "--out", str(tmp_path / "tree"), "--ee", str(context)], cwd=tmp_path)
    containerfile = (context / "Containerfile").read_text(encoding="utf-8")
    build = context / "_build"
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    lock = pins(ROOT / "requirements.txt")

    assert 'ARG PYCMD="/usr/bin/python3.11"' in containerfile
    refs = re.search(r'ARG ANSIBLE_INSTALL_REFS="([^"]*)"', containerfile)
    assert refs is not None
    assert refs.group(1).split() == [f"ansible-core=={lock['ansible-core']}", f"ansible-runner=={lock['ansible-runner']}"], (
        "the EE runs the tested pins"
    )
    assert (build / "requirements.txt").read_text(encoding="utf-8") == (ROOT / "requirements.txt").read_text(encoding="utf-8")
    assert (build / "gpufabric" / f"gpufabric-{version}-py3-none-any.whl").is_file()
    final = containerfile[containerfile.index("FROM base AS final") :]
    assert "pip install --no-cache-dir --no-deps /tmp/gpufabric/gpufabric-*.whl" in final
    assert "COPY _build/config/ansible.cfg /etc/ansible/ansible.cfg" in final
    assert "gpufabric.fabric.gpufabric" in (build / "config" / "ansible.cfg").read_text(encoding="utf-8")

    # The galaxy stage copies _build to /build: the requirement must name the tarball that is there, at this version.
    wanted = yaml.safe_load((build / "requirements.yml").read_text(encoding="utf-8"))["collections"]
    assert [c["type"] for c in wanted] == ["file"]
    tarball = build / Path(wanted[0]["name"]).relative_to("/build")
    assert tarball.is_file(), f"{wanted[0]['name']} is not in the context"
    with tarfile.open(tarball) as tar:
        manifest = yaml.safe_load(tar.extractfile("MANIFEST.json").read())  # type: ignore[union-attr]
    assert manifest["collection_info"]["version"] == version

    # The builder stage's introspection, on the installed collection and the context's own requirement files.
    installed = tmp_path / "collections"
    run_checked([str(Path(sys.executable).parent / "ansible-galaxy"), "collection", "install", str(tarball), "-p", str(installed)], cwd=tmp_path)
    pip, bindep = tmp_path / "pip.txt", tmp_path / "bindep.txt"
    done = subprocess.run(
        [
            sys.executable,
            str(build / "scripts" / "introspect.py"),
            "introspect",
            f"--user-pip={build / 'requirements.txt'}",
            f"--user-bindep={build / 'bindep.txt'}",
            f"--write-pip={pip}",
            f"--write-bindep={bindep}",
            str(installed),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    resolved = pins(pip)
    assert resolved["pydantic"] == lock["pydantic"]
    assert resolved["netmiko"] == lock["netmiko"]
    assert resolved["ansible-core"] == lock["ansible-core"], "the same ansible-core as ANSIBLE_INSTALL_REFS (one version in the image)"
    assert "openssh-clients [platform:rpm]" in bindep.read_text(encoding="utf-8")
