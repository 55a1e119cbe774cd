"""A forked child process and its channel: what the render workers need of ``multiprocessing``, without importing it.

``multiprocessing`` (with ``subprocess`` and ``locale`` beneath it) is some 5 ms of every render's start-up, before any
switch is rendered; ``os.fork`` and a socket pair do the same here. A ``Channel`` carries pickled objects, each framed by
its length; a ``Child`` runs a function in a forked process that ends with ``os._exit`` (no parent's ``atexit`` handler,
no buffer of the parent's written twice) and is reaped by PID, killed after a bound.

Example:
    >>> child, channel = Child.start(lambda end: end.send(("hello", end.recv())))
    >>> channel.send(41 + 1)
    >>> channel.recv(), child.join(timeout_s=10)
    (('hello', 42), 0)
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable

_LENGTH = struct.Struct("!Q")
MAX_MESSAGE = 1 << 32
"""The largest message a channel accepts (4 GiB): a length beyond it is a broken peer, not a message."""


class Channel:
    """One end of a socket pair carrying pickled objects between this process and a forked one (trusted: our own child)."""

    def __init__(self, end: socket.socket) -> None:
        """Own ``end`` (closed by ``close``)."""
        self._end = end

    def send(self, message: object) -> None:
        """Send one object (``BrokenPipeError`` / ``OSError`` once the peer is gone)."""
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        self._end.sendall(_LENGTH.pack(len(data)) + data)

    def recv(self) -> object:
        """The next object; ``EOFError`` when the peer closed its end (or died) first."""
        (size,) = _LENGTH.unpack(self._exactly(_LENGTH.size))
        if size > MAX_MESSAGE:
            msg = f"a message of {size} bytes from a render worker: more than {MAX_MESSAGE}"
            raise EOFError(msg)
        return pickle.loads(self._exactly(size))  # noqa: S301 - our own forked child's message

    def _exactly(self, size: int) -> bytes:
        chunks: list[bytes] = []
        left = size
        while left:
            chunk = self._end.recv(min(left, 1 << 20))
            if not chunk:
                raise EOFError
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        """Close this end (the peer's next ``recv`` ends with ``EOFError``)."""
        self._end.close()


class Child:
    """A forked process running ``work(channel)``, then ``os._exit`` (0, or 1 if ``work`` raised)."""

    def __init__(self, pid: int) -> None:
        """The child with this PID."""
        self.pid = pid
        self.exitcode: int | None = None

    @classmethod
    def start(cls, work: Callable[[Channel], object], close_in_child: tuple[Channel, ...] = ()) -> tuple[Child, Channel]:
        """Fork; the child runs ``work`` on its end of a new socket pair (closing ``close_in_child``, the parent's ends
        to earlier children, first). The parent's own buffers are flushed before, so the child never writes them again."""
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        mine, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # the child: never returns into the parent's code
            code = 1
            try:
                mine.close()
                for other in close_in_child:
                    other.close()
                work(Channel(theirs))
                code = 0
            finally:
                os._exit(code)
        theirs.close()
        return cls(pid), Channel(mine)

    def join(self, timeout_s: float) -> int | None:
        """Wait up to ``timeout_s`` for the child to end; its exit code (negative: the signal that ended it), or None."""
        if self.exitcode is not None:
            return self.exitcode
        ended = self._ended_within(timeout_s)
        if ended is not None:
            if not ended:
                return None
            _, status = os.waitpid(self.pid, 0)
            self.exitcode = os.waitstatus_to_exitcode(status)
            return self.exitcode
        deadline = time.monotonic() + timeout_s
        delay = 0.0005
        while True:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.exitcode = os.waitstatus_to_exitcode(status)
                return self.exitcode
            if time.monotonic() >= deadline:
                return None
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

    def _ended_within(self, timeout_s: float) -> bool | None:
        """Whether the child ended within ``timeout_s``, woken the moment it does (a pidfd, Linux 5.3+: the PID is ours
        and not yet reaped, so it names this child); None where there is no pidfd (then ``join`` polls)."""
        try:
            pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            return None
        try:
            return bool(select.select([pidfd], [], [], max(timeout_s, 0.0))[0])
        finally:
            os.close(pidfd)

    def kill(self) -> None:
        """SIGKILL the child (by its PID, ours since we have not reaped it) and reap it."""
        if self.exitcode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            _, status = os.waitpid(self.pid, 0)
            self.exitcode = os.waitstatus_to_exitcode(status)
