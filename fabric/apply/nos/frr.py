"""FRR (vtysh over SSH): hier_config remediation of the owned part applied with an error pattern; revert = remediation
back to the backup.

FRR has no commit-confirm: the change is "staged" by applying the remediation, kept by ``write memory`` after the
post-checks pass, and undone by applying the inverse remediation computed from the live config. The whole rendered
file is the candidate, but only what gpufabric owns is compared (``fabric.apply.owned``): a static route or prefix
list added by hand survives a push.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from fabric.apply.diff import remediation
from fabric.apply.owned import collapse_neighbor_removal, owned_part
from fabric.apply.session import Session


class FrrAdapter:
    """Debian FRR 8.4 (the twin) and any vtysh reachable with netmiko's ``cisco_ios`` driver."""

    nos = "frr"
    device_type = "cisco_ios"  # netmiko's driver that speaks vtysh (shared/reference/test-harness.md A.3a)
    error_pattern = r"^% "  # FRR prefixes every rejected line with "% " (Unknown command, Invalid input, ...)
    reach_command = "show version"  # what a fresh login must be able to run before the change is confirmed

    def candidate(self, files: Mapping[str, str]) -> str:
        return files["frr.conf"]

    def running(self, session: Session) -> str:
        return session.show("show running-config")

    def owned(self, running: str, candidate: str, previous: str = "") -> str:
        return owned_part(running, candidate, previous)

    def diff(self, running: str, candidate: str, previous: str = "") -> list[str]:
        return collapse_neighbor_removal(remediation(owned_part(running, candidate, previous), candidate), candidate)

    def stage(self, session: Session, change: str, diff: list[str], candidate: str) -> None:
        try:
            session.configure(diff)
        finally:
            session.exit_config_mode()

    def confirm(self, session: Session, change: str) -> None:
        session.show("write memory")

    def revert(self, session: Session, change: str, backup: str) -> None:
        undo = collapse_neighbor_removal(remediation(self.running(session), backup), backup)  # the whole backup: exactly what ran
        if undo:
            self.stage(session, change, undo, backup)

    def bgp_sessions(self, session: Session) -> dict[str, str]:
        return frr_bgp_sessions(session.show("show bgp ipv4 unicast summary json"))

    def routes(self, session: Session) -> dict[str, int]:
        return frr_routes(session.show("show ip route json"))

    def interface_mtus(self, session: Session) -> dict[str, int]:
        return {name: int(i.get("mtu", 0)) for name, i in json.loads(session.show("show interface json") or "{}").items()}


def frr_bgp_sessions(output: str) -> dict[str, str]:
    """Peer → state from FRR's ``show bgp ... summary json`` (also SONiC's and Cumulus's vtysh).

    Example:
        >>> frr_bgp_sessions('{"peers": {"swp1": {"state": "Established"}, "10.0.0.1": {"state": "Active"}}}')
        {'swp1': 'Established', '10.0.0.1': 'Active'}
    """
    summary = json.loads(output or "{}")
    return {name: peer.get("state", "?") for name, peer in summary.get("peers", {}).items()}


def frr_routes(output: str) -> dict[str, int]:
    """Prefix → active next hops of the selected route, from FRR's ``show ip route json``.

    Example:
        >>> frr_routes('{"10.0.0.4/31": [{"selected": true, "nexthops": [{"active": true}, {"active": true}]}]}')
        {'10.0.0.4/31': 2}
    """
    table = json.loads(output or "{}")
    return {
        prefix: sum(1 for e in entries if e.get("selected") for h in e.get("nexthops", []) if h.get("active")) for prefix, entries in table.items()
    }
