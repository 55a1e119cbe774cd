"""Every failure a role reports names its reason: a message that shows a command's output shows its stderr too.

On a real node (shared/reference/real-node/verify-branch-580.txt) host_tuning's verify failed with an empty reason,
"host_tuning on gpu001: ", because its message showed only the read-back script's stdout while bash had written the
reason (the script was not there) to stderr. This reads every ``assert`` (``fail_msg``) and ``fail`` (``msg``) task of
every role and playbook, statically, and refuses a message that names ``X.stdout`` or ``X.stdout_lines`` of a registered
result without ``X.stderr``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT

ASSERT = ("assert", "ansible.builtin.assert")
FAIL = ("fail", "ansible.builtin.fail")
OUTPUT = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\.stdout(?:_lines)?\b")


def task_files() -> list[Path]:
    return sorted([*ROOT.glob("roles/*/tasks/*.yml"), *ROOT.glob("roles/*/handlers/*.yml"), *ROOT.glob("playbooks/**/*.yml")])


def tasks(node: Any) -> Iterator[dict[str, Any]]:
    """Every task in a tasks file or playbook, blocks and plays opened."""
    if isinstance(node, list):
        for item in node:
            yield from tasks(item)
    elif isinstance(node, dict):
        yield node
        for key in ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers"):
            if key in node:
                yield from tasks(node[key])


def message(task: dict[str, Any]) -> str | None:
    """The failure message of an assert or fail task, else None."""
    for module in ASSERT:
        if isinstance(task.get(module), dict):
            return str(task[module].get("fail_msg", task[module].get("msg", "")))
    for module in FAIL:
        if isinstance(task.get(module), dict):
            return str(task[module].get("msg", ""))
    return None


def stdout_without_stderr(text: str) -> list[str]:
    """The registered results ``text`` shows the stdout of but not the stderr."""
    return sorted({name for name in OUTPUT.findall(text) if f"{name}.stderr" not in text})


def offenders() -> list[str]:
    found = []
    for path in task_files():
        for task in tasks(yaml.safe_load(path.read_text(encoding="utf-8"))):
            text = message(task)
            if text is None:
                continue
            found += [
                f"{path.relative_to(ROOT)}: {task.get('name', '?')!r} shows {name}.stdout without {name}.stderr"
                for name in stdout_without_stderr(text)
            ]
    return found


def test_every_failure_message_that_shows_stdout_shows_stderr_too() -> None:
    assert offenders() == []


def test_the_messages_are_found_at_all() -> None:
    """The scan reaches the verify tasks of every role (a scan that finds nothing cannot fail)."""
    roles = {p.parts[-3] for p in ROOT.glob("roles/*/tasks/*.yml")}
    with_messages = {
        path.parts[-3]
        for path in task_files()
        if path.parts[-4:-3] == ("roles",)
        for task in tasks(yaml.safe_load(path.read_text(encoding="utf-8")))
        if message(task)
    }
    assert {"gpu_driver", "host_tuning", "nic_qos", "network_planes", "rdma_stack"} <= with_messages <= roles


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("host_tuning on {{ inventory_hostname }}: {{ __host_tuning_verify.stdout_lines | default([]) | join('; ') }}", ["__host_tuning_verify"]),
        ("x: {{ r.stdout }} {{ r.stderr }}", []),
        ("x: {{ r.stdout }} {{ s.stderr }}", ["r"]),
        ("x: {{ problems | join('; ') }}", []),
    ],
    ids=["the real-node message", "both", "another result's stderr", "no output"],
)
def test_the_rule_itself(text: str, named: list[str]) -> None:
    assert stdout_without_stderr(text) == named
