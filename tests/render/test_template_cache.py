"""The CLI's compiled-template cache: the same bytes with it cold, warm or off, and no failure where it cannot be written."""

from __future__ import annotations

import hashlib
import io
import marshal
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from jinja2.bccache import bc_magic

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = "inventories/onprem-roce/cluster.yaml"


def _render(out: Path, **env: str) -> dict[str, bytes]:
    subprocess.run(
        [sys.executable, "-m", "fabric", "render", EXAMPLE, "-o", str(out)],
        cwd=ROOT,
        env={**os.environ, "GPUFABRIC_NO_CACHE": "0", **env},
        check=True,
        capture_output=True,
    )
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_cold_warm_and_off_give_the_same_files(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cold = _render(tmp_path / "cold", XDG_CACHE_HOME=str(cache))
    entries = sorted((cache / "gpufabric" / "jinja").iterdir())
    assert entries, "the first run fills the cache"
    assert (cache / "gpufabric" / "jinja").stat().st_mode & 0o077 == 0, "the cache is private to the user"
    warm = _render(tmp_path / "warm", XDG_CACHE_HOME=str(cache))
    assert sorted((cache / "gpufabric" / "jinja").iterdir()) == entries, "the second run compiles nothing new"
    off = _render(tmp_path / "off", GPUFABRIC_NO_CACHE="1")
    assert cold == warm == off


def test_a_cache_that_cannot_be_made_only_costs_the_compile(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache directory would go", encoding="utf-8")
    files = _render(tmp_path / "out", XDG_CACHE_HOME=str(blocked))
    assert files == _render(tmp_path / "ref", GPUFABRIC_NO_CACHE="1")


# A cache entry is code the render runs (issue 30): only a directory and entries private to the user are trusted.

LAB = "inventories/lab/cluster.yaml"


def _lab(out: Path, cache: Path) -> dict[str, bytes]:
    done = subprocess.run(
        [sys.executable, "-m", "fabric", "render", LAB, "-o", str(out)],
        cwd=ROOT,
        env={**os.environ, "GPUFABRIC_NO_CACHE": "0", "XDG_CACHE_HOME": str(cache)},
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _jinja_part(data: bytes) -> bytes:
    """Jinja's own bytes of an entry (``bc_magic``, pickled checksum, marshalled code), behind any header of ours."""
    at = data.find(bc_magic)
    assert at >= 0
    return data[at:]


def _evil(entry: bytes, marker: Path) -> bytes:
    """Jinja's bytes of ``entry`` with its code swapped for code that touches ``marker``: what an attacker would plant."""
    stream = io.BytesIO(_jinja_part(entry))
    stream.read(len(bc_magic))
    checksum = pickle.load(stream)  # our own entry, written by the render just before
    code = compile(f"open({str(marker)!r}, 'w').close()", "<planted>", "exec")
    return bc_magic + pickle.dumps(checksum, 2) + marshal.dumps(code)


@pytest.fixture
def warm(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A cache filled by one render, and that render's files."""
    cache = tmp_path / "cache"
    files = _lab(tmp_path / "first", cache)
    entries = cache / "gpufabric" / "jinja"
    assert list(entries.iterdir())
    return entries, files


@pytest.mark.parametrize("hostile", ["world-writable", "other owner", "a link"])
def test_a_cache_directory_others_can_write_is_not_used(tmp_path: Path, warm: tuple[Path, dict[str, bytes]], hostile: str) -> None:
    entries, files = warm
    marker = tmp_path / "MARKER"
    for entry in entries.iterdir():
        entry.write_bytes(_evil(entry.read_bytes(), marker))
    if hostile == "world-writable":
        entries.chmod(0o777)
    elif hostile == "other owner":
        if os.geteuid() != 0:
            pytest.skip("chown to another user needs root")
        os.chown(entries, 65534, 65534)  # nobody
    else:
        entries.rename(tmp_path / "elsewhere")
        entries.symlink_to(tmp_path / "elsewhere")
    assert _lab(tmp_path / "out", entries.parent.parent) == files
    assert not marker.exists(), "code from a cache others can write ran"


@pytest.mark.parametrize("hostile", ["group-writable", "a link", "other owner"])
def test_an_entry_others_can_write_is_not_read(tmp_path: Path, warm: tuple[Path, dict[str, bytes]], hostile: str) -> None:
    """The directory is private, yet an entry in it is not ours alone: it is not read (a whole, valid entry but for that)."""
    entries, files = warm
    marker = tmp_path / "MARKER"
    for entry in sorted(entries.iterdir()):
        jinja = _evil(entry.read_bytes(), marker)
        planted = hashlib.sha256(jinja).digest() + jinja  # what PrivateBytecodeCache would accept from a private entry
        if hostile == "a link":
            (tmp_path / entry.name).write_bytes(planted)
            entry.unlink()
            entry.symlink_to(tmp_path / entry.name)
        else:
            entry.write_bytes(planted)
            if hostile == "group-writable":
                entry.chmod(0o620)
            elif os.geteuid() == 0:
                os.chown(entry, 65534, 65534)
            else:
                pytest.skip("chown to another user needs root")
    assert _lab(tmp_path / "out", entries.parent.parent) == files
    assert not marker.exists()


@pytest.mark.parametrize("keep", [2, len(bc_magic) + 5, len(bc_magic) + 60, -7], ids=["magic", "checksum", "code", "the-last-bytes"])
def test_a_truncated_entry_is_compiled_again(tmp_path: Path, warm: tuple[Path, dict[str, bytes]], keep: int) -> None:
    entries, files = warm
    whole = {entry.name: entry.read_bytes() for entry in entries.iterdir()}
    for entry in entries.iterdir():
        data = entry.read_bytes()
        start = len(data) - len(_jinja_part(data))  # cut inside Jinja's own bytes, whatever header comes first
        entry.write_bytes(data[: start + keep] if keep > 0 else data[:keep])
    assert _lab(tmp_path / "out", entries.parent.parent) == files
    assert {entry.name: entry.read_bytes() for entry in entries.iterdir()} == whole, "each damaged entry was written again"
