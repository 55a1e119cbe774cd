"""Forms no vendor text shows (marked UNPROVEN in fabric/lint/forms) are named in lint's output, line by line, as notes:
the config stays lint-clean, and a config without them has none."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import DATA, ROOT


def lint(case: str, *flags: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "fabric", "lint", str(DATA / "render" / case / "cluster.yaml"), *flags]
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def test_the_nxos_pfc_watchdog_lines_are_named_unproven_and_the_config_stays_clean() -> None:
    done = lint("nxos")
    assert done.returncode == 0, done.stderr
    assert "unproven: spine01 line" in done.stderr
    assert "priority-flow-control watch-dog shutdown-multiplier" in done.stderr
    data = json.loads(lint("nxos", "--json").stdout)
    assert data["clean"]
    commands = {note["command"] for note in data["unproven"]}
    assert {c.split()[1] for c in commands} >= {"watch-dog", "auto-restore"}


def test_a_config_with_only_proven_forms_has_no_note() -> None:
    """Cumulus has a form table with no UNPROVEN row: every line is matched, none is named."""
    data = json.loads(lint("cumulus", "--json").stdout)
    assert data["clean"]
    assert data["unproven"] == []
