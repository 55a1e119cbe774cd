"""Arista EOS: a configure session replaces the whole config, commits under a timer, then is confirmed or aborted.

``configure session gpufabric-<change>`` → ``rollback clean-config`` → the candidate → ``commit timer``: EOS rolls the
change back by itself unless ``configure session … commit`` confirms it before the timer runs out (napalm's
``revert_in``). ``configure session … abort`` reverts at once.
"""

from __future__ import annotations

from collections.abc import Mapping

from hier_config import Platform

from fabric.apply.diff import normalize, platform_remediation
from fabric.apply.nos.base import checked, show_json, undo_name
from fabric.apply.session import Session

CONFIRM_WITHIN = "00:10:00"


class EosAdapter:
    """Arista EOS over netmiko's ``arista_eos`` driver."""

    nos = "eos"
    device_type = "arista_eos"
    error_pattern = r"^% "  # "% Invalid input", "% Incomplete command", ...

    def candidate(self, files: Mapping[str, str]) -> str:
        return files["startup-config"]

    def running(self, session: Session) -> str:
        return session.show("show running-config")

    def diff(self, running: str, candidate: str) -> list[str]:
        return platform_remediation(running, candidate, Platform.ARISTA_EOS)

    def stage(self, session: Session, change: str, diff: list[str], candidate: str) -> None:
        body = [line for line in normalize(candidate).splitlines() if line.strip() != "end"]
        try:
            session.configure([f"configure session {undo_name(change)}", "rollback clean-config", *body, f"commit timer {CONFIRM_WITHIN}"])
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
