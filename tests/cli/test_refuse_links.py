"""``refuse_links`` reads each folder once (issue 36) and refuses exactly what one ``lstat`` per path refused."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fabric.cli import output
from fabric.cli.output import refuse_links
from fabric.errors import InputError

NAMES = ["a", "b", "c"]


def reference(root: Path, relatives: list[str]) -> None:
    """The check as it was: one ``lstat`` per path prefix, ``PurePosixPath`` parts."""
    seen: set[tuple[str, ...]] = set()
    for relative in relatives:
        parts = output._parts(relative)
        for depth in range(1, len(parts) + 1):
            prefix = parts[:depth]
            if prefix in seen:
                continue
            seen.add(prefix)
            path = root.joinpath(*prefix)
            try:
                mode = path.lstat().st_mode
            except FileNotFoundError:
                break
            except NotADirectoryError:
                raise output._refusal(root, path.parent, "is not a folder") from None
            if stat.S_ISLNK(mode):
                raise output._refusal(root, path, "is a symbolic link; output is never written through a link")
            last = depth == len(parts)
            if last and not stat.S_ISREG(mode):
                raise output._refusal(root, path, "exists and is not a regular file")
            if not last and not stat.S_ISDIR(mode):
                raise output._refusal(root, path, "exists and is not a folder")


def outcome(check: object, root: Path, relatives: list[str]) -> str:
    try:
        check(root, relatives)  # type: ignore[operator]
    except InputError as error:
        return str(error.findings[0].message)
    return "fine"


def plant(root: Path, layout: dict[str, str]) -> None:
    for relative, kind in sorted(layout.items()):
        path = root / relative
        if not path.parent.is_dir() or path.parent.is_symlink() or os.path.lexists(path):
            continue  # below a file or a link, or there already
        if kind == "file":
            path.write_text("x", encoding="utf-8")
        elif kind == "folder":
            path.mkdir()
        elif kind == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to(root / "nowhere" if kind == "dangling" else root)


paths = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layout=st.dictionaries(paths, st.sampled_from(["file", "folder", "fifo", "link", "dangling"]), max_size=8), wanted=st.lists(paths, max_size=8))
@example(layout={"a": "file"}, wanted=["a", "a/b"])  # a file, then a path below it: "is not a folder"
def test_refuses_what_an_lstat_per_path_refused(tmp_path_factory: pytest.TempPathFactory, layout: dict[str, str], wanted: list[str]) -> None:
    root = tmp_path_factory.mktemp("layout")
    plant(root, layout)
    assert outcome(refuse_links, root, wanted) == outcome(reference, root, wanted)


def test_a_readable_tree_is_read_folder_by_folder_not_path_by_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    relatives = [f"switches/leaf{n:02d}/{name}" for n in range(40) for name in ("frr.conf", "interfaces")] + ["plan.json"]
    for relative in relatives:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("x", encoding="utf-8")

    def no_lstat(self: Path) -> os.stat_result:
        msg = f"lstat {self}"
        raise AssertionError(msg)

    monkeypatch.setattr(Path, "lstat", no_lstat)
    refuse_links(tmp_path, relatives)
    (tmp_path / "switches" / "leaf07" / "frr.conf").unlink()
    (tmp_path / "switches" / "leaf07" / "frr.conf").symlink_to(tmp_path / "plan.json")
    with pytest.raises(InputError, match=r"leaf07/frr\.conf' is a symbolic link"):
        refuse_links(tmp_path, relatives)


def test_a_folder_it_cannot_read_falls_back_to_lstat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "switches").mkdir()
    (tmp_path / "switches" / "leaf01").symlink_to(tmp_path)
    (tmp_path / "plan.json").mkdir()

    def unreadable(path: str) -> os.DirEntry[str]:
        raise PermissionError(path)

    monkeypatch.setattr(output.os, "scandir", unreadable)
    with pytest.raises(InputError, match="leaf01' is a symbolic link"):
        refuse_links(tmp_path, ["switches/leaf01/frr.conf"])
    with pytest.raises(InputError, match=r"plan\.json' exists and is not a regular file"):
        refuse_links(tmp_path, ["plan.json"])
    refuse_links(tmp_path, ["cabling.csv", "dhcp/kea.json"])


def test_a_folder_it_may_list_but_not_search_fails_before_anything_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Read without execute permission: the names list, nothing in the folder can be reached (root may search any folder,
    so the permission is the mocked boundary here); the check fails as an lstat of a path in it would, not the write."""
    (tmp_path / "switches" / "leaf01").mkdir(parents=True)
    real = os.access

    def not_searchable(path: str, mode: int) -> bool:
        return False if path == str(tmp_path / "switches") and mode == os.X_OK else real(path, mode)

    monkeypatch.setattr(output.os, "access", not_searchable)
    with pytest.raises(PermissionError, match="Permission denied"):
        refuse_links(tmp_path, ["switches/leaf01/frr.conf"])
    refuse_links(tmp_path, ["cabling.csv"])


@pytest.mark.parametrize(("relative", "problem"), [("a//b", None), ("./a", None), ("a/./b", None), ("../a", "leaves"), ("a/", None), ("", "leaves")])
def test_a_path_is_split_as_pure_posix_path_splits_it(tmp_path: Path, relative: str, problem: str | None) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b").symlink_to(tmp_path)
    expected = outcome(reference, tmp_path, [relative]) if problem is None else None
    if problem is None:
        assert outcome(refuse_links, tmp_path, [relative]) == expected
    else:
        with pytest.raises(ValueError, match=problem):
            refuse_links(tmp_path, [relative])
