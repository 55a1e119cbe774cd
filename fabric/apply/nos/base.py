"""The device adapter contract (napalm's model), one implementation per NOS.

An adapter turns the rendered files of one switch into a candidate, reads the running config, computes the diff of
what gpufabric owns (the rendered sections, cabled interfaces, named objects, SONiC table fields; never users, AAA,
TACACS, SNMP, ``feature ssh``, eAPI, licences, platform defaults, unused ports or port lanes), stages
the change under the NOS's safest mechanism (a pending commit that can still be undone), confirms it, or reverts to the
backup. It also reads the state the post-checks and ``verify`` need. Adapters are stateless; the change id names any
checkpoint or session they create on the device.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Protocol

from fabric.apply.session import Session
from fabric.errors import DeviceRejectedError


class Adapter(Protocol):
    """One NOS's transaction over a Session."""

    nos: str
    device_type: str  # netmiko driver
    error_pattern: str  # a line of output matching it means the device rejected a command
    reach_command: str  # a show command a fresh login must run before a change is confirmed (no lock-out)

    def candidate(self, files: Mapping[str, str]) -> str:
        """The candidate config from the switch's rendered files (``frr.conf``, ``eos.cfg``, ...)."""
        ...

    def running(self, session: Session) -> str:
        """The running config, in the candidate's form."""
        ...

    def owned(self, running: str, candidate: str, previous: str = "") -> str:
        """``running`` cut down to what gpufabric owns: what ``candidate`` or the ``previous`` push renders."""
        ...

    def diff(self, running: str, candidate: str, previous: str = "") -> list[str]:
        """What the change does to the owned part, one reviewable line each; empty when nothing differs.

        ``previous`` is the candidate last pushed (the change record): what it has and ``candidate`` lacks is removed;
        anything neither of them has is never touched.
        """
        ...

    def stage(self, session: Session, change: str, diff: list[str], candidate: str) -> None:
        """Apply the change so that it can still be undone (pending commit / checkpoint); raise DeviceRejectedError."""
        ...

    def confirm(self, session: Session, change: str) -> None:
        """Make the staged change permanent (and persistent across reboots)."""
        ...

    def revert(self, session: Session, change: str, backup: str) -> None:
        """Undo the staged change: back to ``backup``."""
        ...

    def bgp_sessions(self, session: Session) -> dict[str, str]:
        """BGP peer → state (``Established`` when up)."""
        ...

    def routes(self, session: Session) -> dict[str, int]:
        """IPv4 prefix → number of active next hops in the FIB."""
        ...

    def interface_mtus(self, session: Session) -> dict[str, int]:
        """Interface → MTU."""
        ...


def undo_name(change: str) -> str:
    """The name of the checkpoint / config session / patch file a change leaves on the device.

    Example:
        >>> undo_name("20261121T101500000000Z")
        'gpufabric-20261121T101500000000Z'
    """
    return f"gpufabric-{change}"


def show_json(session: Session, command: str) -> dict[str, Any]:
    """A ``| json`` show command, parsed (empty output → empty dict)."""
    return json.loads(session.show(command) or "{}")


def checked(session: Session, command: str, error_pattern: str) -> str:
    """Run an exec command; raise DeviceRejectedError when any output line matches ``error_pattern``."""
    output = session.show(command)
    bad = [line for line in output.splitlines() if re.search(error_pattern, line)]
    if bad:
        msg = f"{command!r}: {' / '.join(line.strip() for line in bad)}"
        raise DeviceRejectedError(msg)
    return output


def ip_link_mtus(output: str) -> dict[str, int]:
    """Interface → MTU from ``ip -j link show`` (Linux-based NOSes: SONiC, Cumulus).

    Example:
        >>> ip_link_mtus('[{"ifname": "Ethernet0", "mtu": 9100}, {"ifname": "lo", "mtu": 65536}]')
        {'Ethernet0': 9100, 'lo': 65536}
    """
    return {str(link["ifname"]): int(link["mtu"]) for link in json.loads(output or "[]")}
