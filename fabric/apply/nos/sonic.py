"""Community SONiC: ``config_db`` through the Generic Config Updater, BGP (split mode) through vtysh, one transaction.

``sudo config checkpoint gpufabric-<change>`` → ``sudo config apply-patch`` with an RFC 6902 patch of the tables the
definition manages (tables it does not manage are never touched) → vtysh remediation → post-checks → ``config save``
and ``write memory``, or ``sudo config rollback`` to the checkpoint plus the inverse vtysh remediation.

The candidate and the running config are one JSON document: ``{"config_db": {...}, "frr": "<frr.conf>"}``.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from typing import Any

import jsonpatch  # pyright: ignore[reportMissingTypeStubs]

from fabric.apply.diff import remediation
from fabric.apply.nos.base import checked, ip_link_mtus, undo_name
from fabric.apply.nos.frr import frr_bgp_sessions, frr_routes
from fabric.apply.session import Session

VTYSH_PREFIX = "vtysh: "


class SonicAdapter:
    """Community SONiC (bash ``config``/GCU) over netmiko's ``linux`` driver."""

    nos = "sonic"
    device_type = "linux"
    error_pattern = r"^Error|^Failed|^% |Traceback"

    def candidate(self, files: Mapping[str, str]) -> str:
        return _document(json.loads(files["config_db.json"]), files["frr.conf"])

    def running(self, session: Session) -> str:
        config_db = json.loads(session.show("show runningconfiguration all") or "{}")
        return _document(config_db, session.show("sudo vtysh -c 'show running-config'"))

    def diff(self, running: str, candidate: str) -> list[str]:
        """The JSON patch ops (one per line) over the managed tables, then the vtysh lines.

        Example:
            >>> a = _document({"PORT": {"Ethernet0": {"mtu": "9100"}}, "FEATURE": {}}, "")
            >>> b = _document({"PORT": {"Ethernet0": {"mtu": "9216"}}}, "")
            >>> SonicAdapter().diff(a, b)
            ['{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9216"}']
        """
        have, want = json.loads(running), json.loads(candidate)
        ops = _patch(have["config_db"], want["config_db"])
        frr = remediation(have["frr"], want["frr"])
        return [json.dumps(op, sort_keys=True) for op in ops] + [VTYSH_PREFIX + line for line in frr]

    def stage(self, session: Session, change: str, diff: list[str], candidate: str) -> None:
        ops = [json.loads(line) for line in diff if not line.startswith(VTYSH_PREFIX)]
        frr = [line.removeprefix(VTYSH_PREFIX) for line in diff if line.startswith(VTYSH_PREFIX)]
        checked(session, f"sudo config checkpoint {undo_name(change)}", self.error_pattern)
        if ops:
            patch = f"/tmp/{undo_name(change)}.json-patch"  # noqa: S108 - a file on the switch, named by the change
            checked(session, f"echo {shlex.quote(json.dumps(ops))} > {patch}", self.error_pattern)
            checked(session, f"sudo config apply-patch {patch}", self.error_pattern)
        if frr:
            self._vtysh(session, frr)

    def confirm(self, session: Session, change: str) -> None:
        checked(session, "sudo config save -y", self.error_pattern)
        checked(session, "sudo vtysh -c 'write memory'", self.error_pattern)
        session.show(f"sudo config delete-checkpoint {undo_name(change)}")

    def revert(self, session: Session, change: str, backup: str) -> None:
        checked(session, f"sudo config rollback {undo_name(change)}", self.error_pattern)
        undo = remediation(json.loads(self.running(session))["frr"], json.loads(backup)["frr"])
        if undo:
            self._vtysh(session, undo)
        session.show(f"sudo config delete-checkpoint {undo_name(change)}")

    def bgp_sessions(self, session: Session) -> dict[str, str]:
        return frr_bgp_sessions(session.show("sudo vtysh -c 'show bgp ipv4 unicast summary json'"))

    def routes(self, session: Session) -> dict[str, int]:
        return frr_routes(session.show("sudo vtysh -c 'show ip route json'"))

    def interface_mtus(self, session: Session) -> dict[str, int]:
        return ip_link_mtus(session.show("ip -j link show"))

    def _vtysh(self, session: Session, lines: list[str]) -> None:
        args = " ".join(f"-c {shlex.quote(line.strip())}" for line in ["configure terminal", *lines])
        checked(session, f"sudo vtysh {args}", self.error_pattern)


def _document(config_db: dict[str, Any], frr: str) -> str:
    return json.dumps({"config_db": config_db, "frr": frr}, indent=1, sort_keys=True) + "\n"


def _patch(running: dict[str, Any], candidate: dict[str, Any]) -> list[dict[str, Any]]:
    """RFC 6902 ops that make the candidate's tables equal in ``running``; other tables are left alone."""
    managed = {table: running[table] for table in candidate if table in running}
    return list(jsonpatch.make_patch(managed, candidate))  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
