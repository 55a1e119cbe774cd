"""Reading a definition: only regular files, never blocking, never more than the cap."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fabric.errors import InputError
from fabric.model.source import MAX_FILE_BYTES, read_definition


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "cluster.yaml"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        read_definition(fifo)


def test_a_symlink_to_a_device_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "cluster.yaml"
    link.symlink_to("/dev/zero")
    with pytest.raises(InputError, match="not a regular file"):
        read_definition(link)


def test_a_file_over_the_cap_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "cluster.yaml"
    with big.open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk used
    with pytest.raises(InputError, match=f"more than {MAX_FILE_BYTES}"):
        read_definition(big)


def test_a_utf8_byte_order_mark_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_bytes(b"\xef\xbb\xbfname: lab\n")
    assert read_definition(path) == "name: lab\n"
