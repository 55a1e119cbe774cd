"""``bench/bench_render.py --load N``: the CPU burners are the script's own children, bounded, stopped by PID, and end by
themselves. Not timed."""

from __future__ import annotations

import os
import time

import pytest

from bench.bench_render import MAX_BURNERS, load_summary, start_burners, stop_burners


def _children() -> set[int]:
    """This process's live children (Linux /proc)."""
    own = str(os.getpid())
    found: set[int] = set()
    for entry in os.listdir("/proc"):
        if entry.isdecimal():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == own and fields[0] != "Z":
                found.add(int(entry))
    return found


def test_burners_are_children_and_are_killed_by_pid() -> None:
    burners = start_burners(2, 600)
    try:
        assert {b.pid for b in burners} <= _children()
        time.sleep(0.3)
        assert all(b.poll() is None for b in burners)  # spinning
    finally:
        stop_burners(burners)
    assert all(b.returncode is not None for b in burners)
    assert not {b.pid for b in burners} & _children()


def test_a_burner_ends_by_itself() -> None:
    (burner,) = start_burners(1, 0.2)
    try:
        assert burner.wait(timeout=60) == 0
    finally:
        stop_burners([burner])


def test_the_count_is_bounded() -> None:
    with pytest.raises(SystemExit, match="give 0 to"):
        start_burners(MAX_BURNERS + 1, 1)
    assert start_burners(0, 1) == []


def test_load_summary() -> None:
    assert load_summary([]) == "no run"
    assert "median 2.00" in load_summary([1.0, 2.0, 3.0])
