"""``fabric.cli.exit_now``: the command line's process ends without the interpreter's teardown (issue 36), yet as the
interpreter would end it: ``atexit`` handlers run, buffered output is flushed, the exit code is kept, a flush that fails
gives 120, and a thread still running is waited for. Each case runs in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys, atexit, threading, time
from fabric.cli import exit_now

class Probe:  # its __del__ runs only in the interpreter's teardown (a module global)
    def __del__(self):
        sys.stderr.write("torn down\\n")

probe = Probe()
atexit.register(lambda: sys.stderr.write("atexit ran\\n"))
sys.stdout.write("buffered, no newline")
if "thread" in sys.argv:
    threading.Thread(target=lambda: (time.sleep(0.3), sys.stderr.write("thread finished\\n"))).start()
if "sys.exit" in sys.argv:
    sys.exit(3)
exit_now(3)
"""


BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # stdout block-buffered, as on a user's pipe


def _run(*words: str, stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROBE, *words],
        cwd=ROOT, env=BUFFERED, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_exit_now_skips_the_teardown_only() -> None:
    done = _run()
    assert done.returncode == 3
    assert done.stdout == "buffered, no newline"  # flushed (a pipe: block-buffered)
    assert "atexit ran" in done.stderr
    assert "torn down" not in done.stderr  # no teardown: module globals are never freed one by one


def test_the_probe_sees_a_teardown() -> None:
    """Negative control: the interpreter's own exit tears the module down, so the test above can fail."""
    done = _run("sys.exit")
    assert done.returncode == 3
    assert "atexit ran" in done.stderr
    assert "torn down" in done.stderr


def test_a_running_thread_is_waited_for() -> None:
    done = _run("thread")
    assert done.returncode == 3
    assert "thread finished" in done.stderr
    assert "torn down" in done.stderr  # the interpreter's exit, as without exit_now


def test_a_failed_flush_exits_120() -> None:
    """stdout a pipe nobody reads: the flush fails as at the interpreter's exit, whose status is 120."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = _run(stdout=write)
    finally:
        os.close(write)
    assert done.returncode == 120, done.stderr
    assert "atexit ran" in done.stderr
    assert "torn down" not in done.stderr


def test_python_m_fabric_exits_through_it(tmp_path: Path) -> None:
    """``python -m fabric`` ends through ``exit_now``: an ``atexit`` handler of a startup hook runs, a module global's
    ``__del__`` does not, and the code is the command's (2: a missing definition)."""
    hook = tmp_path / "sitecustomize.py"
    hook.write_text(PROBE.split("sys.stdout.write", maxsplit=1)[0].replace("from fabric.cli import exit_now", ""), encoding="utf-8")
    env = {**BUFFERED, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-m", "fabric", "validate", str(tmp_path / "missing.yaml")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "atexit ran" in done.stderr
    assert "torn down" not in done.stderr
