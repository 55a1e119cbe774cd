"""Community SONiC: ``config_db`` through the Generic Config Updater, BGP (split mode) through vtysh, one transaction.

``sudo config checkpoint gpufabric-<change>`` → ``sudo config apply-patch`` with an RFC 6902 patch → vtysh
remediation → post-checks → ``config save`` and ``write memory``, or ``sudo config rollback`` to the checkpoint plus
the inverse vtysh remediation.

Ownership is per field: gpufabric owns the (table, key, field) triples the candidate or the previous push renders.
The patch adds or replaces owned fields only; it removes an owned field (or a whole key gpufabric created) only when
the previous push had it and the candidate no longer does, and never removes a PORT or DEVICE_METADATA key. Port
``lanes``/``alias``/``index``, DEVICE_METADATA ``mac``/``platform``, unused ports and the platform's default buffer
profiles are not rendered, so they are never in the patch. (GCU computes the config the patch produces and validates
it against the YANG models: removing ``lanes`` from a PORT is refused — sonic-utilities ``generic_config_updater``.)

The candidate and the running config are one JSON document: ``{"config_db": {...}, "frr": "<frr.conf>"}``.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from typing import Any

from fabric.apply.diff import remediation
from fabric.apply.nos.base import checked, ip_link_mtus, undo_name
from fabric.apply.nos.frr import frr_bgp_sessions, frr_routes
from fabric.apply.owned import collapse_neighbor_removal, owned_part
from fabric.apply.session import Session
from fabric.errors import DeviceRejectedError

VTYSH_PREFIX = "vtysh: "


class SonicAdapter:
    """Community SONiC (bash ``config``/GCU) over netmiko's ``linux`` driver."""

    nos = "sonic"
    device_type = "linux"
    error_pattern = r"^Error|^Failed|^% |Traceback"
    reach_command = "show version"  # what a fresh login must be able to run before the change is confirmed

    def candidate(self, files: Mapping[str, str]) -> str:
        return _document(json.loads(files["config_db.json"]), files.get("frr.conf", ""))  # an L2 (storage/OOB) switch runs no BGP

    def running(self, session: Session) -> str:
        config_db = json.loads(session.show("show runningconfiguration all") or "{}")
        return _document(config_db, session.show("sudo vtysh -c 'show running-config'"))

    def owned(self, running: str, candidate: str, previous: str = "") -> str:
        have, want, before = _load(running), _load(candidate), _load(previous)
        want["config_db"], before["config_db"] = _pushable(want["config_db"]), _pushable(before["config_db"])
        fields = _fields(want["config_db"]) | _fields(before["config_db"])
        mine = _fields(have["config_db"]) & fields
        return _document(_unflatten(have["config_db"], mine), owned_part(have["frr"], want["frr"], before["frr"]))

    def diff(self, running: str, candidate: str, previous: str = "") -> list[str]:
        """The JSON patch ops (one per line) over the owned fields, then the vtysh lines.

        Example:
            >>> a = _document({"PORT": {"Ethernet0": {"mtu": "9100", "lanes": "0,1,2,3", "description": "n1"}}, "FEATURE": {}}, "")
            >>> b = _document({"PORT": {"Ethernet0": {"mtu": "9216", "lanes": "0,1", "description": "n1"}}}, "")
            >>> SonicAdapter().diff(a, b)
            ['{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9216"}']
        """
        have, want, before = _load(running), _load(candidate), _load(previous)
        want["config_db"], before["config_db"] = _pushable(want["config_db"]), _pushable(before["config_db"])
        ops = _patch(have["config_db"], want["config_db"], before["config_db"])
        frr = remediation(owned_part(have["frr"], want["frr"], before["frr"]), want["frr"])
        frr = collapse_neighbor_removal(frr, want["frr"])
        return [json.dumps(op, sort_keys=True) for op in ops] + [VTYSH_PREFIX + line for line in frr]

    def stage(self, session: Session, change: str, diff: list[str], candidate: str) -> None:
        if "MCLAG_DOMAIN" in _load(candidate)["config_db"]:
            require_iccpd(json.loads(session.show("show runningconfiguration all") or "{}"))
        ops = [json.loads(line) for line in diff if not line.startswith(VTYSH_PREFIX)]
        frr = [line.removeprefix(VTYSH_PREFIX) for line in diff if line.startswith(VTYSH_PREFIX)]
        checked(session, f"sudo config checkpoint {undo_name(change)}", self.error_pattern)
        if ops:
            checked(session, _apply_patch_command(json.dumps(ops)), self.error_pattern)
        if frr:
            self._vtysh(session, frr)

    def confirm(self, session: Session, change: str) -> None:
        checked(session, "sudo config save -y", self.error_pattern)
        checked(session, "sudo vtysh -c 'write memory'", self.error_pattern)
        session.show(f"sudo config delete-checkpoint {undo_name(change)}")

    def revert(self, session: Session, change: str, backup: str) -> None:
        checked(session, f"sudo config rollback {undo_name(change)}", self.error_pattern)
        frr = json.loads(backup)["frr"]
        undo = collapse_neighbor_removal(remediation(json.loads(self.running(session))["frr"], frr), frr)
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


def require_iccpd(running: ConfigDb) -> None:
    """Refuse an MCLAG config on an image without docker-iccpd, before anything is changed.

    ``FEATURE|iccpd`` exists only on images built with ``INCLUDE_ICCPD=y`` (sonic-buildimage
    files/build_templates/init_cfg.json.j2: ``{%- if include_iccpd == "y" %}`` ... ``("iccpd", "disabled", ...)``);
    community images are built with ``INCLUDE_ICCPD = n`` (rules/config).

    Raises:
        DeviceRejectedError: the running config has no ``FEATURE|iccpd``.
    """
    if "iccpd" not in (running.get("FEATURE") or {}):
        msg = (
            "the config runs MCLAG but this image has no docker-iccpd (no FEATURE|iccpd: built without INCLUDE_ICCPD=y); "
            "install an image built with INCLUDE_ICCPD=y, nothing was changed"
        )
        raise DeviceRejectedError(msg)


_MKTEMP_RANDOM = "X" * 8  # mktemp replaces these with random characters


def _apply_patch_command(patch: str) -> str:
    r"""One shell line: the patch goes to a fresh file from ``mktemp`` (never a predictable name in /tmp that another
    user could have planted), GCU applies it, the file is removed whatever the outcome.

    Example:
        >>> command = _apply_patch_command('[{"op": "add"}]')
        >>> command.startswith("f=$(mktemp --tmpdir --suffix=.json-patch gpufabric.")
        True
        >>> for step in command.split(" && ")[1:]:
        ...     print(step)
        printf '%s\n' '[{"op": "add"}]' >"$f"
        sudo config apply-patch "$f"; rm -f "$f"
    """
    make = f"f=$(mktemp --tmpdir --suffix=.json-patch gpufabric.{_MKTEMP_RANDOM})"
    return f'{make} && printf \'%s\\n\' {shlex.quote(patch)} >"$f" && sudo config apply-patch "$f"; rm -f "$f"'


def _document(config_db: ConfigDb, frr: str) -> str:
    return json.dumps({"config_db": config_db, "frr": frr}, indent=1, sort_keys=True) + "\n"


def _load(document: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(document) if document.strip() else {}
    return {"config_db": data.get("config_db", {}), "frr": data.get("frr", "")}


# Tables whose keys are the hardware or the switch itself: their keys are never removed, only owned fields in them.
_PERMANENT = frozenset({"PORT", "DEVICE_METADATA"})
# Removal order: entries that reference others go first (GCU's patch sorter orders by YANG leafref too; this keeps the
# reviewable diff in an order the device accepts). Additions run in the reverse order.
_REFERRERS = ("BGP_NEIGHBOR", "ACL_RULE", "BUFFER_PG", "BUFFER_QUEUE", "PORT_QOS_MAP", "QUEUE", "PFC_WD", "CABLE_LENGTH")

ConfigDb = dict[str, dict[str, dict[str, Any]]]  # table → key → field → value
Field = tuple[str, str, str | None]  # (table, key, field); field None stands for a key rendered without fields

# The switch's own, even when the rendered config_db carries them (it does, to validate against SONiC's YANG models):
# the SKU's port map (lanes, alias, index, subport, breakout), the box's identity (mac, platform, hwsku) and the
# platform's buffer pools and default profiles. A push never writes them, and never touches a port the plan does not
# cable (a rendered PORT entry without a description).
_PLATFORM_FIELDS = {"PORT": frozenset({"lanes", "alias", "index", "subport"}), "DEVICE_METADATA": frozenset({"mac", "platform", "hwsku"})}
_PLATFORM_TABLES = frozenset({"BREAKOUT_CFG", "BUFFER_POOL"})
_OWNED_BUFFER_PROFILE = "pg_lossless_"  # the per-(speed, cable) lossless profiles gpufabric computes; the rest are defaults


def _pushable(config_db: ConfigDb) -> ConfigDb:
    """The part of a rendered config_db a push may write (see ``_PLATFORM_FIELDS``)."""
    out: ConfigDb = {}
    for table, entries in config_db.items():
        if table in _PLATFORM_TABLES:
            continue
        kept: dict[str, dict[str, Any]] = {}
        for entry, values in (entries or {}).items():
            if table == "PORT" and "description" not in (values or {}):
                continue  # not cabled in the plan: the port stays as the switch has it
            if table == "BUFFER_PROFILE" and not entry.startswith(_OWNED_BUFFER_PROFILE):
                continue
            kept[entry] = {k: v for k, v in (values or {}).items() if k not in _PLATFORM_FIELDS.get(table, frozenset())}
        out[table] = kept
    return out


def _fields(config_db: ConfigDb) -> set[Field]:
    """Every (table, key, field) triple of a config_db document."""
    out: set[Field] = set()
    for table, entries in config_db.items():
        for entry, values in (entries or {}).items():
            out.add((table, entry, None))
            out |= {(table, entry, name) for name in values or {}}
    return out


def _unflatten(config_db: ConfigDb, fields: set[Field]) -> ConfigDb:
    out: ConfigDb = {}
    for table, entry, name in sorted(fields, key=lambda f: (f[0], f[1], f[2] or "")):
        values = out.setdefault(table, {}).setdefault(entry, {})
        if name is not None:
            values[name] = config_db[table][entry][name]
    return out


def _pointer(*parts: str) -> str:
    """An RFC 6901 JSON pointer (``~`` and ``/`` escaped: ``Ethernet0|10.0.0.0/31`` → ``Ethernet0|10.0.0.0~131``)."""
    return "".join("/" + part.replace("~", "~0").replace("/", "~1") for part in parts)


def _rank(table: str) -> int:
    return _REFERRERS.index(table) if table in _REFERRERS else len(_REFERRERS)


def _patch(running: ConfigDb, candidate: ConfigDb, previous: ConfigDb) -> list[dict[str, Any]]:
    """Add/replace for owned fields that differ; remove for owned fields the previous push had and the candidate lacks."""
    removals: list[dict[str, Any]] = []
    for table in sorted(previous, key=lambda t: (_rank(t), t)):
        for entry, values in sorted((previous[table] or {}).items(), reverse=True):  # "Ethernet0|10.0.0.0/31" before "Ethernet0"
            have = running.get(table, {}).get(entry)
            if have is None:
                continue
            want = candidate.get(table, {}).get(entry)
            if want is None and table not in _PERMANENT and set(have) <= set(values or {}):
                removals.append({"op": "remove", "path": _pointer(table, entry)})  # a key gpufabric created, all of it ours
                continue
            gone = sorted(name for name in values or {} if name in have and name not in (want or {}))
            removals += [{"op": "remove", "path": _pointer(table, entry, name)} for name in gone]
    additions: list[dict[str, Any]] = []
    for table in sorted(candidate, key=lambda t: (-_rank(t), t)):
        if table not in running:
            additions.append({"op": "add", "path": _pointer(table), "value": candidate[table]})
            continue
        for entry, values in sorted((candidate[table] or {}).items()):
            have = running[table].get(entry)
            if have is None:
                additions.append({"op": "add", "path": _pointer(table, entry), "value": values or {}})
                continue
            for name, value in sorted((values or {}).items()):
                if name not in have:
                    additions.append({"op": "add", "path": _pointer(table, entry, name), "value": value})
                elif have[name] != value:
                    additions.append({"op": "replace", "path": _pointer(table, entry, name), "value": value})
    return removals + additions
