"""The transport boundary: a device session (netmiko over SSH, recorded transcripts in tests) and how to open one.

Host keys are always verified against a known-hosts file: an unknown or changed key is refused. Credentials come from
a key file named by the environment or from the SSH agent; they are never logged or recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from netmiko import BaseConnection

COMMAND_TIMEOUT_S = 60


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

    def show(self, command: str) -> str:
        return str(self._conn.send_command(command, read_timeout=COMMAND_TIMEOUT_S))

    def configure(self, lines: list[str]) -> str:
        return self._conn.send_config_set(lines, error_pattern=self._error_pattern, read_timeout=COMMAND_TIMEOUT_S)

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


def connect(access: DeviceAccess, device_type: str, error_pattern: str) -> Session:
    """An SSH session whose host key is verified against ``access.known_hosts`` (unknown or changed keys are refused)."""
    from netmiko import ConnectHandler

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
    )
    return NetmikoSession(connection, error_pattern)
