"""Nothing is written through a link already in an output directory (issue 30): ``render``, ``report``, ``export``,
``plan -o`` and ``schema -o`` refuse one (exit 2, nothing written) and write every file as a new file renamed over its
name (``fabric.cli.output``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric.__main__ import main
from fabric.cli import render_workers as parallel
from fabric.cli.output import refuse_links, write_files
from fabric.errors import InputError
from tests.conftest import ROOT

LAB = str(ROOT / "inventories" / "lab" / "cluster.yaml")
BAIT = b"outside, never to be written\n"


def tree(root: Path) -> dict[str, bytes | str]:
    """Every entry below ``root``: a file's bytes, a link's target (``-> …``), a folder as ``/``."""
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        out[key] = f"-> {os.readlink(path)}" if path.is_symlink() else "/" if path.is_dir() else path.read_bytes()
    return out


@pytest.fixture(scope="module")
def clean_render(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes | str]:
    target = tmp_path_factory.mktemp("clean") / "out"
    assert main(["render", LAB, "-o", str(target)]) == 0
    return tree(target)


def outside(tmp_path: Path) -> tuple[Path, Path]:
    """A file and a folder outside the output directory, as bait for a link."""
    bait = tmp_path / "elsewhere"
    bait.mkdir()
    (bait / "file").write_bytes(BAIT)
    (bait / "folder").mkdir()
    return bait / "file", bait / "folder"


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(
    ("planted", "kind"),
    [("plan.json", "file"), ("switches/leaf01", "folder"), ("switches/leaf01/frr.conf", "file"), ("switches", "folder"), ("dhcp", "folder")],
)
@pytest.mark.parametrize("jobs", ["1", "3"])
def test_render_refuses_a_link_in_the_output_and_writes_nothing(  # noqa: PLR0917 - pytest passes fixtures and parameters by name
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, planted: str, kind: str, jobs: str
) -> None:
    monkeypatch.setattr(parallel, "MIN_SWITCHES", 1)  # the forked workers' files are checked too
    bait_file, bait_folder = outside(tmp_path)
    out = tmp_path / "out"
    link = out / planted
    link.parent.mkdir(parents=True)
    link.symlink_to(bait_file if kind == "file" else bait_folder)
    before = tree(out)
    err = refused(capsys, "render", LAB, "-o", str(out), "--jobs", jobs)
    assert "symbolic link" in err
    assert str(link) in err.replace("\n", "")
    assert bait_file.read_bytes() == BAIT
    assert not list(bait_folder.iterdir())
    assert tree(out) == before, "nothing written"


def test_render_into_build_refuses_a_cluster_folder_that_is_a_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``-o`` left out writes build/<cluster>: the user named build, the cluster folder below it must be a folder."""
    _, bait_folder = outside(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "lab").symlink_to(bait_folder)
    assert "symbolic link" in refused(capsys, "render", LAB)
    assert not list(bait_folder.iterdir())


def test_the_named_output_directory_may_be_a_link_and_the_bytes_are_those_of_a_clean_render(
    tmp_path: Path, clean_render: dict[str, bytes | str]
) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "named").symlink_to(real)
    assert main(["render", LAB, "-o", str(tmp_path / "named")]) == 0
    assert tree(real) == clean_render


def test_a_rerender_replaces_its_files_and_leaves_no_temporary(tmp_path: Path, clean_render: dict[str, bytes | str]) -> None:
    out = tmp_path / "out"
    assert main(["render", LAB, "-o", str(out)]) == 0
    (out / "plan.json").write_text("stale", encoding="utf-8")
    assert main(["render", LAB, "-o", str(out), "--json"]) == 0
    assert tree(out) == clean_render


PATHS = ["plan.json", "cabling.csv", "dhcp", "dhcp/kea-dhcp4.json", "switches", "switches/leaf01", "switches/leaf01/frr.conf",
         "switches/stor-a", "switches/stor-a/nvue.sh", "topology-compute.svg", "unrelated"]  # fmt: skip


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(links=st.dictionaries(st.sampled_from(PATHS), st.sampled_from(["file", "folder", "dangling"]), max_size=4))
def test_any_layout_of_links_is_refused_or_rendered_right_never_followed(
    tmp_path_factory: pytest.TempPathFactory, clean_render: dict[str, bytes | str], links: dict[str, str]
) -> None:
    """Property: whatever links lie in the output directory, nothing outside it is written; the render is refused with
    nothing written, or (no link in its way) it writes exactly the clean render's files."""
    base = tmp_path_factory.mktemp("layout")
    bait_file, bait_folder = outside(base)
    out = base / "out"
    out.mkdir()
    for planted, kind in sorted(links.items()):
        path = out / planted
        if any(p.is_symlink() for p in [path, *path.parents]) or path.parent.is_symlink():
            continue  # below a link planted already
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to({"file": bait_file, "folder": bait_folder, "dangling": base / "nowhere" / "x"}[kind])
    before = tree(out)
    code = main(["render", LAB, "-o", str(out)])
    assert bait_file.read_bytes() == BAIT
    assert not list(bait_folder.iterdir())
    assert not (base / "nowhere").exists()
    in_the_way = [p for p, entry in before.items() if isinstance(entry, str) and entry.startswith("->") and p != "unrelated"]
    if in_the_way:
        assert code == 2
        assert tree(out) == before
    else:
        assert code == 0
        assert {k: v for k, v in tree(out).items() if k != "unrelated"} == clean_render


def test_report_and_export_refuse_a_link(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bait_file, bait_folder = outside(tmp_path)
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "report.html").symlink_to(bait_file)
    assert "symbolic link" in refused(capsys, "report", LAB, "-o", str(tmp_path / "r"))
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "slurm").symlink_to(bait_folder)
    assert "symbolic link" in refused(capsys, "export", "slurm", LAB, "-o", str(tmp_path / "e"))
    assert bait_file.read_bytes() == BAIT
    assert not list(bait_folder.iterdir())
    assert main(["export", "slurm", LAB, "-o", str(tmp_path / "fine"), "--json"]) == 0
    written = json.loads(capsys.readouterr().out)["files"]
    assert sorted(written) == sorted(str(p.relative_to(tmp_path / "fine")) for p in (tmp_path / "fine").rglob("*") if p.is_file())


@pytest.mark.parametrize("command", [["plan", LAB], ["schema"]])
def test_plan_and_schema_refuse_an_output_file_that_is_a_link(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    bait_file, _ = outside(tmp_path)
    link = tmp_path / "out.json"
    link.symlink_to(bait_file)
    assert "symbolic link" in refused(capsys, *command, "-o", str(link))
    assert bait_file.read_bytes() == BAIT
    assert main([*command, "-o", str(tmp_path / "real.json")]) == 0
    assert json.loads((tmp_path / "real.json").read_text(encoding="utf-8"))
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == [], "no temporary left behind"


def test_a_link_planted_after_the_check_is_never_followed(tmp_path: Path) -> None:
    """The writer itself (the race between ``refuse_links`` and the write): a link on the way ends the write with an
    error; a link in a file's place is replaced by the file."""
    bait_file, bait_folder = outside(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "switches").symlink_to(bait_folder)
    with pytest.raises(OSError, match=r"Too many levels|Not a directory"):
        write_files(out, {"switches/leaf01/frr.conf": "! leaf01\n"})
    assert not list(bait_folder.iterdir())
    (out / "plan.json").symlink_to(bait_file)
    assert write_files(out, {"plan.json": "{}\n"})["plan.json"]
    assert bait_file.read_bytes() == BAIT
    assert not (out / "plan.json").is_symlink()
    assert (out / "plan.json").read_text(encoding="utf-8") == "{}\n"


def test_paths_that_leave_the_directory_are_a_bug_not_a_write(tmp_path: Path) -> None:
    for bad in ("../x", "/etc/x", "a/../../x", ""):
        with pytest.raises(ValueError, match="leaves its directory"):
            write_files(tmp_path / "out", {bad: "x"})
    (tmp_path / "f").write_text("x", encoding="utf-8")
    with pytest.raises(InputError):
        refuse_links(tmp_path, ["f/x"])
