"""Render the compute switches on several cores: worker processes forked once the plan is built, then write the files.

Most of a large render is the switch configs, each rendered from its own facts. ``SwitchWorkers`` forks ``jobs`` children
(``os.fork``, ``fabric.cli.forked``: they inherit the plan, nothing is sent to them); child k takes every ``jobs``-th switch from the k-th in plan
order, builds their facts (``build_switch_facts(plan, only=...)``) and renders them in memory while the parent renders
the plan's other files. Then, over one pipe per child, in two steps:

1. ``rendered()``: each child reports its share rendered, or the first switch of its share that failed (its index in plan
   order and the exception). The parent raises the failure with the lowest index: the same error, message and exit code
   as the serial render (``fabric.render.render_configs``), and nothing has been written.
2. ``write(target)`` then ``written()``: only then do the children write their files under ``target``; each sends back the
   SHA-256 of every file (or "" when no digest is asked for). Before that the parent knows every path (``paths()``),
   so the caller can refuse a link in the output directory before anything is written (``fabric.cli.output``).

With ``jobs=1`` (one core, ``--jobs 1``, ``GPUFABRIC_JOBS=1``) or fewer than ``MIN_SWITCHES`` switches (forking costs more
than it saves there) the parent renders and writes the same files itself, in the same two steps. A switch's text depends
on its facts alone, so the bytes are the same either way (``tests/cli/test_parallel_render.py`` compares them).

Example:
    >>> from fabric.validate import validate_file
    >>> plan = validate_file("inventories/lab/cluster.yaml").plan
    >>> with SwitchWorkers(plan, jobs=2) as workers:  # 4 switches: rendered in this process
    ...     workers.rendered()
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
from fabric.cli.output import write_files
from fabric.errors import FabricError, Finding, InputError
from fabric.plan.compute.facts import build_switch_facts
from fabric.plan.types import ClusterPlan
from fabric.render import render_switch_files, templates_first
from fabric.validate import collector_paused

MIN_SWITCHES = 64
"""Below this many compute switches the parent renders them itself: two forked workers cost some 20-40 ms to start and
join, which a render of 64 switches (~0.1 s) just repays."""

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
        msg = f"GPUFABRIC_JOBS={given[:20]!r} is no number of worker processes; set a whole number of at least 1 (1: no workers)"
        raise InputError([Finding((), msg, file="GPUFABRIC_JOBS")], "GPUFABRIC_JOBS")
    return int(given)


class SwitchWorkers:
    """The compute switches' files of one plan, rendered by ``jobs`` forked workers (or this process), written on demand.

    Use it as a context manager: entering starts the workers, leaving stops them (the files not yet written are dropped).
    """

    def __init__(self, plan: ClusterPlan, jobs: int | None = None, *, switches: bool = True) -> None:
        """Take the plan; ``jobs`` None means ``default_jobs()``; ``switches=False`` renders no switch (an AVD render)."""
        self._plan = plan
        self._names = [s.name for s in plan.fabric.switches] if plan.fabric is not None and switches else []
        wanted = default_jobs() if jobs is None else jobs
        self.jobs = 1 if len(self._names) < MIN_SWITCHES else max(1, min(wanted, len(self._names)))
        self._files: dict[str, str] = {}  # the serial path's files
        self._paths: list[str] = []  # every rendered file's path, relative to the output directory
        self._target, self._digest, self._named = Path(), True, cast("Path | None", None)
        self._pipes: list[Channel] = []
        self._children: list[Child] = []
        self._state = "new"

    def __enter__(self) -> Self:
        """Fork the workers (when there are more than one); each starts rendering its share at once."""
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
        self._pipes, self._children, self._state = [], [], "closed"

    def rendered(self) -> int:
        """Wait until every switch is rendered; the number of files rendered.

        Raises:
            RenderError: the first switch, in plan order, that its NOS cannot express (as the serial render raises it).
            FabricError: a worker died without a word (killed, out of memory).
        """
        if self.jobs == 1:
            with collector_paused():  # nothing here holds a cycle (see fabric.validate.collector_paused)
                self._files = render_switch_files(build_switch_facts(self._plan, self._names))
            self._paths = list(self._files)
        else:
            self._paths = [path for share in cast("list[list[str]]", self._collect()) for path in share]
        self._state = "rendered"
        return len(self._paths)

    def paths(self) -> list[str]:
        """Every rendered file's path relative to the output directory (after ``rendered()``)."""
        return list(self._paths)

    def write(self, target: Path, *, digest: bool = True, named: Path | None = None) -> None:
        """Order the rendered files written under ``target`` (the workers write while the caller writes its own files);
        no link below ``named`` (the directory the user named, default ``target``) is followed."""
        if self._state != "rendered":
            msg = "SwitchWorkers.write before rendered(): nothing may be written before every switch rendered"
            raise RuntimeError(msg)
        self._target, self._digest, self._named = target, digest, named
        for pipe in self._pipes:
            pipe.send(("write", str(target), digest, None if named is None else str(named)))
        self._state = "writing"

    def written(self) -> dict[str, str]:
        """Wait for the files ordered written; each relative path → its SHA-256 (or "").

        Raises:
            OSError: a worker could not write (full disk, permission), as the serial write raises it.
        """
        if self._state != "writing":
            msg = "SwitchWorkers.written before write()"
            raise RuntimeError(msg)
        self._state = "written"
        if self.jobs == 1:
            return write_files(self._target, self._files, digest=self._digest, named=self._named)
        digests: dict[str, str] = {}
        for part in cast("list[dict[str, str]]", self._collect()):
            digests.update(part)
        return digests

    def _fork(self) -> None:
        templates_first(self._plan)  # Jinja once here, not once per worker, when a switch prints through templates
        # The plan's objects go to the permanent generation while forking: a child's collections never walk (and so never
        # copy) the pages the parent's objects share with it. The parent takes them back right after.
        gc.freeze()
        try:
            for k in range(self.jobs):
                work = partial(_work, self._plan, self._names, k, self.jobs)
                child, mine = Child.start(work, close_in_child=tuple(self._pipes))
                self._pipes.append(mine)
                self._children.append(child)
        finally:
            gc.unfreeze()

    def _collect(self) -> list[object]:
        """Every worker's answer to the last step, in worker order; raises the failure of the first switch in plan order."""
        results: list[object] = []
        failures: list[_Failure] = []
        for k, pipe in enumerate(self._pipes):
            try:
                message = cast("tuple[str, object] | tuple[str, int, BaseException]", pipe.recv())
            except EOFError:
                code = self._children[k].join(timeout_s=10)
                msg = f"render worker {k + 1} of {self.jobs} ended without a result (exit code {code}); try again with --jobs 1"
                raise FabricError(msg) from None
            if len(message) == 3:
                failures.append((message[1], message[2]))
            else:
                results.append(message[1])
        if failures:
            raise min(failures, key=lambda failure: failure[0])[1]
        return results


def _work(plan: ClusterPlan, names: list[str], k: int, jobs: int, pipe: Channel) -> None:
    """A worker: render switches k, k + jobs, … of ``names``; report; on the order, write them and send their digests."""
    mine = names[k::jobs]
    gc.disable()  # a worker's objects hold no cycle, and it exits once written (fabric.validate.collector_paused)
    index = -1  # the position in ``mine`` being rendered; -1 while the facts are built
    try:
        files: dict[str, str] = {}
        for facts in build_switch_facts(plan, mine):
            index += 1
            files.update(render_switch_files([facts]))
        index = len(names)  # rendered: a failure from here on is the write's
        pipe.send(("rendered", list(files)))
        order = cast("tuple[str, str, bool, str | None]", pipe.recv())  # ("write", target, digest, named) or ("abort",)
        if order[0] == "write":
            named = None if order[3] is None else Path(order[3])
            pipe.send(("written", write_files(Path(order[1]), files, digest=order[2], named=named)))
    except (EOFError, BrokenPipeError):  # the parent stopped listening: nothing to report, nothing to write
        return
    except BaseException as exc:  # noqa: BLE001 - every error goes back to the parent, which raises it
        where = k + index * jobs if 0 <= index < len(mine) else index
        try:
            pipe.send(("failed", where, _portable(exc)))
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
