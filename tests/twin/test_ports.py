"""The twin's sshd ports: below the kernel's ephemeral range, so no outgoing connection can take one between the probe
and sshd's bind (a CI run lost three twin tests to that race when the port came from ``bind(0)``)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from fabric.errors import LabError
from fabric.twin import ports
from fabric.twin.ports import LISTEN_PORTS_FROM, ephemeral_low, free_port


def test_a_free_port_lies_below_the_ephemeral_range_and_can_be_bound() -> None:
    low = ephemeral_low()
    for _ in range(50):
        port = free_port()
        assert LISTEN_PORTS_FROM <= port < low
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
            listener.bind(("127.0.0.1", port))


def test_a_port_in_use_is_never_handed_out(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", LISTEN_PORTS_FROM))
        taken.listen()
        monkeypatch.setattr(ports, "ephemeral_low", lambda: LISTEN_PORTS_FROM + 2)  # two candidates, one of them taken
        assert {free_port() for _ in range(20)} == {LISTEN_PORTS_FROM + 1}


def test_no_free_port_is_refused_by_name_after_a_bounded_search(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", LISTEN_PORTS_FROM))
        taken.listen()
        monkeypatch.setattr(ports, "ephemeral_low", lambda: LISTEN_PORTS_FROM + 1)  # the one candidate is taken
        with pytest.raises(LabError, match=r"no free TCP port on 127\.0\.0\.1 .* after 256 picks: stop other twins"):
            free_port()


@pytest.mark.parametrize(
    ("text", "low"),
    [("32768\t60999\n", 32768), ("20000 60999\n", 20000), ("", 32768), ("x y", 32768), ("1024 60999", 32768), ("99999 1", 32768)],
)
def test_the_ephemeral_range_is_read_and_nonsense_falls_back_to_linuxs_default(tmp_path: Path, text: str, low: int) -> None:
    path = tmp_path / "ip_local_port_range"
    path.write_text(text, encoding="ascii")
    assert ephemeral_low(path) == low
