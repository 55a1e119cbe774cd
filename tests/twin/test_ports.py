"""The twin's sshd ports: below the kernel's ephemeral range, so no outgoing connection can take one between the probe
and sshd's bind (a CI run lost three twin tests to that race when the port came from ``bind(0)``).

The tests bind only ports the kernel gave them (``bind(0)``), never a fixed number: they share the machine with twins
and other test workers."""

from __future__ import annotations

import socket
from collections.abc import Collection, Iterator
from pathlib import Path

import pytest

from fabric.errors import LabError
from fabric.twin import ports
from fabric.twin.ports import LISTEN_PORTS_FROM, ephemeral_low, free_port


def test_a_free_port_lies_below_the_ephemeral_range() -> None:
    low = ephemeral_low()
    assert all(LISTEN_PORTS_FROM <= free_port() < low for _ in range(50))


def held_port() -> socket.socket:
    """A listening socket on a port the kernel chose: nobody else can hold it while the test does."""
    taken = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    return taken


class Scripted:
    """``random.SystemRandom`` stand-in: ``randrange`` returns the given ports in turn."""

    def __init__(self, picks: Iterator[int]) -> None:
        self.picks = picks

    def randrange(self, low: int, high: int) -> int:
        port = next(self.picks)
        assert low <= port < high
        return port


def test_a_port_in_use_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    with held_port() as taken, held_port() as spare:
        busy, free = taken.getsockname()[1], spare.getsockname()[1]
        spare.close()  # free now: the probe may bind it
        monkeypatch.setattr(ports.random, "SystemRandom", lambda: Scripted(iter([busy, busy, free])))
        assert free_port(min(busy, free), max(busy, free) + 1) == free


def test_a_port_this_twin_picked_already_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """The twin's sshds bind only after every port is picked: a free port picked twice would be one sshd's too many."""
    with held_port() as first, held_port() as second:
        mine, other = first.getsockname()[1], second.getsockname()[1]
    monkeypatch.setattr(ports.random, "SystemRandom", lambda: Scripted(iter([mine, mine, other])))
    low, high = min(mine, other), max(mine, other) + 1
    assert free_port(low, high, avoid={mine}) == other


def test_the_lab_twin_never_gives_two_switches_one_port(monkeypatch: pytest.MonkeyPatch) -> None:
    from fabric.twin import lab

    def first_free(low: int = 20000, high: int | None = None, avoid: Collection[int] = ()) -> int:
        """The probe finds every port free (no sshd has bound yet): the lowest one not avoided."""
        return next(port for port in range(low, high or low + 100) if port not in avoid)

    monkeypatch.setattr(lab, "free_port", first_free)
    picked: set[int] = set()
    assert [lab._port(picked) for _ in range(3)] == [20000, 20001, 20002]
    assert picked == {20000, 20001, 20002}


def test_no_free_port_is_refused_by_name_after_a_bounded_search(monkeypatch: pytest.MonkeyPatch) -> None:
    with held_port() as taken:
        busy = taken.getsockname()[1]
        monkeypatch.setattr(ports.random, "SystemRandom", lambda: Scripted(iter([busy] * 256)))
        with pytest.raises(LabError, match=r"no free TCP port on 127\.0\.0\.1 .* after 256 picks: stop other twins"):
            free_port(busy, busy + 1)


@pytest.mark.parametrize(
    ("text", "low"),
    [("32768\t60999\n", 32768), ("20000 60999\n", 20000), ("", 32768), ("x y", 32768), ("1024 60999", 32768), ("99999 1", 32768)],
)
def test_the_ephemeral_range_is_read_and_nonsense_falls_back_to_linuxs_default(tmp_path: Path, text: str, low: int) -> None:
    path = tmp_path / "ip_local_port_range"
    path.write_text(text, encoding="ascii")
    assert ephemeral_low(path) == low
