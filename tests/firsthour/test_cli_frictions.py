"""Issue 32, the command-line frictions of a newcomer's first hour (audit newcomer.md §5, F10, F12, F13, F15 and the
duplicated error of attempt 3): --version, one help shape, one line per device error, a readable offline diff, the
inventory plugin's file names, PCI buses as lspci prints them."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from fabric.cli import GROUPS, _parser
from fabric.errors import InputError
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.validate import validate_file
from tests.conftest import ROOT

VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fabric", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False, env=env)


def test_version_comes_from_the_package_metadata_or_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    result = cli("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"gpufabric {VERSION}")
    from fabric.cli import helpshape

    monkeypatch.setattr(helpshape, "version", lambda _name: "7.8.9")  # an installed distribution: its metadata wins
    assert helpshape.package_version() == "7.8.9"


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser, _ = _parser(None)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_subcommand_is_listed() -> None:
    assert set(GROUPS) | {"schema"} <= set(_subcommands())


@pytest.mark.parametrize("command", sorted(_subcommands()))
def test_every_subcommand_help_has_one_shape(command: str) -> None:
    """usage, a one-line summary, every argument explained, examples, exit codes."""
    parser = _subcommands()[command]
    text = parser.format_help()
    usage, rest = text.split("\n\n", 1)
    assert usage.startswith("usage: ")
    summary = rest.split("\n\n", 1)[0]
    assert summary.strip(), f"{command}: no summary line"
    assert "\n" not in summary.strip(), f"{command}: the summary is more than one line"
    for action in parser._actions:
        assert action.help, f"{command}: argument {action.dest} is not explained"
    examples = text.split("examples:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert examples, f"{command}: no example"
    assert all(line.startswith(("  gpufabric ", "  sudo gpufabric ")) and f"gpufabric {command}" in line for line in examples)
    assert "exit codes: 0 success" in text


def test_diff_help_does_not_promise_a_push_order() -> None:
    help_of = {name: parser.format_help() for name, parser in _subcommands().items()}
    for command in ("diff", "verify"):
        assert "pushed in that order" not in " ".join(help_of[command].split())
    assert "pushed in that order" in " ".join(help_of["push"].split())


UNREACHABLE = """
import socket, sys, threading
import fabric.cli.apply as apply
from fabric.apply.session import DeviceAccess
mode = sys.argv[1]
server = socket.socket()
server.bind(("127.0.0.1", 0))
port = server.getsockname()[1]
if mode == "closed":
    server.close()  # nothing listens: connection refused
else:  # something that is not SSH answers and hangs up: paramiko logs a traceback per attempt
    server.listen(16)
    def serve():
        while True:
            conn, _ = server.accept()
            conn.sendall(b"not ssh\\r\\n")
            conn.close()
    threading.Thread(target=serve, daemon=True).start()
def access(validated, plan, state, planes):
    return {s.name: DeviceAccess(s.name, "127.0.0.1", port, "root", None, "/dev/null") for s in plan.fabric.switches}
apply.access_for = access
from fabric.cli import main
sys.exit(main(["diff", "inventories/lab/cluster.yaml", "--plane", "compute", "--state", sys.argv[2], *sys.argv[3:]]))
"""


@pytest.mark.parametrize("mode", ["closed", "not-ssh"])
def test_an_unreachable_switch_is_one_line_and_debug_shows_the_traceback(mode: str, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = [sys.executable, "-c", UNREACHABLE, mode, str(tmp_path / "state")]
    plain = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, timeout=180, check=False, env=env)
    assert plain.returncode == 1, plain.stderr
    assert "Traceback" not in plain.stderr
    lines = plain.stdout.splitlines()
    switches = [line for line in lines if line.endswith(": failed")]
    assert len(switches) == 4
    for line in switches:  # the device line, its one error line, then the next device
        error = lines[lines.index(line) + 1]
        assert error.startswith("    not reached: cannot read the running config (")
        assert error.endswith(")")
    assert len(lines) == 2 * len(switches) + 1
    if mode == "not-ssh":
        assert "Error reading SSH protocol banner" in plain.stdout
    debug = subprocess.run([*run, "--debug"], cwd=ROOT, capture_output=True, text=True, timeout=180, check=False, env=env)
    assert debug.returncode == 1
    assert "Traceback" in debug.stderr


def test_offline_diff_without_a_record_summarises_and_full_prints_the_configs(tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    plan = plan_cluster(load_cluster(ROOT / "inventories/onprem-roce/cluster.yaml"))
    short = cli("diff", "inventories/onprem-roce/cluster.yaml", "--offline", "--state", state)
    assert short.returncode == 3, short.stderr
    lines = short.stdout.splitlines()
    devices = [line for line in lines if line.endswith(": changes pending")]
    assert len(devices) > 20
    assert len(lines) == 2 * len(devices) + 1  # a name and a count per switch, and the summary
    assert all("never pushed" in lines[lines.index(d) + 1] and "lines to send" in lines[lines.index(d) + 1] for d in devices)
    assert lines[-1] == f"diff offline: {len(devices)} with changes, 0 unchanged, 0 failed"
    assert plan.fabric is not None
    full = cli("diff", "inventories/onprem-roce/cluster.yaml", "--offline", "--full", "--state", state)
    assert full.returncode == 3
    assert len(full.stdout.splitlines()) > 10 * len(lines)


def test_inventory_plugin_takes_gpufabric_yaml_and_cluster_names(tmp_path: Path) -> None:
    from plugins.inventory.gpufabric import DOCUMENTATION, is_definition_name

    assert [is_definition_name(n) for n in ("cluster.yaml", "cluster.yml", "site-a.gpufabric.yaml", "b.gpufabric.yml")] == [True] * 4
    assert not any(is_definition_name(n) for n in ("hosts.yaml", "site.yaml", ".gpufabric.yaml", "x.gpufabric.json"))
    assert "C(.gpufabric.yaml)" in DOCUMENTATION
    definition = tmp_path / "site-a.gpufabric.yaml"
    definition.write_text((ROOT / "inventories/lab/cluster.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg")}
    graph = subprocess.run(
        [str(Path(sys.executable).parent / "ansible-inventory"), "-i", str(definition), "--graph"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert graph.returncode == 0, graph.stderr
    assert "@gpu_nodes" in graph.stdout


def _with_buses(tmp_path: Path, buses: str) -> Path:
    text = (ROOT / "inventories/onprem-roce/cluster.yaml").read_text(encoding="utf-8").replace("hardware: dgx-h100}", "hardware: dgx-site}")
    text += f"""
hardware:
  dgx-site:
    gpus: 8
    gpu_model: H100-SXM5-80GB
    ports:
      compute: {{speed_gbps: 400, pci_buses: {buses}, hcas: [mlx5_0, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_9, mlx5_10, mlx5_11]}}
      storage: {{speed_gbps: 200, names: [enp170s0f0np0, enp41s0f0np0], hcas: [mlx5_7, mlx5_1]}}
      inband: {{speed_gbps: 100, names: [enp170s0f1np1]}}
      oob: {{speed_gbps: 1, names: [bmc]}}
"""
    path = tmp_path / "cluster.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_pci_buses_as_lspci_prints_them_equal_the_decimal_numbers(tmp_path: Path) -> None:
    decimal = plan_cluster(load_cluster(_with_buses(tmp_path, "[24, 64, 79, 94, 154, 192, 206, 220]")))
    lspci = plan_cluster(load_cluster(_with_buses(tmp_path, '["0000:18:00.0", "40:00.0", "4f:00.0", "0x5e", "9a:00.0", "C0:00.0", 206, "dc:00.0"]')))
    names = [i.name for i in decimal.nodes[0].interfaces if i.plane == "compute"]
    assert names == [i.name for i in lspci.nodes[0].interfaces if i.plane == "compute"]
    assert names[0] == "enp24s0np0"  # one canonical form: the decimal bus systemd puts in the name


def test_a_pci_bus_that_is_no_bus_names_both_forms(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        validate_file(_with_buses(tmp_path, '[18:00.0, "18", "zz:00.0", 24, 25, 26, 27, 28]'))
    messages = [f.message for f in caught.value.errors]
    assert len(messages) == 3
    assert all("'0000:1a:00.0'" in m and "decimal" in m for m in messages)
    assert "base-60" in messages[0]  # unquoted 18:00.0 is a YAML 1.1 sexagesimal float


def test_a_storage_speed_no_tier_can_run_is_one_error_naming_the_tiers(tmp_path: Path) -> None:
    text = (ROOT / "inventories/onprem-roce/cluster.yaml").read_text(encoding="utf-8")
    old = "leaf: {model: sn5600, nos: cumulus}, spine: {model: sn5600, nos: cumulus}}"
    assert old in text
    path = tmp_path / "cluster.yaml"
    path.write_text(
        text.replace(old, "speed_gbps: 200, leaf: {model: sn4600c, nos: cumulus}, spine: {model: sn4600c, nos: cumulus}}"), encoding="utf-8"
    )
    with pytest.raises(InputError) as caught:
        validate_file(path)
    speed = [f for f in caught.value.errors if f.dotted_path == "planes.storage.network.speed_gbps"]
    assert len(speed) == 1, [str(f) for f in speed]
    assert "the leaf and spine model 'sn4600c' cannot run 200 Gb/s" in speed[0].message
