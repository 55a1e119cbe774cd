"""The CLI's contract with pipelines: exit codes, JSON output, nothing written on bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import DATA, EXAMPLES, ROOT


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "250"}
    return subprocess.run([sys.executable, "-m", "fabric", *args], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False, env=env)


def test_validate_all_examples_exit_0() -> None:
    result = run("validate", *map(str, EXAMPLES))
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("valid") == len(EXAMPLES)


def test_invalid_definition_exits_2_with_file_line_and_path() -> None:
    case = DATA / "invalid" / "plane-overlap.yaml"
    result = run("validate", str(case))
    assert result.returncode == 2
    assert f"{case}:6" in result.stderr.replace("\n", "")
    assert "planes.storage.cidr" in result.stderr


def test_validate_json_lists_findings() -> None:
    result = run("validate", "--json", str(DATA / "invalid" / "pfc-wrong-priority.yaml"))
    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert report["valid"] is False
    finding = report["files"][0]["findings"][0]
    assert finding["path"] == "roce.pfc_priorities"
    assert finding["severity"] == "error"
    assert isinstance(finding["line"], int)


def test_plan_json_is_the_full_plan() -> None:
    result = run("plan", "--json", "inventories/lab/cluster.yaml")
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    assert [s["name"] for s in plan["fabric"]["spines"]] == ["spine01", "spine02"]


def test_plan_writes_nothing_on_bad_input(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    result = run("plan", "-o", str(out), str(DATA / "invalid" / "plane-overlap.yaml"))
    assert result.returncode == 2
    assert not out.exists()


def test_schema_command_prints_json_schema() -> None:
    result = run("schema")
    assert result.returncode == 0
    assert json.loads(result.stdout)["title"] == "gpufabric cluster definition"


def test_plan_of_a_cloud_example_shows_networks_nic_layout_and_resources() -> None:
    result = run("plan", str(ROOT / "inventories" / "aws-p5" / "cluster.yaml"))
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "Resources pulumi will create" in text
    assert "aws:ec2/instance:Instance │ 17" in text
    assert "0/0 interface→inband, 0/1 efa-only→compute, 1/0 efa-only→compute" in text
    assert "'efa-only': 32" in text
    assert "no public IPv4 on cluster nodes" in text


def test_render_writes_configs_cabling_plan_and_an_svg_diagram(tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    result = run("render", str(ROOT / "inventories" / "lab" / "cluster.yaml"), "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr
    files = ["cabling.csv", "dhcp", "plan.json", "switches", "topology-compute.svg", "topology-oob.svg", "topology-storage.svg"]
    assert sorted(p.name for p in tmp_path.iterdir()) == files
    oob = ["oob-mgmt", "oob-su1", "oob-su2", "oob-su3", "oob-su4"]  # the twin's OOB plane (planes.oob.network)
    storage = ["stor-a", "stor-b"]  # the twin's collapsed storage / in-band pair (planes.storage.network)
    assert sorted(p.name for p in (tmp_path / "switches").iterdir()) == ["leaf01", "leaf02", *oob, "spine01", "spine02", *storage]
    svg = ET.parse(tmp_path / "topology-compute.svg").getroot()
    labels = {t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")}
    assert {"spine01", "leaf02", "gpu · SU 1-4"} <= labels
    # every plane's switches are counted, not only the compute fabric's
    assert f"files for 11 switches (compute 4, storage 2, oob 5) into {tmp_path}" in result.stdout
    assert json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))["name"] == "lab"


def test_render_json_lists_every_file_written_with_its_digest(tmp_path: Path) -> None:
    import hashlib

    result = run("render", "--json", str(ROOT / "inventories" / "lab" / "cluster.yaml"), "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr
    files = json.loads(result.stdout)["files"]
    on_disk = {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()}
    assert set(files) == on_disk
    assert all(hashlib.sha256((tmp_path / name).read_bytes()).hexdigest() == digest for name, digest in files.items())


def test_output_off_a_terminal_is_plain_and_never_wrapped() -> None:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | {"TERM": "xterm-256color", "FORCE_COLOR": ""}
    result = subprocess.run(
        [sys.executable, "-m", "fabric", "plan", "inventories/onprem-roce/cluster.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert "\x1b[" not in result.stdout, "no colour codes in a pipe"
    assert "oversubscription" in result.stdout
    assert "oversub…" not in result.stdout
    assert any(line.startswith("scalable units 2, rails 8,") and line.endswith("oversubscription 1:1") for line in result.stdout.splitlines())


def test_render_writes_nothing_on_bad_input(tmp_path: Path) -> None:
    result = run("render", str(DATA / "invalid" / "pfc-wrong-priority.yaml"), "-o", str(tmp_path / "out"))
    assert result.returncode == 2
    assert not (tmp_path / "out").exists()


def test_render_imports_neither_the_apply_nor_the_nodes_stage(tmp_path: Path) -> None:
    """What a command does not need, it does not import (they cost a third of render's start-up)."""
    code = (
        "import sys\nfrom fabric.__main__ import main\n"
        f"assert main(['render', 'inventories/lab/cluster.yaml', '-o', {str(tmp_path)!r}]) == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith(('fabric.apply', 'fabric.nodes', 'fabric.lint', 'fabric.reports.html'))))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_report_writes_one_html_page(tmp_path: Path) -> None:
    result = run("report", "--json", str(ROOT / "inventories" / "onprem-roce" / "cluster.yaml"), "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["lint_clean"] is True
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]
    assert "<h2>RoCE contract end to end</h2>" in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_render_format_avd_writes_structured_config_per_eos_switch(tmp_path: Path) -> None:
    result = run("render", str(DATA / "render" / "eos" / "cluster.yaml"), "--format", "avd", "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "structured_configs").iterdir()) == ["leaf01.yml", "leaf02.yml", "spine01.yml", "spine02.yml"]
    config = yaml.safe_load((tmp_path / "structured_configs" / "leaf01.yml").read_text(encoding="utf-8"))
    assert config["hostname"] == "leaf01"
    assert {i["mtu"] for i in config["ethernet_interfaces"]} == {9214}


def test_render_format_avd_without_eos_is_an_input_error(tmp_path: Path) -> None:
    result = run("render", str(ROOT / "inventories" / "lab" / "cluster.yaml"), "--format", "avd", "-o", str(tmp_path / "out"))
    assert result.returncode == 2
    assert "no tier runs eos; use --format nos" in result.stderr
    assert not (tmp_path / "out").exists()
