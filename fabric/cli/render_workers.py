"""Render the compute switches on several cores: worker processes forked once the plan is built, each staging its files
as it renders them, then moving them in.

Most of a large render is the switch configs, each rendered from its own facts. ``SwitchWorkers`` cuts the switches, in
plan order, into chunks that shrink as they go (``_chunks``, at most 255) and forks ``jobs - 1`` children
(``os.fork``, ``fabric.cli.forked``: they inherit the plan, nothing is sent to them); this process is the ``jobs``-th.
Whoever is free takes the next chunk: one byte per chunk in a pipe filled before the fork (``_ChunkQueue``; a pipe hands
each byte to exactly one reader). The children start at once; this process renders the plan's other files first
(``plan.json``, cabling, diagrams), then takes chunks too, so the cores stay busy to the end however the work divides.
A chunk's facts read only its switches' cables (``build_switch_facts(plan, only, links)``, indexed once per process).
Each process writes a switch's files into the render's staging folder as soon as they are rendered
(``fabric.cli.staging``) and lets go of them. Then, over one channel per child, in two steps:

1. ``rendered()``: each child reports the paths it rendered, or the first switch that failed (its index in plan order
   and the exception; it then takes no more chunks). The parent raises the failure with the lowest index: every chunk
   before it was taken, in order, and rendered or failed, so it is the same error, message and exit code as the serial
   render (``fabric.render.render_configs``), and nothing has entered the output directory (the staging folder goes).
2. ``write(target)`` then ``written()``: only then does each child move the files it staged into ``target`` and send
   back the SHA-256 of every file (or "" when no digest is asked for), while the caller moves in this process's. Before
   that the parent knows every path (``paths()``), so the caller can refuse a link in the output directory before
   anything enters it (``fabric.cli.output``).

With ``jobs=1`` (one core, ``--jobs 1``, ``GPUFABRIC_JOBS=1``) or fewer than ``MIN_SWITCHES`` switches (forking costs more
than it saves there) the parent renders and writes the same files itself, in the same two steps. A switch's text depends
on its facts alone, so the bytes are the same whoever renders it (``tests/cli/test_parallel_render.py`` compares them).

Example:
    >>> import tempfile
    >>> from fabric.cli.staging import Staging
    >>> from fabric.validate import validate_file
    >>> plan = validate_file("inventories/lab/cluster.yaml").plan
    >>> with Staging(Path(tempfile.mkdtemp())) as staging, SwitchWorkers(plan, staging, jobs=2) as workers:
    ...     workers.rendered()  # 4 switches: rendered in this process
    4
"""

from __future__ import annotations

import gc
import os
import traceback
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Self, cast

from fabric.cli.forked import Channel, Child
from fabric.cli.output import OutputTree
from fabric.cli.staging import Staging
from fabric.errors import FabricError, Finding, InputError
from fabric.plan.compute.facts import build_switch_facts
from fabric.plan.types import ClusterPlan, Link
from fabric.render import render_switch_files, templates_first
from fabric.validate import collector_paused

SMALLEST_SHARE = 32
"""The smallest chunk is at least the switches over ``jobs * SMALLEST_SHARE`` (a chunk's facts cost a little of their
own: the plan-wide tables they read), and at least one switch."""
MAX_CHUNKS = 255
"""One byte names a chunk in the queue."""

MIN_SWITCHES = 64
"""Below this many compute switches the parent renders them itself: a forked worker costs some 10-20 ms to start and
join, which sharing a render of 64 switches (~0.1 s) just repays."""

_Failure = tuple[int, BaseException]  # index in plan order of the switch that failed (-1: before any switch), the error


def default_jobs() -> int:
    """Worker processes for a render: ``GPUFABRIC_JOBS`` when set, else the cores this process may run on.

    Raises:
        InputError: ``GPUFABRIC_JOBS`` is not a whole number of at least 1.
    """
    given = os.environ.get("GPUFABRIC_JOBS")
    if given is None:
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if not given.isdecimal() or int(given) < 1:
        msg = f"GPUFABRIC_JOBS={given[:20]!r} is no number of render processes; set a whole number of at least 1 (1: this process alone)"
        raise InputError([Finding((), msg, file="GPUFABRIC_JOBS")], "GPUFABRIC_JOBS")
    return int(given)


class SwitchWorkers:
    """The compute switches' files of one plan, rendered by this process and ``jobs - 1`` forked workers (or this process
    alone), written on demand.

    Use it as a context manager: entering starts the workers, leaving stops them (the files not yet written are dropped).
    """

    def __init__(self, plan: ClusterPlan, staging: Staging, jobs: int | None = None, *, switches: bool = True) -> None:
        """Take the plan and the render's staging folder; ``jobs`` None means ``default_jobs()``; ``switches=False``
        renders no switch (an AVD render)."""
        self._plan, self._staging = plan, staging
        self._names = [s.name for s in plan.fabric.switches] if plan.fabric is not None and switches else []
        wanted = default_jobs() if jobs is None else jobs
        self.jobs = 1 if len(self._names) < MIN_SWITCHES else max(1, min(wanted, len(self._names)))
        self._chunks = _chunks(self._names, self.jobs)
        self._queue: _ChunkQueue | None = None
        self._paths: list[str] = []  # every rendered file's path, relative to the output directory
        self._pipes: list[Channel] = []
        self._children: list[Child] = []
        self._state = "new"

    def __enter__(self) -> Self:
        """Fork the workers (when there are more processes than this one); each starts rendering chunks at once."""
        if self.jobs > 1:
            self._fork()
        self._state = "rendering"
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        """Stop the workers: those still waiting for the write order are told to drop their files."""
        for pipe in self._pipes:
            try:
                if self._state in {"rendering", "rendered"}:
                    pipe.send(("abort",))
            except OSError:  # the child is gone already
                pass
            pipe.close()
        for child in self._children:
            if child.join(timeout_s=10) is None:
                child.kill()
        if self._queue is not None:
            self._queue.close()
        self._pipes, self._children, self._queue, self._state = [], [], None, "closed"

    def rendered(self) -> int:
        """Render this process's chunks, then wait until every switch is rendered; the number of files rendered.

        Raises:
            RenderError: the first switch, in plan order, that its NOS cannot express (as the serial render raises it).
            FabricError: a worker died without a word (killed, out of memory).
        """
        own: list[str] = []
        if self.jobs == 1:
            with collector_paused():  # nothing here holds a cycle (see fabric.validate.collector_paused)
                for facts in build_switch_facts(self._plan, self._names):  # every switch's facts first, as the serial render
                    own += _stage(self._staging, render_switch_files([facts]))
            self._paths = own
        else:
            assert self._queue is not None
            with collector_paused():
                failure = _render_chunks(self._plan, self._chunks, self._queue, self._staging, paths=own, catch=Exception)
            shares = cast("list[list[str]]", self._collect([] if failure is None else [failure]))
            self._paths = [*own, *(path for share in shares for path in share)]
        self._state = "rendered"
        return len(self._paths)

    def paths(self) -> list[str]:
        """Every rendered file's path relative to the output directory (after ``rendered()``)."""
        return list(self._paths)

    def write(self, target: Path, *, named: Path | None = None) -> None:
        """Order the workers' staged files moved under ``target`` (they move theirs while the caller moves this
        process's: ``Staging.commit``); no link below ``named`` (the directory the user named, default ``target``) is
        followed."""
        if self._state != "rendered":
            msg = "SwitchWorkers.write before rendered(): nothing may be written before every switch rendered"
            raise RuntimeError(msg)
        for pipe in self._pipes:
            pipe.send(("write", str(target), None if named is None else str(named)))
        self._state = "writing"

    def written(self) -> dict[str, str]:
        """Wait for the workers' files to be moved in; each of their relative paths → its SHA-256 (or "").

        Raises:
            OSError: a worker could not move its files in (permission, a file where a folder goes), as the serial write
                raises it.
        """
        if self._state != "writing":
            msg = "SwitchWorkers.written before write()"
            raise RuntimeError(msg)
        self._state = "written"
        digests: dict[str, str] = {}
        for part in cast("list[dict[str, str]]", self._collect([])):
            digests.update(part)
        return digests

    def _fork(self) -> None:
        templates_first(self._plan)  # Jinja once here, not once per worker, when a switch prints through templates
        self._queue = _ChunkQueue(len(self._chunks))
        # The plan's objects go to the permanent generation while forking: a child's collections never walk (and so never
        # copy) the pages the parent's objects share with it. The parent takes them back right after.
        gc.freeze()
        try:
            for _ in range(self.jobs - 1):
                work = partial(_work, self._plan, self._chunks, self._queue, self._staging)
                child, mine = Child.start(work, close_in_child=tuple(self._pipes))
                self._pipes.append(mine)
                self._children.append(child)
        finally:
            gc.unfreeze()

    def _collect(self, failures: list[_Failure]) -> list[object]:
        """Every worker's answer to the last step, in worker order; raises the failure of the first switch in plan order
        among theirs and ``failures`` (this process's)."""
        results: list[object] = []
        for k, pipe in enumerate(self._pipes):
            try:
                message = cast("tuple[str, object] | tuple[str, int, BaseException]", pipe.recv())
            except EOFError:
                code = self._children[k].join(timeout_s=10)
                msg = f"render worker {k + 1} of {len(self._pipes)} ended without a result (exit code {code}); try again with --jobs 1"
                raise FabricError(msg) from None
            if len(message) == 3:
                failures.append((message[1], message[2]))
            else:
                results.append(message[1])
        if failures:
            raise min(failures, key=lambda failure: failure[0])[1]
        return results


def _chunks(names: list[str], jobs: int) -> list[list[str]]:
    """``names`` cut, in order, into chunks that shrink as they go (guided self-scheduling: each chunk is the switches
    left over ``2 * jobs``, Polychronopoulos and Kuck, IEEE Trans. Computers 36(12), 1987): the first chunks are large,
    the last small, so the processes finish within a small chunk of each other whoever took what. No chunk is smaller
    than ``len(names) / (jobs * SMALLEST_SHARE)`` or than needed to stay within ``MAX_CHUNKS``.

    Example:
        >>> [len(c) for c in _chunks([f"s{i}" for i in range(100)], 2)]
        [25, 19, 14, 11, 8, 6, 5, 3, 3, 2, 1, 1, 1, 1]
    """
    if not names:
        return []
    smallest = max(1, -(-len(names) // MAX_CHUNKS), len(names) // (jobs * SMALLEST_SHARE))
    chunks: list[list[str]] = []
    start = 0
    while start < len(names):  # at most MAX_CHUNKS rounds: every chunk holds at least len(names) / MAX_CHUNKS
        size = max(smallest, -(-(len(names) - start) // (2 * jobs)))
        chunks.append(names[start : start + size])
        start += size
    return chunks


class _ChunkQueue:
    """The chunks' numbers, one byte each, in a pipe filled and closed for writing before the fork: ``take`` hands each
    number to exactly one process (a pipe read is atomic), in order; None once all are taken."""

    def __init__(self, count: int) -> None:
        """A queue of the chunk numbers ``0 … count - 1`` (at most ``MAX_CHUNKS``: within one pipe buffer, one write)."""
        if not 0 <= count <= MAX_CHUNKS:
            msg = f"{count} chunks: at most {MAX_CHUNKS} fit the queue"
            raise ValueError(msg)
        self._read, write = os.pipe()
        try:
            os.write(write, bytes(range(count)))
        finally:
            os.close(write)
        os.set_blocking(self._read, False)

    def take(self) -> int | None:
        """The next chunk's number; None when every chunk is taken."""
        try:
            data = os.read(self._read, 1)
        except BlockingIOError:
            return None
        return data[0] if data else None

    def close(self) -> None:
        """Close this process's end."""
        os.close(self._read)


class _LinkIndex:
    """Each switch's cables, by position in the cabling plan: a chunk's facts read only its switches' cables."""

    def __init__(self, plan: ClusterPlan) -> None:
        """Index ``plan.fabric.links`` once (an A end of any cable, a B end of a switch-to-switch one, as the facts read them)."""
        self._links: tuple[Link, ...] = tuple(plan.fabric.links) if plan.fabric is not None else ()
        self._by_switch: dict[str, list[int]] = {}
        for position, link in enumerate(self._links):
            self._by_switch.setdefault(link.a_device, []).append(position)
            if link.kind == "fabric":
                self._by_switch.setdefault(link.b_device, []).append(position)

    def of(self, names: list[str]) -> list[Link]:
        """The cables of ``names``, each once, in cabling order."""
        positions = sorted({p for name in names for p in self._by_switch.get(name, ())})
        return [self._links[p] for p in positions]


def _stage(staging: Staging, files: dict[str, str]) -> list[str]:
    """Stage one switch's rendered ``files``; their paths."""
    for path, text in files.items():
        staging.put(path, text)
    return list(files)


def _render_chunks(
    plan: ClusterPlan, chunks: list[list[str]], queue: _ChunkQueue, staging: Staging, *, paths: list[str], catch: type[BaseException]
) -> _Failure | None:
    """Take chunks until none is left, staging each switch's files as it renders (their paths added to ``paths``); the
    first failure (index in plan order, the error: -1 when a chunk's facts failed, as the serial render builds every
    switch's facts first), after which no chunk is taken."""
    starts = [0]
    for chunk in chunks:
        starts.append(starts[-1] + len(chunk))
    links: _LinkIndex | None = None
    while (number := queue.take()) is not None:
        index = -1
        try:
            links = links or _LinkIndex(plan)
            for facts in build_switch_facts(plan, chunks[number], links.of(chunks[number])):
                index = starts[number] if index < 0 else index + 1
                paths += _stage(staging, render_switch_files([facts]))
        except catch as exc:
            return index, exc
    return None


def _work(plan: ClusterPlan, chunks: list[list[str]], queue: _ChunkQueue, staging: Staging, pipe: Channel) -> None:
    """A worker: render and stage chunks until none is left; report; on the order, move its files in and send their digests."""
    gc.disable()  # a worker's objects hold no cycle, and it exits once written (fabric.validate.collector_paused)
    staging.entries = []  # this process's own files only
    try:
        paths: list[str] = []
        failure = _render_chunks(plan, chunks, queue, staging, paths=paths, catch=BaseException)
        if failure is not None:
            pipe.send(("failed", failure[0], _portable(failure[1])))
            return
        pipe.send(("rendered", paths))
        order = cast("tuple[str, str, str | None]", pipe.recv())  # ("write", target, named) or ("abort",)
        if order[0] == "write":
            with OutputTree(Path(order[1]), named=None if order[2] is None else Path(order[2])) as tree:
                pipe.send(("written", staging.commit(tree, staging.entries)))
    except (EOFError, BrokenPipeError):  # the parent stopped listening: nothing to report, nothing to write
        return
    except BaseException as exc:  # noqa: BLE001 - every error goes back to the parent, which raises it
        try:
            pipe.send(("failed", len(plan.fabric.switches) if plan.fabric else 0, _portable(exc)))  # the write's: after every switch
        except OSError:  # the parent is gone
            return


def _portable(exc: BaseException) -> BaseException:
    """``exc`` as it can cross the pipe: a bug keeps its traceback as a note; what cannot be pickled is described instead."""
    import pickle

    if not isinstance(exc, (FabricError, OSError)):
        exc.add_note("in a render worker:\n" + "".join(traceback.format_exception(exc)))
    try:
        pickle.dumps(exc)
    except Exception:  # noqa: BLE001 - any pickling failure: send a description instead
        return RuntimeError("".join(traceback.format_exception(exc)))
    return exc
