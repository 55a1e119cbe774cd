"""Every rule has a negative file under tests/data/invalid whose header lists its exact errors (line, path, message)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fabric.errors import InputError
from fabric.plan import plan_cluster
from fabric.validate import validate_file
from tests.conftest import DATA

CASES = sorted((DATA / "invalid").glob("*.yaml"))
HEADER = re.compile(r"^# expected_error: (\d+): ([^:]*): (.*)$")


def expected_errors(path: Path) -> list[tuple[int, str, str]]:
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        match = HEADER.match(line)
        if match:
            found.append((int(match.group(1)), match.group(2), match.group(3)))
    return found


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_invalid_definition_reports_exact_errors(case: Path) -> None:
    expected = expected_errors(case)
    assert expected, f"{case.name} carries no '# expected_error:' header"
    with pytest.raises(InputError) as caught:
        plan_cluster(validate_file(case).spec)
    got = [(f.line or 0, f.dotted_path, f.message) for f in caught.value.errors]
    assert sorted(got) == sorted(expected)
    assert all(f.file == str(case) for f in caught.value.errors), "every error names the file"
