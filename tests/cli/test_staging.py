"""The render's staging folder (fabric.cli.staging): files staged as they render, moved in only after every switch has
rendered, nothing left behind by a failure, a killed render's folder removed by the next one and nothing else."""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import fabric.cli.render_workers as parallel
import fabric.cli.staging as staging_module
from fabric.__main__ import main
from fabric.cli import output
from fabric.cli.output import OutputTree
from fabric.cli.staging import MAX_ABANDONED, STAGING_PREFIX, Staging, remove_abandoned
from fabric.errors import RenderError
from fabric.plan.compute.facts import SwitchFacts
from tests.render.conftest import definition, files_of, plan_of

ROOT = Path(__file__).resolve().parents[2]
CASE = "render/sonic-3tier"


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("jobs", [1, 3])
def test_a_switch_that_fails_mid_render_leaves_nothing_behind(
    jobs: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Files rendered before the failing switch were staged already: they go with the staging folder."""
    monkeypatch.setattr(parallel, "MIN_SWITCHES", 1)
    plan = plan_of(CASE)
    assert plan.fabric is not None
    failing = plan.fabric.switches[-1].name
    real_render, real_exit = parallel.render_switch_files, Staging.__exit__
    staged: list[int] = []

    def fails_at_the_last(facts: list[SwitchFacts]) -> dict[str, str]:
        if facts[0].switch.name == failing:
            msg = f"{failing}: cannot express this switch"
            raise RenderError(msg)
        return real_render(facts)

    def counting_exit(self: Staging, *error: object) -> None:
        staged.append(len(list(self.path.iterdir())))
        real_exit(self, *error)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel, "render_switch_files", fails_at_the_last)
    monkeypatch.setattr(Staging, "__exit__", counting_exit)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("the user's\n", encoding="utf-8")
    assert main(["render", str(definition(CASE)), "-o", str(tmp_path / "out"), "--jobs", str(jobs)]) == 2
    assert f"{failing}: cannot express this switch" in capsys.readouterr().err
    assert staged[0] > 2, "plan.json, the plan-wide files and switches were staged before the failure"
    assert listing(tmp_path) == ["out", "out/keep.txt"], "the staging folder went, the user's file stayed"


def test_a_new_output_directory_is_made_only_when_the_files_move_in(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "out"
    with Staging(out) as staging:
        assert staging.path.parent == tmp_path, "staged in the nearest folder that exists"
        staging.put("switches/x/frr.conf", "hostname x\n")
        assert not (tmp_path / "a").exists()
        with OutputTree(out) as tree:
            assert staging.commit(tree, staging.entries) == {"switches/x/frr.conf": ""}
    assert listing(tmp_path) == ["a", "a/b", "a/b/out", "a/b/out/switches", "a/b/out/switches/x", "a/b/out/switches/x/frr.conf"]


def test_an_existing_output_directory_holds_the_staging_folder(tmp_path: Path) -> None:
    with Staging(tmp_path / "build" / "c1", named=tmp_path / "build") as staging:
        assert staging.path.parent == tmp_path, "build/ does not exist yet: staged beside it"
    (tmp_path / "build").mkdir()
    with Staging(tmp_path / "build" / "c1", named=tmp_path / "build") as staging:
        assert staging.path.parent == tmp_path / "build"
        assert stat.S_IMODE(staging.path.stat().st_mode) == 0o700
    assert listing(tmp_path) == ["build"]


def test_staged_files_keep_the_mode_a_new_file_gets(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        assert main(["render", str(definition(CASE)), "-o", str(tmp_path / "out"), "--jobs", "1"]) == 0
    finally:
        os.umask(old)
    modes = {stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert modes == {0o640}


def test_across_file_systems_a_staged_file_is_copied_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder below the output directory that is a mount point: the rename fails with EXDEV (a file system's
    boundary, mocked here), so the bytes are copied into a new file renamed over the name."""
    real = os.replace

    def cross_device(src: str, dst: str, *, src_dir_fd: int | None = None, dst_dir_fd: int | None = None) -> None:
        if src_dir_fd is not None and src_dir_fd != dst_dir_fd and not src.startswith("."):
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))
        real(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

    monkeypatch.setattr(output.os, "replace", cross_device)
    capsys_out = tmp_path / "out"
    assert main(["render", str(definition(CASE)), "-o", str(capsys_out), "--jobs", "1"]) == 0
    expected = {path: text.encode() for path, text in files_of(CASE).items()}
    assert {str(p.relative_to(capsys_out)): p.read_bytes() for p in capsys_out.rglob("*") if p.is_file() and p.name != "plan.json"} == expected
    assert listing(tmp_path)[0] == "out", "no staging folder left"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(STAGING_PREFIX)]


HOLD = """
import sys, time
from pathlib import Path
from fabric.cli.staging import Staging
with Staging(Path(sys.argv[1])) as staging:
    staging.put("switches/x/frr.conf", "hostname x\\n")
    print(staging.path, flush=True)
    time.sleep(60)
"""


def held_staging(folder: Path) -> tuple[subprocess.Popen[str], Path]:
    """A process holding a staging folder in ``folder`` (a render mid-way), and that folder."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    return holder, Path(holder.stdout.readline().strip())


def test_a_killed_renders_folder_is_removed_by_the_next_render_and_a_live_ones_kept(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    killed, abandoned = held_staging(out)
    live, in_use = held_staging(out)
    try:
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
        assert abandoned.is_dir(), "a SIGKILLed render cannot clean up"
        mine = out / f"{STAGING_PREFIX}mine"  # not a name mkdtemp makes: the user's
        mine.mkdir()
        (out / f"{STAGING_PREFIX}abcd1234").symlink_to(tmp_path)  # a link named like one
        assert main(["render", str(definition(CASE)), "-o", str(out), "--jobs", "1"]) == 0
        assert not abandoned.exists(), "removed: no process held it"
        assert in_use.is_dir(), "kept: a render still holds it"
        assert list(in_use.iterdir())
        assert mine.is_dir()
        assert (out / f"{STAGING_PREFIX}abcd1234").is_symlink()
    finally:
        live.kill()
        live.wait(timeout=30)
        killed.kill()
    assert remove_abandoned(out) == [in_use.name]


def test_the_sweep_is_bounded(tmp_path: Path) -> None:
    for k in range(MAX_ABANDONED + 3):
        (tmp_path / f"{STAGING_PREFIX}{k:08d}").mkdir()
    assert len(remove_abandoned(tmp_path)) == MAX_ABANDONED
    assert len(remove_abandoned(tmp_path)) == 3


def test_only_the_process_that_made_the_folder_removes_it(tmp_path: Path) -> None:
    with Staging(tmp_path) as staging:
        pid = os.fork()
        if pid == 0:  # a forked worker leaving the block removes nothing
            staging.__exit__(None, None, None)
            os._exit(0 if staging.path.is_dir() else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert staging.path.is_dir()
    assert not staging.path.exists()


def test_a_place_where_no_folder_can_be_made_is_named_as_the_output(capsys: pytest.CaptureFixture[str]) -> None:
    """/proc takes no new folder (as root too): the error names the output directory and where staging was tried."""
    assert main(["render", str(definition(CASE)), "-o", "/proc/gpufabric-test/out", "--jobs", "1"]) == 1
    err = capsys.readouterr().err.replace("\n", "")
    assert "(making a staging folder in '/proc'): '/proc/gpufabric-test/out'" in err


def test_a_folder_that_cannot_be_locked_is_removed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """flock refused (a file system without locks): the error goes up and the folder just made goes with it."""

    def no_locks(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(staging_module.fcntl, "flock", no_locks)
    with pytest.raises(OSError, match="No locks available"), Staging(tmp_path / "out"):
        pass
    assert not list(tmp_path.iterdir())
