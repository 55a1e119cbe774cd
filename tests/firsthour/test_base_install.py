"""Issue 32 packaging: the cloud providers are extras (gpufabric[aws], [gcp], [azure], [all]); the base install
plans, renders, lints and pushes without any Pulumi package. The CLI runs here with every ``pulumi*`` module made
unimportable (a ``sys.meta_path`` finder that refuses them), as on a base install."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT

BLOCKED_CLI = """
import sys
class NoPulumi:
    def find_spec(self, name, path=None, target=None):
        if name == "pulumi" or name.startswith(("pulumi.", "pulumi_")):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked: a base install has no Pulumi)", name=name)
        return None
sys.meta_path.insert(0, NoPulumi())
from fabric.cli import main
code = main(sys.argv[1:])
leaked = sorted(m for m in sys.modules if m == "pulumi" or m.startswith(("pulumi.", "pulumi_")))
assert not leaked, leaked
sys.exit(code)
"""


def run_without_pulumi(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", BLOCKED_CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False, env=env)


def test_the_blocker_blocks() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    probe = BLOCKED_CLI.split("from fabric.cli import main", maxsplit=1)[0] + "import pulumi\n"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False, env=env)
    assert result.returncode != 0
    assert "blocked: a base install has no Pulumi" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("validate", "inventories/onprem-roce/cluster.yaml", "inventories/aws-p5/cluster.yaml", "inventories/gcp-a3mega/cluster.yaml"),
        ("plan", "inventories/onprem-ib/cluster.yaml"),
        ("plan", "inventories/azure-ndv5/cluster.yaml"),
        ("lint", "inventories/onprem-roce/cluster.yaml"),
        ("export", "nccl", "inventories/aws-p5/cluster.yaml", "-o", "{tmp}/export"),
    ],
    ids=lambda a: a[0] if isinstance(a, tuple) else str(a),
)
def test_the_cli_runs_without_any_pulumi_package(args: tuple[str, ...], tmp_path: Path) -> None:
    result = run_without_pulumi(*(a.replace("{tmp}", str(tmp_path)) for a in args))
    assert result.returncode == 0, result.stdout + result.stderr


def test_render_report_and_an_offline_push_run_without_pulumi(tmp_path: Path) -> None:
    render = run_without_pulumi("render", "inventories/onprem-roce/cluster.yaml", "-o", str(tmp_path / "out"), "--jobs", "1")
    assert render.returncode == 0, render.stderr
    assert (tmp_path / "out" / "cabling.csv").is_file()
    report = run_without_pulumi("report", "inventories/lab/cluster.yaml", "-o", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    diff = run_without_pulumi("diff", "inventories/lab/cluster.yaml", "--offline", "--state", str(tmp_path / "state"))
    assert diff.returncode == 3, diff.stderr  # pending: the push path (fabric.apply) loaded without Pulumi
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    imports = BLOCKED_CLI.split("from fabric.cli import main", maxsplit=1)[0] + "import fabric.apply.push, fabric.cli.apply, fabric.nodes.runner\n"
    loaded = subprocess.run([sys.executable, "-c", imports], capture_output=True, text=True, timeout=60, check=False, env=env)
    assert loaded.returncode == 0, loaded.stderr  # push, rollback, verify and nodes load on a base install


def test_the_cloud_providers_are_extras_and_the_lock_still_pins_them() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not [d for d in project["dependencies"] if d.startswith("pulumi")]
    extras = project["optional-dependencies"]
    assert any(r.startswith("pulumi-aws") for r in extras["aws"])
    assert any(r.startswith("pulumi-gcp") for r in extras["gcp"])
    assert any(r.startswith("pulumi-azure-native") for r in extras["azure"])
    assert extras["all"] == ["gpufabric[aws,gcp,azure]"]
    lock = (ROOT / "requirements.txt").read_text(encoding="utf-8")  # ./dev setup installs it: CI keeps every provider
    assert all(f"\n{name}==" in lock for name in ("pulumi", "pulumi-aws", "pulumi-gcp", "pulumi-azure-native"))
