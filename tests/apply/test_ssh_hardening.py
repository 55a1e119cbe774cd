"""Device sessions never offer weak SSH algorithms, and the password from the environment reaches the login."""

from __future__ import annotations

import socket
from typing import Any

import netmiko
import paramiko
import pytest

from fabric.apply.session import WEAK_SSH_ALGORITHMS, DeviceAccess, connect


def test_connect_disables_the_weak_algorithms_and_passes_the_password(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def handler(**kwargs: Any) -> object:  # netmiko is the boundary: what would open the SSH connection
        seen.update(kwargs)
        return object()

    monkeypatch.setattr(netmiko, "ConnectHandler", handler)
    connect(DeviceAccess("leaf01", "192.0.2.1", 22, "admin", None, "known_hosts", password="from-env"), "arista_eos", "^%")
    assert seen["disabled_algorithms"] == {kind: list(names) for kind, names in WEAK_SSH_ALGORITHMS.items()}
    assert seen["password"] == "from-env"
    assert seen["ssh_strict"] is True


def test_paramiko_then_offers_only_strong_algorithms() -> None:
    left, right = socket.socketpair()
    try:
        transport = paramiko.Transport(left, disabled_algorithms={k: list(v) for k, v in WEAK_SSH_ALGORITHMS.items()})
        offered = {
            "ciphers": transport.preferred_ciphers,
            "macs": transport.preferred_macs,
            "kex": transport.preferred_kex,
            "pubkeys": transport.preferred_pubkeys,
        }
        for kind, weak in WEAK_SSH_ALGORITHMS.items():
            assert not set(offered[kind]) & set(weak), kind
        assert "aes256-gcm@openssh.com" in offered["ciphers"] or "aes256-ctr" in offered["ciphers"]
        assert "hmac-sha2-256" in offered["macs"]
        assert offered["kex"]
        transport.close()
    finally:
        left.close()
        right.close()
