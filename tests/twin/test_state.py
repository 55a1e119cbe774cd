"""The twin acts only on a state directory it created, and trusts only its own record (issue 30).

``lab down --state DIR`` on a directory the twin did not create (a home, ``/usr``, a folder of files, a symlink, another
user's) exits 2 and stops and removes nothing; ``lab up`` never adopts a directory that holds files; a corrupt or hostile
``lab.json`` (wrong types, huge or negative numbers, PID 1, paths outside the directory) is ignored and signals nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric import __main__ as cli
from fabric.errors import InputError, LabError
from fabric.plan.types import ClusterPlan
from fabric.twin import lab
from fabric.twin.procs import executable, start_ticks
from fabric.twin.state import MARKER, claim, load_state, owned, twin_executables
from tests.conftest import ROOT

LAB = ROOT / "inventories" / "lab" / "cluster.yaml"


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() if p.is_file() else b"<dir>" for p in sorted(directory.rglob("*"))}


@pytest.fixture
def home_like(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    """A directory of someone's files, and a process (an editor, say) working on one of them."""
    home = tmp_path / "home"
    (home / "frr" / "leaf01").mkdir(parents=True)
    (home / ".bashrc").write_text("alias ll='ls -l'\n", encoding="utf-8")
    (home / "frr" / "leaf01" / "frr.conf").write_text("hostname mine\n", encoding="utf-8")
    (home / "lab.json").write_text("{}", encoding="utf-8")
    editor = subprocess.Popen(["sh", "-c", "sleep 300", "sh", str(home / "frr" / "leaf01" / "frr.conf")])
    try:
        yield home, editor
    finally:
        editor.kill()
        editor.wait()


def test_lab_down_on_a_directory_the_twin_did_not_create_exits_2_and_touches_nothing(
    home_like: tuple[Path, subprocess.Popen[bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    home, editor = home_like
    before = snapshot(home)
    assert cli.main(["lab", "down", str(LAB), "--state", str(home)]) == 2
    err = capsys.readouterr().err
    assert str(home) in err, err
    assert "did not create it" in err, err
    assert "new or empty directory" in err, err
    assert editor.poll() is None, "a process the twin did not start was stopped"
    assert snapshot(home) == before, "something was removed"


def test_lab_down_refuses_home_top_level_symlinked_and_foreign_directories(
    home_like: tuple[Path, subprocess.Popen[bytes]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, editor = home_like
    twin = tmp_path / "twin"
    claim(twin, list)
    link = tmp_path / "link"
    link.symlink_to(twin)
    foreign = tmp_path / "foreign"
    claim(foreign, list)
    os.chown(foreign, 65534, 65534)
    shared = tmp_path / "shared"
    claim(shared, list)
    shared.chmod(0o777)
    corrupt = tmp_path / "corrupt"
    claim(corrupt, list)
    (corrupt / MARKER).write_text('{"token": 1}', encoding="utf-8")
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for directory, problem in [
        (Path("/"), "top-level"),
        (Path("/usr"), "top-level"),
        (home, "home directory"),
        (home.parent, "holds one"),
        (link, "symbolic link"),
        (foreign, "belongs to user 65534"),
        (shared, "writable by every user"),
        (corrupt, "corrupt"),
        (empty, "did not create it"),
    ]:
        before = snapshot(directory) if directory.parts[1:2] not in (("usr",), ()) else {}
        with pytest.raises(InputError, match=problem) as refused:
            lab.lab_down("lab", directory)
        assert "nothing was stopped or removed" in str(refused.value.findings[0].message)
        assert not before or snapshot(directory) == before
    assert editor.poll() is None
    assert lab.lab_down("lab", twin).removed == []  # the twin's own directory, named itself: accepted


def test_lab_up_never_adopts_a_directory_that_holds_files(plan: ClusterPlan, home_like: tuple[Path, subprocess.Popen[bytes]]) -> None:
    home, editor = home_like
    before = snapshot(home)
    with pytest.raises(InputError, match="holds files but no"):
        lab.lab_up(plan, home)
    assert editor.poll() is None
    assert snapshot(home) == before


def _valid_record(directory: Path, pid: int) -> dict[str, Any]:
    """A record as the twin writes it, naming ``pid`` as leaf01's sshd (which it is not)."""
    marker = owned(directory, list)
    run_dir = str(directory / "frr" / "leaf01")
    sshd = next(exe for exe, name in twin_executables().items() if name == "sshd")
    return {
        "cluster": "fz",
        "directory": str(directory),
        "namespaces": ["fz-leaf01"],
        "switches": [{"name": "leaf01", "namespace": "fz-leaf01", "ssh_port": 2200, "run_dir": run_dir, "nos": "frr"}],
        "client_key": str(directory / "ssh" / "client_ed25519"),
        "known_hosts": str(directory / "ssh" / "known_hosts"),
        "processes": [{"name": "leaf01/sshd", "pid": pid, "start": start_ticks(pid) or 0, "exe": sshd}],
        "station": "",
        "l2_switches": [],
        "token": marker.token,
        "boot": marker.boot,
    }


SLEEP = os.path.realpath(shutil.which("sleep") or "/bin/sleep")  # the victim's own executable: a record naming it is hostile
HOSTILE = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, -1, 2**22 + 1, 2**63, os.getpid(), 1.5, True, None, [], {}]),
    st.sampled_from(["/", "/etc/passwd", "/usr/bin/bash", "../../etc", "fz-../../x", "docker0", "", "1", "/usr/lib/frr/zebra", SLEEP]),
    st.sampled_from(["fz", "leaf01/sleep", "leaf01/zebra", "spine01/sshd", "fz-leaf01/../../run", "/tmp/x", "/"]),
    st.text(max_size=12),
)
# The fields a hostile record would change first; any other element is reached by a path of indexes.
FIELDS = [
    ("namespaces", 0), ("processes", 0, "pid"), ("processes", 0, "start"), ("processes", 0, "exe"), ("processes", 0, "name"),
    ("switches", 0, "run_dir"), ("switches", 0, "namespace"), ("switches", 0, "name"), ("switches", 0, "ssh_port"),
    ("client_key",), ("known_hosts",), ("directory",), ("cluster",), ("token",), ("boot",), ("processes", 0), ("processes",),
]  # fmt: skip


def _mutate(record: Any, path: Sequence[int | str], value: object) -> Any:
    """``record`` with the element at ``path`` (keys, or indexes taken modulo each level's size) replaced by ``value``."""
    if not path or not isinstance(record, (dict, list)) or not record:
        return value
    if isinstance(record, dict):
        keys = sorted(record)
        key = path[0] if isinstance(path[0], str) else keys[path[0] % len(keys)]
        return {**record, key: _mutate(record.get(key), path[1:], value)}
    items = list(record)
    index = int(path[0]) % len(items) if isinstance(path[0], int) else 0
    items[index] = _mutate(items[index], path[1:], value)
    return items


@pytest.fixture(scope="module")
def victim() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "600"])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def fuzz_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "twin"
        claim(directory, list)
        yield directory


def test_the_record_the_fuzzer_starts_from_is_valid_and_its_stale_process_is_left_alone(
    victim: subprocess.Popen[bytes], fuzz_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The unmutated record loads; its process (the victim, recorded as sshd) is named as left alone, not signalled."""
    monkeypatch.setattr(lab, "_netns", set)
    (fuzz_dir / "lab.json").write_text(json.dumps(_valid_record(fuzz_dir, victim.pid)), encoding="utf-8")
    state = load_state(fuzz_dir)
    assert state is not None
    assert state.pids == (victim.pid,)
    down = lab.lab_down("fz", fuzz_dir)
    assert victim.poll() is None
    assert [line for line in down.left if f"process {victim.pid} (leaf01/sshd) left alone" in line], down.left


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    target=st.sampled_from(["victim", "self", "init"]),
    path=st.sampled_from(FIELDS) | st.lists(st.integers(min_value=0, max_value=40), max_size=5).map(tuple),
    value=HOSTILE,
    cut=st.none() | st.integers(min_value=0, max_value=2000),
)
def test_a_corrupt_or_hostile_record_signals_nothing(  # noqa: PLR0917 - fixtures and hypothesis's draws
    victim: subprocess.Popen[bytes],
    fuzz_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    target: str,
    path: tuple[int | str, ...],
    value: object,
    cut: int | None,
) -> None:
    signalled: list[object] = []
    deleted: list[str] = []
    monkeypatch.setattr(os, "kill", lambda *a: signalled.append(a))
    monkeypatch.setattr(signal, "pidfd_send_signal", lambda *a: signalled.append(a))
    monkeypatch.setattr(lab, "_netns", lambda: {"docker0", "fz-other", "fz-leaf01", "init"})
    monkeypatch.setattr(lab, "_run", lambda *a, **_: deleted.append(a[-1]))
    pid = {"victim": victim.pid, "self": os.getpid(), "init": 1}[target]
    text = json.dumps(_mutate(_valid_record(fuzz_dir, pid), path, value))
    (fuzz_dir / "lab.json").write_text(text[:cut] if cut is not None else text, encoding="utf-8")
    (fuzz_dir / "keep").write_text("mine", encoding="utf-8")
    with contextlib.suppress(LabError):  # refused: the record is ignored
        loaded = load_state(fuzz_dir)
        assert loaded is not None
        kept = [*(s.run_dir for s in loaded.switches + loaded.l2_switches), loaded.client_key, loaded.known_hosts]
        assert all(fuzz_dir in Path(p).parents and ".." not in p for p in kept if p), f"{text}: a path outside the directory was accepted"
        names = [*loaded.namespaces, *(s.namespace for s in loaded.switches)]
        assert all(n.startswith("fz-") and "/" not in n for n in names), f"{text}: a foreign namespace was accepted"
        assert all(p.exe in twin_executables() and p.pid > 1 for p in loaded.processes), f"{text}: a process the twin never starts"
    down = lab.lab_down("fz", fuzz_dir)
    assert signalled == [], f"{text} signalled {signalled}"
    assert set(deleted) <= {"fz-leaf01"}, f"{text} deleted namespaces {deleted}"
    assert victim.poll() is None
    assert (fuzz_dir / "keep").read_text(encoding="utf-8") == "mine"
    assert not (fuzz_dir / "lab.json").exists()
    assert all("left alone" in line or "ignored" in line for line in down.left)
    assert executable(victim.pid) is not None
