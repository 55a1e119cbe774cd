"""TCP ports for the twin's listeners (one sshd per switch on 127.0.0.1)."""

from __future__ import annotations

import random
import socket
from collections.abc import Collection
from pathlib import Path

from fabric.errors import LabError

LISTEN_PORTS_FROM = 10000
"""The lowest port a twin's sshd listens on; the highest is just below the kernel's ephemeral range."""


def free_port(low: int = LISTEN_PORTS_FROM, high: int | None = None, avoid: Collection[int] = ()) -> int:
    """A TCP port free on 127.0.0.1 now, below the kernel's ephemeral range (each twin records its own).

    Not ``bind(0)``: that port lies in the ephemeral range (``net.ipv4.ip_local_port_range``), where every outgoing
    connection on the machine takes its source port too, so one could take it between this probe and sshd's bind (seen
    in CI: an sshd that never wrote its PID file). Below the range only another listener can, and a random pick makes
    two twins probing at once unlikely to meet; a port in use is skipped, and so is one in ``avoid``: the ports this twin
    picked already, which no sshd holds until all of them start (11 picks on the lab twin meet about once in 400 builds;
    the later sshd then finds its port taken). Bounded: 256 picks from ``low`` to ``high - 1`` (``high``: the ephemeral
    range's first port).
    """
    high = ephemeral_low() if high is None else high
    pick = random.SystemRandom()
    for _ in range(256):
        port = pick.randrange(low, high)
        if port in avoid:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    msg = f"no free TCP port on 127.0.0.1 from {low} to {high - 1} after 256 picks: stop other twins (lab down) and retry"
    raise LabError(msg)


def ephemeral_low(path: Path = Path("/proc/sys/net/ipv4/ip_local_port_range"), default: int = 32768) -> int:
    """The first port of the kernel's ephemeral range (Linux's default 32768 where it cannot be read or makes no sense).

    Example:
        >>> ephemeral_low(Path("/nonexistent"))
        32768
    """
    try:
        low = int(path.read_text(encoding="ascii").split()[0])
    except (OSError, ValueError, IndexError):
        return default
    return low if LISTEN_PORTS_FROM + 256 <= low <= 65535 else default
