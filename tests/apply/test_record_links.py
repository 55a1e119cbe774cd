"""The change record never writes through a link planted in the state directory (issue 30)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.apply.record import ChangeRecord, push_lock
from fabric.errors import RecordError


@pytest.mark.parametrize("planted", ["audit.jsonl", "push.lock"])
def test_a_link_in_the_state_directory_is_an_error_not_a_write(tmp_path: Path, planted: str) -> None:
    bait = tmp_path / "bait"
    bait.write_text("untouched\n", encoding="utf-8")
    state = tmp_path / "state"
    state.mkdir()
    (state / planted).symlink_to(bait)
    definition = tmp_path / "cluster.yaml"
    definition.write_text("name: lab\n", encoding="utf-8")
    with pytest.raises((RecordError, OSError)), push_lock(state):  # noqa: PT012 - the lock and the first audit line both write
        record = ChangeRecord(state, "c1")
        record.started(record.begin(definition, commit=False, rollback_to=None), ["leaf01"])
    assert bait.read_text(encoding="utf-8") == "untouched\n"
