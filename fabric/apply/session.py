"""The transport boundary: a device session (netmiko over SSH, recorded transcripts in tests) and how to open one.

Host keys are always verified against a known-hosts file: an unknown or changed key is refused. Credentials come from
a key file named by the environment or from the SSH agent; they are never logged or recorded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from fabric.errors import DeadlineError

if TYPE_CHECKING:
    from netmiko import BaseConnection

COMMAND_TIMEOUT_S = 60
# Algorithms paramiko still offers that no device session may use (paramiko's ``disabled_algorithms``, passed through
# netmiko): CBC ciphers (plaintext recovery, CVE-2008-5161; RFC 4344 recommends CTR) including 3des-cbc (64-bit
# blocks, Sweet32 CVE-2016-2183), MD5 MACs (RFC 6151) and SHA-1 MACs (RFC 6194; CIS Benchmarks for OpenSSH
# keep only hmac-sha2-*). KEX and host-key algorithms: paramiko >= 3 offers no SHA-1 KEX and no ssh-rsa/ssh-dss by
# default (RFC 9142, RFC 8332), so nothing weak is left to remove there. Every NOS we push to supports AES-CTR/GCM
# with hmac-sha2 (EOS, NX-OS 9.3+, Cumulus/SONiC/FRR on OpenSSH).
WEAK_SSH_ALGORITHMS: dict[str, tuple[str, ...]] = {
    "ciphers": ("3des-cbc", "aes128-cbc", "aes192-cbc", "aes256-cbc", "blowfish-cbc", "arcfour", "arcfour128", "arcfour256"),
    "macs": ("hmac-md5", "hmac-md5-96", "hmac-sha1", "hmac-sha1-96"),
    "kex": ("diffie-hellman-group1-sha1", "diffie-hellman-group14-sha1", "diffie-hellman-group-exchange-sha1"),
    "pubkeys": ("ssh-dss",),
}


class Session(Protocol):
    """What a device adapter needs from a session."""

    def show(self, command: str) -> str:
        """Run an exec-mode command and return its output."""
        ...

    def configure(self, lines: list[str]) -> str:
        """Send config-mode lines; raise if the device rejects any of them (the adapter's error pattern)."""
        ...

    def exit_config_mode(self) -> None:
        """Leave config mode (after a rejected line the session is still in it)."""
        ...

    def disconnect(self) -> None:
        """Close the session."""
        ...


class NetmikoSession:
    """A netmiko connection behind the Session protocol; every config call carries the NOS's error pattern."""

    def __init__(self, connection: BaseConnection, error_pattern: str) -> None:
        self._conn = connection
        self._error_pattern = error_pattern
        self.deadline: float | None = None  # time.monotonic() value no command may run past (the device's deadline)

    def _timeout(self, command: str) -> float:
        if self.deadline is None:
            return COMMAND_TIMEOUT_S
        left = self.deadline - time.monotonic()
        if left <= 0:
            msg = f"deadline reached before {command!r}"
            raise DeadlineError(msg)
        return min(COMMAND_TIMEOUT_S, max(1.0, left))

    def show(self, command: str) -> str:
        return str(self._conn.send_command(command, read_timeout=self._timeout(command)))

    def configure(self, lines: list[str]) -> str:
        timeout = self._timeout(lines[0] if lines else "")
        return self._conn.send_config_set(lines, error_pattern=self._error_pattern, read_timeout=timeout)

    def exit_config_mode(self) -> None:
        self._conn.exit_config_mode()

    def disconnect(self) -> None:
        self._conn.disconnect()


@dataclass(frozen=True, slots=True)
class DeviceAccess:
    """How to reach one switch: address, port, user, key file and the known-hosts file its host key must match.

    ``password`` comes from the environment variable the definition names (``switches.credentials.password_env``);
    it is left out of ``repr`` so no log or error message can carry it.
    """

    name: str
    host: str
    port: int
    username: str
    key_file: str | None
    known_hosts: str
    use_agent: bool = False
    password: str | None = field(default=None, repr=False)


CONNECT_ATTEMPTS = 3


def connect(access: DeviceAccess, device_type: str, error_pattern: str) -> Session:
    """An SSH session whose host key is verified against ``access.known_hosts`` (unknown or changed keys are refused)
    and that never negotiates a weak algorithm (``WEAK_SSH_ALGORITHMS``).

    A login whose prompt is slow to appear (a loaded device or machine: netmiko's ``ReadTimeout``) is tried again, up to
    ``CONNECT_ATTEMPTS`` times; authentication and host-key failures never are.
    """
    from netmiko import ConnectHandler
    from netmiko.exceptions import ReadTimeout

    for attempt in range(1, CONNECT_ATTEMPTS + 1):
        try:
            connection = ConnectHandler(
                device_type=device_type,
                host=access.host,
                port=access.port,
                username=access.username,
                password=access.password or "",
                use_keys=access.key_file is not None,
                key_file=access.key_file,
                allow_agent=access.use_agent,
                ssh_strict=True,
                system_host_keys=False,
                alt_host_keys=True,
                alt_key_file=access.known_hosts,
                conn_timeout=10,
                disabled_algorithms={kind: list(names) for kind, names in WEAK_SSH_ALGORITHMS.items()},
            )
        except ReadTimeout:
            if attempt == CONNECT_ATTEMPTS:
                raise
            time.sleep(attempt)
            continue
        return NetmikoSession(connection, error_pattern)
    msg = "unreachable"  # the loop returns or raises
    raise AssertionError(msg)
