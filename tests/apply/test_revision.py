"""The change record's git revision never runs a program from the definition's directory (issue 30).

A repository prepared by someone else names programs git would run: ``core.fsmonitor``, ``diff.external``, a clean
filter through ``.gitattributes``, hooks. Each of them here touches a marker; recording a change (what ``push`` does,
dry run or not) must leave no marker, and still record the right commit and whether the file differs from it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric.apply.record import ChangeRecord
from fabric.apply.revision import definition_revision

GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "init.defaultBranch=main"]


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run([*GIT, *args], cwd=cwd, capture_output=True, text=True, check=True, env=env).stdout.strip()


def hostile_repository(tmp_path: Path, *, pack: bool = False) -> tuple[Path, Path, Path]:
    """A checkout whose config and attributes run a program that touches ``marker``; returns (definition, marker, repo)."""
    repo, marker = tmp_path / "repo", tmp_path / "MARKER"
    repo.mkdir()
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n", encoding="utf-8")
    script.chmod(0o755)
    git(repo, "init", "-q")
    definition = repo / "site" / "cluster.yaml"
    definition.parent.mkdir()
    definition.write_text("name: lab\n", encoding="utf-8")
    (repo / ".gitattributes").write_text("*.yaml filter=evil diff=evil\n", encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "first")
    if pack:
        git(repo, "gc", "-q")
    for key in ("core.fsmonitor", "diff.external", "filter.evil.clean", "filter.evil.smudge", "diff.evil.textconv", "core.pager"):
        git(repo, "config", key, str(script))
    git(repo, "config", "core.hooksPath", str(tmp_path))
    for hook in ("post-index-change", "reference-transaction"):
        (tmp_path / hook).symlink_to(script)
    marker.unlink(missing_ok=True)
    return definition, marker, repo


@pytest.mark.parametrize("pack", [False, True], ids=["loose", "packed"])
def test_recording_a_change_runs_nothing_from_the_definitions_repository(tmp_path: Path, pack: bool) -> None:
    definition, marker, repo = hostile_repository(tmp_path, pack=pack)
    head = git(repo, "rev-parse", "HEAD")
    header = ChangeRecord(tmp_path / "state", "c1").begin(definition, commit=False, rollback_to=None)
    assert not marker.exists(), "a program named by the definition's repository ran"
    assert header["definition_revision"] == head
    definition.write_text("name: lab2\n", encoding="utf-8")
    assert definition_revision(definition) == head + "+dirty"
    assert not marker.exists()


def test_a_linked_worktree_and_a_branch_in_packed_refs(tmp_path: Path) -> None:
    definition, marker, repo = hostile_repository(tmp_path, pack=True)
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "other")
    marker.unlink(missing_ok=True)
    inside = tmp_path / "wt" / "site" / "cluster.yaml"
    assert definition_revision(inside) == git(repo, "rev-parse", "HEAD")
    assert definition_revision(definition) == git(repo, "rev-parse", "HEAD")
    assert not marker.exists()


def test_no_repository_and_an_untracked_file(tmp_path: Path) -> None:
    plain = tmp_path / "cluster.yaml"
    plain.write_text("name: lab\n", encoding="utf-8")
    assert definition_revision(plain) is None
    definition, _, repo = hostile_repository(tmp_path)
    untracked = definition.with_name("new.yaml")
    untracked.write_text("name: new\n", encoding="utf-8")
    assert definition_revision(untracked) == git(repo, "rev-parse", "HEAD") + "+dirty"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.binary(max_size=300), edit=st.booleans())
def test_clean_or_dirty_matches_git_for_any_bytes(tmp_path_factory: pytest.TempPathFactory, content: bytes, edit: bool) -> None:
    """Whatever the file holds, the revision says what a filter-free ``git diff`` says (property)."""
    repo = tmp_path_factory.mktemp("r")
    git(repo, "init", "-q")
    definition = repo / "cluster.yaml"
    definition.write_bytes(content)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "x", "--allow-empty")
    if edit:
        definition.write_bytes(content + b"#")
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "cluster.yaml"], cwd=repo, check=False).returncode != 0
    assert definition_revision(definition) == git(repo, "rev-parse", "HEAD") + ("+dirty" if dirty else "")
