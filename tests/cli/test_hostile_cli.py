"""Bad paths and bad configs on the command line: exit 2 with the file and the problem, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.__main__ import main
from tests.conftest import DATA, ROOT

LAB = str(ROOT / "inventories" / "lab" / "cluster.yaml")


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.err


def test_render_into_an_existing_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    existing = tmp_path / "taken"
    existing.write_text("keep me\n", encoding="utf-8")
    code, err = cli(capsys, "render", LAB, "-o", str(existing))
    assert code == 2
    assert f"{existing}: error: (top level): -o: '{existing}' exists and is not a directory; name a directory" in err
    assert existing.read_text(encoding="utf-8") == "keep me\n"


def test_report_into_an_existing_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    existing = tmp_path / "taken"
    existing.write_text("keep me\n", encoding="utf-8")
    code, err = cli(capsys, "report", LAB, "-o", str(existing / "sub"))
    assert code == 2
    assert f"-o: '{existing}' exists and is not a directory" in err


def test_plan_into_a_missing_directory_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "missing" / "plan.json"
    code, err = cli(capsys, "plan", "-o", str(target), LAB)
    assert code == 2
    assert f"-o: the directory '{target.parent}' does not exist; create it first" in err
    assert not target.parent.exists()


def test_lint_configs_that_is_not_a_directory_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = cli(capsys, "lint", LAB, "--configs", str(tmp_path / "nowhere"))
    assert code == 2
    assert "--configs names no directory" in err


def _rendered(tmp_path: Path, capsys: pytest.CaptureFixture[str], nos: str) -> tuple[str, Path]:
    definition = str(DATA / "render" / nos / "cluster.yaml")
    assert cli(capsys, "render", definition, "-o", str(tmp_path))[0] == 0
    return definition, tmp_path


def test_lint_config_with_a_duplicated_line_is_an_input_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    definition, out = _rendered(tmp_path, capsys, "eos")
    config = sorted((out / "switches").glob("*/startup-config"))[0]
    lines = config.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("   priority-flow-control pause watchdog port action"))
    config.write_text("\n".join([*lines[: at + 1], lines[at], *lines[at + 1 :]]) + "\n", encoding="utf-8")
    code, err = cli(capsys, "lint", definition, "--configs", str(out))
    assert code == 2
    assert f"{config}: error: (top level): switch {config.parent.name}: its startup-config cannot be parsed (Found a duplicate section" in err


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"PORT": ', "Expecting value"),
        ("[1, 2]", "config_db.json holds a JSON list, not an object of tables"),
        ('{"PORT": [1]}', "config_db.json table 'PORT' is not an object of entries that are objects"),
        ("[" * 100_000, "nests deeper than JSON parsing allows"),
    ],
    ids=["bad-json", "json-list", "table-list", "deep-json"],
)
def test_lint_config_db_that_is_not_config_db_is_an_input_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, problem: str) -> None:
    definition, out = _rendered(tmp_path, capsys, "sonic")
    config = sorted((out / "switches").glob("*/config_db.json"))[0]
    config.write_text(text, encoding="utf-8")
    code, err = cli(capsys, "lint", definition, "--configs", str(out))
    assert code == 2
    assert f"{config}: error: (top level): switch {config.parent.name}: its config_db.json cannot be parsed (" in err
    assert problem in err


def test_lint_config_that_is_not_utf8_is_an_input_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    definition, out = _rendered(tmp_path, capsys, "eos")
    config = sorted((out / "switches").glob("*/startup-config"))[0]
    config.write_bytes(b"hostname \xff\n")
    code, err = cli(capsys, "lint", definition, "--configs", str(out))
    assert code == 2
    assert "cannot read its config" in err
