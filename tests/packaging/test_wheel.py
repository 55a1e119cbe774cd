"""The pip package: what the wheel and sdist hold, and the `gpufabric` command installed outside the checkout.

The installed command must give byte-identical plans and configs to the checkout's ``python -m fabric``: that proves
the package carries every file it reads at run time and does not depend on the repository layout.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import EXAMPLES, ROOT
from tests.packaging.conftest import Dist, ToolVenv

pytestmark = pytest.mark.slow

ONPREM = ("lab", "onprem-roce", "onprem-ib")  # the examples that render switch configs


def package_files() -> set[str]:
    """Every file under fabric/ that the package needs: sources and data (templates, catalog data), not caches."""
    return {p.relative_to(ROOT).as_posix() for p in (ROOT / "fabric").rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def normalized(requirement: str) -> tuple[str, str]:
    parsed = Requirement(requirement)
    return canonicalize_name(parsed.name), str(parsed.specifier)


def declared_requirements() -> list[str]:
    """The base dependencies and every extra's (the cloud providers: [aws], [gcp], [azure], [all])."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [*project["dependencies"], *(r for extra in project.get("optional-dependencies", {}).values() for r in extra)]


def declared_by_extra() -> dict[str, set[tuple[str, str]]]:
    """Extra ("" for the base) → its requirements, a self-reference (gpufabric[aws,...]) expanded into those extras'."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras: dict[str, list[str]] = {"": project["dependencies"], **project.get("optional-dependencies", {})}

    def expand(name: str) -> set[tuple[str, str]]:
        out: set[tuple[str, str]] = set()
        for text in extras[name]:
            requirement = Requirement(text)
            if canonicalize_name(requirement.name) == "gpufabric":
                out |= {r for extra in requirement.extras for r in expand(extra)}
            else:
                out.add(normalized(text))
        return out

    return {name: expand(name) for name in extras}


def checkout(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fabric", *argv], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def test_wheel_holds_every_package_file_and_the_schema(dist: Dist) -> None:
    with zipfile.ZipFile(dist.wheel) as wheel:
        names = set(wheel.namelist())
        schema = wheel.read("fabric/cluster.schema.json").decode()
        entry_points = wheel.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
        metadata = wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    missing = sorted(package_files() - names)
    assert not missing, f"the wheel lacks {missing}"
    project = {
        f"fabric/nodes/project/{p}"
        for p in subprocess.run(
            ["git", "ls-files", "ansible.cfg", "playbooks", "roles", "plugins"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
    }
    assert project <= names, f"the wheel lacks nodes' Ansible project: {sorted(project - names)}"
    assert [n for n in names if n.startswith("fabric/catalog/data/")], "the switch catalog's data files"
    assert not [n for n in names if not n.startswith(("fabric/", "gpufabric-"))], "only the fabric package and its metadata"
    assert schema == (ROOT / "schema" / "cluster.schema.json").read_text(encoding="utf-8")
    assert "gpufabric = fabric.__main__:run" in entry_points
    assert "Requires-Python: >=3.11" in metadata
    shipped = [Requirement(line.removeprefix("Requires-Dist: ")) for line in metadata.splitlines() if line.startswith("Requires-Dist: ")]
    by_extra: dict[str, set[tuple[str, str]]] = {}
    for requirement in shipped:  # hatchling writes [all]'s self-reference as the other extras' requirements
        extra = str(requirement.marker).split("==")[-1].strip(" '\"") if requirement.marker else ""
        by_extra.setdefault(extra, set()).add(normalized(str(requirement).split(";")[0]))
    assert by_extra == declared_by_extra()


def test_dependency_ranges_admit_the_pinned_lock() -> None:
    """Every declared range holds the version requirements.txt pins (the lock CI runs is one resolution of the ranges)."""
    pins = {}
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        spec = line.split("#")[0].strip()
        if "==" in spec:
            name, version = spec.split("==")
            pins[canonicalize_name(name)] = version
    for text in declared_requirements():
        requirement = Requirement(text)
        if canonicalize_name(requirement.name) == "gpufabric":
            continue  # [all] names the other extras
        pinned = pins.get(canonicalize_name(requirement.name))
        assert pinned is not None, f"{requirement.name} is declared but not pinned in requirements.txt"
        assert requirement.specifier.contains(pinned), f"{text} excludes the pinned {requirement.name}=={pinned}"


def test_sdist_carries_the_sources_schema_and_examples(dist: Dist) -> None:
    with tarfile.open(dist.sdist) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert package_files() <= names
    assert {"pyproject.toml", "README.md", "schema/cluster.schema.json", "requirements.txt"} <= names
    assert {e.relative_to(ROOT).as_posix() for e in EXAMPLES} <= names
    assert {"ansible.cfg", "playbooks/site.yml", "playbooks/check.yml", "plugins/inventory/gpufabric.py"} <= names  # for the wheel's nodes
    assert not [n for n in names if n.startswith(("tests/", ".venv/")) or "__pycache__" in n]


def test_installed_command_validates_plans_and_renders_like_the_checkout(tool_venv: ToolVenv) -> None:
    where = tool_venv.run("python", "-c", "import fabric; print(fabric.__file__)")
    assert Path(where.stdout.strip()).is_relative_to(tool_venv.root), where.stdout + where.stderr
    usage = tool_venv.run("gpufabric", "--help")
    assert usage.returncode == 0
    assert usage.stdout.startswith("usage: gpufabric ")
    version = tool_venv.run("gpufabric", "--version")  # from the installed distribution's metadata, not a checkout
    project_version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert version.stdout.strip() == f"gpufabric {project_version}", version.stdout + version.stderr
    for example in EXAMPLES:
        shutil.copytree(example.parent, tool_venv.work / example.parent.name, dirs_exist_ok=True)
    names = sorted(e.parent.name for e in EXAMPLES)
    valid = tool_venv.run("gpufabric", "validate", "--json", *(f"{n}/cluster.yaml" for n in names))
    assert valid.returncode == 0, valid.stderr
    assert json.loads(valid.stdout)["valid"]
    for name in ONPREM:
        installed = tool_venv.run("gpufabric", "plan", "--json", f"{name}/cluster.yaml")
        assert installed.returncode == 0, installed.stderr
        assert installed.stdout == checkout("plan", "--json", f"inventories/{name}/cluster.yaml").stdout
        rendered = tool_venv.run("gpufabric", "render", "--json", f"{name}/cluster.yaml", "-o", f"out/{name}")
        assert rendered.returncode == 0, rendered.stderr
        reference = checkout("render", "--json", f"inventories/{name}/cluster.yaml", "-o", str(tool_venv.work / "reference" / name))
        files = json.loads(rendered.stdout)["files"]
        assert files == json.loads(reference.stdout)["files"], f"{name}: the installed package renders other bytes than the checkout"
        assert any(path.startswith("switches/") for path in files)
        assert sorted((tool_venv.work / "out" / name).rglob("*.svg")), "the topology diagram"


def test_installed_command_refuses_an_invalid_definition_with_exit_2(tool_venv: ToolVenv) -> None:
    bad = tool_venv.work / "bad.yaml"
    bad.write_text("name: x\ntarget: moon\n", encoding="utf-8")
    done = tool_venv.run("gpufabric", "validate", str(bad))
    assert done.returncode == 2
    assert "target" in done.stderr


def test_module_entry_point_and_the_schema_in_the_installed_package(tool_venv: ToolVenv) -> None:
    """``python -m fabric`` keeps working in the installed package, and its schema is the shipped one."""
    printed = tool_venv.run("python", "-m", "fabric", "schema")
    assert printed.returncode == 0, printed.stderr
    read = "import importlib.resources as r; print(r.files('fabric').joinpath('cluster.schema.json').read_text(), end='')"
    shipped = tool_venv.run("python", "-c", read)
    assert printed.stdout == shipped.stdout == (ROOT / "schema" / "cluster.schema.json").read_text(encoding="utf-8")


def test_installed_nodes_runs_the_playbooks_the_wheel_carries(tool_venv: ToolVenv) -> None:
    """``gpufabric nodes`` outside the checkout: the packaged playbook, roles and inventory plugin run; SSH to 127.0.0.1
    port 1 is refused at once, so no host is touched and every selected host is reported unreachable.
    """
    # ansible-core's console script (its entry point ansible.cli.playbook:main), as pip would install it with the
    # dependencies; the fixture's venv reuses the project venv's packages, whose scripts point at the other interpreter.
    script = tool_venv.bin / "ansible-playbook"
    script.write_text(f"#!{tool_venv.bin / 'python'}\nimport sys\nfrom ansible.cli.playbook import main\nsys.exit(main())\n", encoding="utf-8")
    script.chmod(0o755)
    shutil.copytree(ROOT / "inventories" / "onprem-roce", tool_venv.work / "onprem-roce", dirs_exist_ok=True)
    unreachable = ["-e", "ansible_host=127.0.0.1", "-e", "ansible_port=1", "--limit", "gpu001", "--json"]
    done = tool_venv.run("gpufabric", "nodes", "onprem-roce/cluster.yaml", "--playbook", "check", *unreachable)
    assert done.returncode == 1, done.stdout + done.stderr
    hosts = json.loads(done.stdout)["hosts"]
    assert list(hosts) == ["gpu001"], done.stdout  # the packaged inventory plugin read the definition
    assert hosts["gpu001"]["unreachable"] == 1
    assert "Connection refused" in hosts["gpu001"]["failures"][0]["msg"]
