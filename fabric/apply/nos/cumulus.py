"""Cumulus Linux (NVUE): ``nv set``/``nv unset`` into a fresh pending revision, ``nv config apply --confirm``, then
``--confirm-yes`` after the post-checks or ``--confirm-no`` to roll back at once (NVUE also rolls back by itself when the
confirm timer runs out).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from fabric.apply.nos.base import checked, ip_link_mtus
from fabric.apply.nos.frr import frr_bgp_sessions, frr_routes
from fabric.apply.session import Session

CONFIRM_WITHIN = "600s"


class CumulusAdapter:
    """NVIDIA Cumulus Linux 5.x over netmiko's ``cumulus_linux`` driver."""

    nos = "cumulus"
    device_type = "cumulus_linux"
    error_pattern = r"^Error|^Invalid|^Usage:"

    def candidate(self, files: Mapping[str, str]) -> str:
        return "\n".join(_commands(files["nvue.sh"])) + "\n"

    def running(self, session: Session) -> str:
        return "\n".join(_commands(session.show("nv config show -o commands"))) + "\n"

    def diff(self, running: str, candidate: str) -> list[str]:
        """``nv unset`` for settings only the running config has, then ``nv set`` for the new ones.

        Example:
            >>> CumulusAdapter().diff("nv set interface swp1 link mtu 9000\\n", "nv set interface swp1 link mtu 9216\\n")
            ['nv set interface swp1 link mtu 9216']
            >>> CumulusAdapter().diff("nv set interface swp1 link mtu 9000\\n", "")
            ['nv unset interface swp1 link mtu']
        """
        have, want = _commands(running), _commands(candidate)
        new = [line for line in want if line not in set(have)]
        overwritten = {_path(line) for line in new}
        gone = [line for line in have if line not in set(want) and _path(line) not in overwritten]
        return [" ".join(["nv", "unset", *_path(line)]) for line in gone] + new

    def stage(self, session: Session, change: str, diff: list[str], candidate: str) -> None:
        checked(session, "nv config detach", self.error_pattern)
        for line in diff:
            checked(session, line, self.error_pattern)
        checked(session, f"nv config apply --confirm {CONFIRM_WITHIN} -y", self.error_pattern)

    def confirm(self, session: Session, change: str) -> None:
        checked(session, "nv config apply --confirm-yes", self.error_pattern)
        checked(session, "nv config save", self.error_pattern)

    def revert(self, session: Session, change: str, backup: str) -> None:
        session.show("nv config apply --confirm-no")  # rolls back an applied, unconfirmed revision; harmless otherwise
        checked(session, "nv config detach", self.error_pattern)

    def bgp_sessions(self, session: Session) -> dict[str, str]:
        return frr_bgp_sessions(session.show("sudo vtysh -c 'show bgp ipv4 unicast summary json'"))

    def routes(self, session: Session) -> dict[str, int]:
        return frr_routes(session.show("sudo vtysh -c 'show ip route json'"))

    def interface_mtus(self, session: Session) -> dict[str, int]:
        return ip_link_mtus(session.show("ip -j link show"))


def _commands(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("nv set ")]


def _path(line: str) -> tuple[str, ...]:
    """``nv set <path> <value>`` → the path (every line ``nv config show -o commands`` prints ends in a value)."""
    return tuple(shlex.split(line)[2:-1])
