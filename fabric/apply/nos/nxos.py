"""Cisco NX-OS: a named checkpoint, the remediation of the owned part with an error pattern, then keep or roll back.

NX-OS has no commit timer (napalm raises for ``revert_in``): the checkpoint is the undo, taken before any line is sent.
Only what gpufabric owns is compared (``fabric.apply.owned``): ``feature ssh``, ``username``, ``tacacs-server``,
``aaa``, ``snmp-server`` and unused ports are never in the diff (a full remediation would negate them and lock the
operator out once saved).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hier_config import Platform

from fabric.apply.diff import platform_remediation
from fabric.apply.nos.base import checked, show_json, undo_name
from fabric.apply.owned import collapse_neighbor_removal, owned_part
from fabric.apply.session import Session


class NxosAdapter:
    """Cisco NX-OS (Nexus 9000) over netmiko's ``cisco_nxos`` driver."""

    nos = "nxos"
    device_type = "cisco_nxos"
    error_pattern = r"^% |^ERROR:|Invalid command"
    reach_command = "show version"  # what a fresh login must be able to run before the change is confirmed

    def candidate(self, files: Mapping[str, str]) -> str:
        return files["running-config"]

    def running(self, session: Session) -> str:
        return session.show("show running-config")

    def owned(self, running: str, candidate: str, previous: str = "") -> str:
        return owned_part(running, candidate, previous)

    def diff(self, running: str, candidate: str, previous: str = "") -> list[str]:
        lines = platform_remediation(owned_part(running, candidate, previous), candidate, Platform.CISCO_NXOS)
        return collapse_neighbor_removal(lines, candidate)

    def stage(self, session: Session, change: str, diff: list[str], candidate: str) -> None:
        checked(session, f"checkpoint {undo_name(change)}", self.error_pattern)
        try:
            session.configure(diff)
        finally:
            session.exit_config_mode()

    def confirm(self, session: Session, change: str) -> None:
        checked(session, "copy running-config startup-config", self.error_pattern)
        session.show(f"no checkpoint {undo_name(change)}")

    def revert(self, session: Session, change: str, backup: str) -> None:
        checked(session, f"rollback running-config checkpoint {undo_name(change)}", self.error_pattern)
        session.show(f"no checkpoint {undo_name(change)}")

    def bgp_sessions(self, session: Session) -> dict[str, str]:
        data = show_json(session, "show bgp ipv4 unicast summary | json")
        return {
            str(n["neighborid"]): str(n.get("state", "?"))
            for vrf in rows(data.get("TABLE_vrf", {}), "ROW_vrf")
            for af in rows(vrf.get("TABLE_af", {}), "ROW_af")
            for saf in rows(af.get("TABLE_saf", {}), "ROW_saf")
            for n in rows(saf.get("TABLE_neighbor", {}), "ROW_neighbor")
        }

    def routes(self, session: Session) -> dict[str, int]:
        data = show_json(session, "show ip route | json")
        return {
            str(p["ipprefix"]): int(p.get("ubest", 0))
            for vrf in rows(data.get("TABLE_vrf", {}), "ROW_vrf")
            for af in rows(vrf.get("TABLE_addrf", {}), "ROW_addrf")
            for p in rows(af.get("TABLE_prefix", {}), "ROW_prefix")
        }

    def interface_mtus(self, session: Session) -> dict[str, int]:
        data = show_json(session, "show interface | json")
        return {str(i["interface"]): int(i.get("eth_mtu", 0)) for i in rows(data.get("TABLE_interface", {}), "ROW_interface")}


def rows(table: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """NX-OS JSON gives a dict for one row and a list for several: always a list.

    Example:
        >>> rows({"ROW_x": {"a": 1}}, "ROW_x"), rows({"ROW_x": [{"a": 1}, {"a": 2}]}, "ROW_x")
        ([{'a': 1}], [{'a': 1}, {'a': 2}])
    """
    value: Any = table.get(key, [])
    return list(value) if isinstance(value, list) else [value]  # pyright: ignore[reportUnknownArgumentType]
