"""fabric.cli.forked: the render workers' fork and channel, without multiprocessing; a dead or hung worker is named and reaped."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fabric.cli import render_workers as parallel
from fabric.cli.forked import MAX_MESSAGE, Channel, Child
from fabric.cli.render_workers import SwitchWorkers
from fabric.cli.staging import Staging
from fabric.errors import FabricError
from tests.render.conftest import plan_of

ROOT = Path(__file__).resolve().parents[2]


def _echo(end: Channel) -> None:
    while (message := end.recv()) != "stop":
        end.send(message)


def test_messages_of_any_size_cross_both_ways_in_order() -> None:
    child, channel = Child.start(_echo)
    big = "x" * (3 << 20)  # larger than one recv
    for message in (1, ("a", None), big, {"k": [1, 2]}):
        channel.send(message)
        assert channel.recv() == message
    channel.send("stop")
    assert child.join(timeout_s=10) == 0
    channel.close()


@pytest.mark.parametrize("pidfd", [True, False], ids=["woken-by-a-pidfd", "polling-without-pidfd"])
def test_a_child_that_raises_exits_1_and_its_peer_sees_the_end(pidfd: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(_: Channel) -> None:
        raise RuntimeError("boom")

    if not pidfd:
        monkeypatch.setattr(os, "pidfd_open", lambda _: (_ for _ in ()).throw(OSError(errno.ENOSYS, "pidfd_open")))
    child, channel = Child.start(fail)
    with pytest.raises(EOFError):
        channel.recv()
    assert child.join(timeout_s=10) == 1


@pytest.mark.parametrize("pidfd", [True, False], ids=["woken-by-a-pidfd", "polling-without-pidfd"])
def test_a_hung_child_is_not_waited_for_past_its_bound_and_is_killed_by_pid(pidfd: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    def hang(_: Channel) -> None:
        time.sleep(60)

    if not pidfd:  # a kernel before 5.3 (or a seccomp filter): ENOSYS
        monkeypatch.setattr(os, "pidfd_open", lambda _: (_ for _ in ()).throw(OSError(errno.ENOSYS, "pidfd_open")))
    child, channel = Child.start(hang)
    started = time.monotonic()
    assert child.join(timeout_s=0.2) is None
    assert time.monotonic() - started < 5
    child.kill()
    assert child.exitcode == -signal.SIGKILL
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, os.WNOHANG)  # reaped: no zombie left
    channel.close()


def test_a_length_beyond_the_bound_is_refused_not_allocated() -> None:
    def lie(end: Channel) -> None:
        end._end.sendall((MAX_MESSAGE + 1).to_bytes(8, "big"))
        time.sleep(5)

    child, channel = Child.start(lie)
    with pytest.raises(EOFError, match="more than"):
        channel.recv()
    child.kill()
    channel.close()


def test_the_child_neither_runs_the_parents_atexit_nor_writes_its_buffers_again() -> None:
    code = (
        "import atexit, sys\n"
        "from fabric.cli.forked import Child\n"
        "atexit.register(lambda: print('atexit ran'))\n"
        "sys.stdout.write('buffered once\\n')\n"
        "child, channel = Child.start(lambda end: end.send('done'))\n"
        "print(channel.recv(), child.join(timeout_s=10))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.splitlines() == ["buffered once", "done 0", "atexit ran"]


def test_a_worker_killed_mid_render_is_named_and_nothing_is_written(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A worker that dies without a word (SIGKILL: the OOM killer) ends the render with its exit code; no zombie."""
    monkeypatch.setattr(parallel, "MIN_SWITCHES", 1)
    real = parallel.build_switch_facts
    parent = os.getpid()

    pids: list[int] = []

    def die_in_the_worker(plan: object, names: list[str], links: object) -> object:
        if os.getpid() != parent:  # the forked worker, at its first chunk
            os.kill(os.getpid(), signal.SIGKILL)
        deadline = time.monotonic() + 30  # the parent waits for the worker's death: the worker surely took a chunk
        while time.monotonic() < deadline and Path(f"/proc/{pids[0]}/stat").read_text().split(") ")[1][0] != "Z":
            time.sleep(0.01)
        return real(plan, names, links)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel, "build_switch_facts", die_in_the_worker)
    named = r"render worker 1 of 1 ended without a result \(exit code -9\)"
    with Staging(tmp_path / "out") as staging, SwitchWorkers(plan_of("render/cumulus-3tier"), staging, jobs=2) as workers:
        pids = [child.pid for child in workers._children]
        with pytest.raises(FabricError, match=named):
            workers.rendered()
    assert not list(tmp_path.iterdir()), "the staging folder is gone, and nothing else was written"
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaped: no zombie left


def test_the_chunk_queue_hands_each_chunk_to_exactly_one_process() -> None:
    """Two processes draining one queue: every chunk number taken once, in increasing order within each."""
    queue = parallel._ChunkQueue(parallel.MAX_CHUNKS)

    def drain(end: Channel) -> None:
        taken = []
        while (number := queue.take()) is not None:
            taken.append(number)
            time.sleep(0.0005)
        end.send(taken)

    child, channel = Child.start(drain)
    mine = []
    while (number := queue.take()) is not None:
        mine.append(number)
        time.sleep(0.0005)
    theirs = channel.recv()
    assert isinstance(theirs, list)
    assert child.join(timeout_s=10) == 0
    assert sorted(mine + theirs) == list(range(parallel.MAX_CHUNKS))
    assert mine == sorted(mine)
    assert theirs == sorted(theirs)
    with pytest.raises(ValueError, match="at most 255"):
        parallel._ChunkQueue(256)
    queue.close()
    channel.close()
