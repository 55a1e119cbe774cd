"""Arista EOS: a configure session with the owned diff, committed under a timer, then confirmed or aborted.

``configure session gpufabric-<change>`` starts from a copy of the running config; the session receives only the
remediation of what gpufabric owns (``fabric.apply.owned``), never ``rollback clean-config`` (that would drop users,
AAA, SNMP and eAPI, none of which is rendered). ``commit timer``: EOS rolls the change back by itself unless
``configure session … commit`` confirms it before the timer runs out (napalm's ``revert_in``).
``configure session … abort`` reverts at once.

Source: Arista EOS User Manual, "Configuration Sessions" (a session's config starts as a copy of running-config;
``commit timer hh:mm:ss`` needs a later ``configure session <name> commit`` or the commit is rolled back).
"""

from __future__ import annotations

from collections.abc import Mapping

from hier_config import Platform

from fabric.apply.diff import platform_remediation
from fabric.apply.nos.base import checked, show_json, undo_name
from fabric.apply.owned import collapse_neighbor_removal, owned_part
from fabric.apply.session import Session

CONFIRM_WITHIN = "00:10:00"


class EosAdapter:
    """Arista EOS over netmiko's ``arista_eos`` driver."""

    nos = "eos"
    device_type = "arista_eos"
    error_pattern = r"^% "  # "% Invalid input", "% Incomplete command", ...
    reach_command = "show version"  # what a fresh login must be able to run before the change is confirmed

    def candidate(self, files: Mapping[str, str]) -> str:
        return files["startup-config"]

    def running(self, session: Session) -> str:
        return session.show("show running-config")

    def owned(self, running: str, candidate: str, previous: str = "") -> str:
        return owned_part(running, candidate, previous)

    def diff(self, running: str, candidate: str, previous: str = "") -> list[str]:
        lines = platform_remediation(owned_part(running, candidate, previous), candidate, Platform.ARISTA_EOS)
        return collapse_neighbor_removal(lines, candidate)

    def stage(self, session: Session, change: str, diff: list[str], candidate: str) -> None:
        try:
            session.configure([f"configure session {undo_name(change)}", *diff, f"commit timer {CONFIRM_WITHIN}"])
        finally:
            session.exit_config_mode()

    def confirm(self, session: Session, change: str) -> None:
        checked(session, f"configure session {undo_name(change)} commit", self.error_pattern)
        checked(session, "copy running-config startup-config", self.error_pattern)

    def revert(self, session: Session, change: str, backup: str) -> None:
        checked(session, f"configure session {undo_name(change)} abort", self.error_pattern)

    def bgp_sessions(self, session: Session) -> dict[str, str]:
        peers = show_json(session, "show ip bgp summary | json").get("vrfs", {}).get("default", {}).get("peers", {})
        return {peer: data.get("peerState", "?") for peer, data in peers.items()}

    def routes(self, session: Session) -> dict[str, int]:
        table = show_json(session, "show ip route | json").get("vrfs", {}).get("default", {}).get("routes", {})
        return {prefix: len(route.get("vias", [])) for prefix, route in table.items()}

    def interface_mtus(self, session: Session) -> dict[str, int]:
        return {name: int(i.get("mtu", 0)) for name, i in show_json(session, "show interfaces | json").get("interfaces", {}).items()}
