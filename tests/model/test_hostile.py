"""Hostile definitions: every attack of tests/data/hostile/ is refused with its exact error, exit 2, no traceback,
in bounded time and memory, by every command that reads a definition.

All cases run in one child process (one interpreter start-up for all of them) under an address-space limit and a
timeout; a case that blew up memory or looped would kill the child and fail the test. The limits bound the run, they
are not a benchmark.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DATA, ROOT

HOSTILE = DATA / "hostile"
CASES = sorted(HOSTILE.glob("*.yaml"))
COMMANDS = ("validate", "plan", "render", "lint", "diff", "push", "report", "verify", "rollback")
HEADER = re.compile(r"^# expected_error: (\d+): ([^:]*): (.*)$")
MEMORY_LIMIT = 2 * 1024**3  # address space of the child: the interpreter and its libraries take about 0.6 GiB
TIMEOUT_S = 300  # for every case through every command; each case takes well under a second once loaded
CASE_LIMIT_S = 20.0  # no single case may take longer than this (generous: CI machines are slow and shared)

# Runs in the child: each (case, command) through the CLI entry point, stderr captured, any escaping exception recorded.
DRIVER = r"""
import contextlib, io, json, sys, tempfile, time, traceback
from fabric.__main__ import main
out = tempfile.mkdtemp()
results = []
for case in json.loads(sys.argv[1]):
    for command in (["validate"], ["plan"], ["render", "-o", out + "/r"], ["lint"], ["diff", "--offline"], ["push"],
                    ["report", "-o", out + "/h"], ["verify"], ["rollback", "--to", "x"]):
        err = io.StringIO()
        start = time.monotonic()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                code = main([*command[:1], case, *command[1:]])
            escaped = None
        except BaseException:
            code, escaped = None, traceback.format_exc()
        results.append({"case": case, "command": command[0], "code": code, "stderr": err.getvalue(),
                        "escaped": escaped, "seconds": time.monotonic() - start})
print(json.dumps(results))
"""


def expected_errors(path: Path) -> list[str]:
    """The ``# expected_error:`` lines of a case (UTF-16 cases are read as such), as the CLI prints them."""
    data = path.read_bytes()
    text = data.decode("utf-16") if data.startswith((b"\xff\xfe", b"\xfe\xff")) else data.decode("utf-8", "replace")
    found = []
    for line in text.splitlines():
        match = HEADER.match(line)
        if match:
            where = f"{path}:{match.group(1)}" if match.group(1) != "0" else str(path)
            found.append(f"{where}: error: {match.group(2)}: {match.group(3)}")
    return found


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


@pytest.fixture(scope="module")
def outcomes() -> dict[tuple[str, str], dict[str, object]]:
    cases = [str(c) for c in CASES] + ["/dev/zero", str(HOSTILE)]
    env = {**os.environ, "COLUMNS": "400"}
    result = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps(cases)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
        env=env,
        preexec_fn=_limit_memory,
    )
    assert result.returncode == 0, f"the driver died (memory or crash): {result.stderr[-3000:]}"
    return {(r["case"], r["command"]): r for r in json.loads(result.stdout)}


def test_every_case_carries_its_expected_error() -> None:
    assert len(CASES) >= 20
    for case in CASES:
        assert expected_errors(case), f"{case.name} carries no '# expected_error:' line"


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_hostile_definition_is_refused_by_every_command(case: Path, outcomes: dict[tuple[str, str], dict[str, object]]) -> None:
    expected = expected_errors(case)
    for command in COMMANDS:
        got = outcomes[(str(case), command)]
        assert got["escaped"] is None, f"{command}: an exception escaped:\n{got['escaped']}"
        assert got["code"] == 2, f"{command}: exit {got['code']}\n{got['stderr']}"
        stderr = str(got["stderr"])
        assert "Traceback" not in stderr
        errors = [line for line in stderr.splitlines() if ": error: " in line]
        assert errors == expected, f"{command}: errors differ"
        assert float(str(got["seconds"])) < CASE_LIMIT_S


@pytest.mark.parametrize("path", ["/dev/zero", "hostile-directory"])
def test_a_path_that_is_no_regular_file_is_refused(path: str, outcomes: dict[tuple[str, str], dict[str, object]]) -> None:
    key = path if path.startswith("/") else str(HOSTILE)
    for command in COMMANDS:
        got = outcomes[(key, command)]
        assert got["code"] == 2, got
        assert f"{key}: error: (top level): the definition is not a regular file" in str(got["stderr"])
