"""Cumulus Linux (NVUE): ``nv set``/``nv unset`` of owned paths into a fresh pending revision, ``nv config apply
--confirm``, then ``--confirm-yes`` after the post-checks or ``--confirm-no`` to roll back at once (NVUE also rolls
back by itself when the confirm timer runs out).

Ownership is per path: a running ``nv set`` line is owned when the candidate or the previous push sets the same path
(``interface swp1 link mtu``). ``system aaa``, ``service snmp-server``, unused ports and any path gpufabric does not
render are never unset. Every command is rebuilt from its parsed words with ``shlex.join``, so a value with spaces
or quotes (a description) reaches ``nv`` as one argument through the switch's shell.

Source: NVIDIA Cumulus Linux 5.9 user guide, "NVUE CLI" (``nv config show -o commands``, ``nv config apply
--confirm <time>``, ``--confirm-yes`` / ``--confirm-no``; ``nv unset`` takes the path, or the path and the value
for a multi-valued key such as ``ip address``).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from fabric.apply.nos.base import checked, ip_link_mtus
from fabric.apply.nos.frr import frr_bgp_sessions, frr_routes
from fabric.apply.session import Session
from fabric.errors import PushError

CONFIRM_WITHIN = "600s"


class CumulusAdapter:
    """NVIDIA Cumulus Linux 5.x over netmiko's ``cumulus_linux`` driver."""

    nos = "cumulus"
    device_type = "cumulus_linux"
    error_pattern = r"^Error|^Invalid|^Usage:"
    reach_command = "nv show system"  # what a fresh login must be able to run before the change is confirmed

    def candidate(self, files: Mapping[str, str]) -> str:
        return _text(_commands(files["nvue.sh"]))

    def running(self, session: Session) -> str:
        return _text(_commands(session.show("nv config show -o commands")))

    def owned(self, running: str, candidate: str, previous: str = "") -> str:
        paths = {_path(words) for words in _commands(candidate) + _commands(previous)}
        return _text([words for words in _commands(running) if _path(words) in paths])

    def diff(self, running: str, candidate: str, previous: str = "") -> list[str]:
        """``nv unset`` for owned settings the candidate no longer has, then ``nv set`` for the new ones.

        Example:
            >>> CumulusAdapter().diff("nv set interface swp1 link mtu 9000\\n", "nv set interface swp1 link mtu 9216\\n")
            ['nv set interface swp1 link mtu 9216']
            >>> running = "nv set interface swp1 link mtu 9000\\nnv set system aaa user admin\\n"
            >>> CumulusAdapter().diff(running, "", "nv set interface swp1 link mtu 9216\\n")
            ['nv unset interface swp1 link mtu']
            >>> vlans = "nv set bridge domain br_default vlan 101\\nnv set bridge domain br_default vlan 102\\n"
            >>> CumulusAdapter().diff(vlans, vlans.split("\\n")[1] + "\\n", vlans)  # one VLAN of the bridge, not all
            ['nv unset bridge domain br_default vlan 101']
        """
        have, want = _commands(self.owned(running, candidate, previous)), _commands(candidate)
        new = [words for words in want if words not in have]
        overwritten = {_path(words) for words in new}
        gone = [words for words in have if words not in want and (_path(words) not in overwritten or _is_multi(words))]
        unset = [shlex.join(["nv", "unset", *(words if _is_multi(words) else _path(words))]) for words in gone]
        return unset + [shlex.join(["nv", "set", *words]) for words in new]

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


# Keys that hold a set of values: ``nv set`` adds one, so a changed value needs an unset of the old one, and removing one
# names it (``nv unset bridge domain br_default vlan 10``, ``nv unset interface bond1 bond member swp1``: Cumulus Linux
# 5.9 user guide, "VLAN-aware Bridge Mode" and "Bonding - Link Aggregation"); the path alone would unset every value.
_MULTI = frozenset({"address", "network", "server", "via", "peer", "static", "vlan", "member"})

Words = tuple[str, ...]


def _commands(text: str) -> list[Words]:
    """The words after ``nv set`` of every set line (shell quoting undone).

    A line whose quoting does not close (a device or a hand-edited record can hold one) is a PushError naming it,
    never a traceback.

    Example:
        >>> _commands("nv set interface swp1 description 'a b'")
        [('interface', 'swp1', 'description', 'a b')]
        >>> _commands("nv set interface swp1 description 'a b")
        Traceback (most recent call last):
        fabric.errors.PushError: NVUE line 1 has an unbalanced quote (No closing quotation): "nv set interface swp1 description 'a b"
    """
    commands: list[Words] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip().startswith("nv set "):
            continue
        try:
            commands.append(tuple(shlex.split(line.strip())[2:]))
        except ValueError as exc:
            msg = f"NVUE line {number} has an unbalanced quote ({exc}): {line.strip()[:200]!r}"
            raise PushError(msg) from exc
    return commands


def _text(commands: list[Words]) -> str:
    return "".join(shlex.join(["nv", "set", *words]) + "\n" for words in commands)


def _path(words: Words) -> Words:
    """``nv set <path> <value>`` → the path (every line ``nv config show -o commands`` prints ends in a value)."""
    return words[:-1]


def _is_multi(words: Words) -> bool:
    return len(words) >= 2 and words[-2] in _MULTI
