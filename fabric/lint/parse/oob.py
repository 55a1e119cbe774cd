"""Parse an OOB management switch's config back into what the OOB rules care about, per NOS (render: ``fabric.render.oob``).

One ``OobObserved`` per switch: the VLAN each port is an untagged (access) member of, the DHCP relay's servers, the
sources the management ACL permits and whether that ACL is applied to the switch's own SSH. A value the config does
not set stays absent, so a rule reports it as missing rather than guessing a default.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, cast


@dataclass(slots=True)
class OobObserved:
    """What one management switch does, as parsed from its config."""

    device: str
    access: dict[str, int] = field(default_factory=dict[str, int])
    """Port -> the VLAN it is an untagged member of."""
    relay_servers: set[str] = field(default_factory=set[str])
    permits: list[str] = field(default_factory=list[str])
    """Source prefixes the management ACL permits."""
    acl_applied: bool = False


_ACCESS = re.compile(r"^nv set interface (\S+) bridge domain br_default access (\d+)$")
# CL <= 5.13: `dhcp-relay default server <ip>`; CL >= 5.14: `… server-group <group> server <ip>` (NVUE reference, DHCP-Relay)
_RELAY = re.compile(r"^nv set service dhcp-relay default (?:server-group \S+ )?server (\S+)$")
_RULE = re.compile(r"^nv set acl (\S+) rule (\d+) (match ip source-ip|action) (\S+)$")
_APPLIED = re.compile(r"^nv set system control-plane acl (\S+) inbound$")


def parse_nvue_oob(device: str, text: str) -> OobObserved:
    r"""A Cumulus ``nvue.sh`` as ``OobObserved``: access ports, relay servers, the control-plane ACL's permitted sources.

    Example:
        >>> o = parse_nvue_oob("oob-su1", "nv set interface swp1 bridge domain br_default access 100\n")
        >>> o.access
        {'swp1': 100}
    """
    observed = OobObserved(device)
    rules: dict[tuple[str, str], dict[str, str]] = {}
    applied: set[str] = set()
    for raw in text.splitlines():
        line = " ".join(shlex.split(raw, comments=True))
        if match := _ACCESS.match(line):
            observed.access[match.group(1)] = int(match.group(2))
        elif match := _RELAY.match(line):
            observed.relay_servers.add(match.group(1))
        elif match := _RULE.match(line):
            rules.setdefault((match.group(1), match.group(2)), {})[match.group(3)] = match.group(4)
        elif match := _APPLIED.match(line):
            applied.add(match.group(1))
    observed.acl_applied = bool(applied)
    source = "match ip source-ip"
    observed.permits = [r[source] for (acl, _), r in sorted(rules.items()) if acl in applied and r.get("action") == "permit" and source in r]
    return observed


def parse_config_db_oob(device: str, text: str) -> OobObserved:
    """A SONiC ``config_db.json`` as ``OobObserved``: untagged VLAN members, the VLAN's dhcp_servers, CTRLPLANE SSH rules."""
    db = cast("dict[str, dict[str, dict[str, Any]]]", json.loads(text))
    observed = OobObserved(device)
    for key, member in db.get("VLAN_MEMBER", {}).items():
        vlan, _, port = key.partition("|")
        if member.get("tagging_mode") == "untagged":
            observed.access[port] = int(vlan.removeprefix("Vlan"))
    for entry in db.get("VLAN", {}).values():
        observed.relay_servers.update(str(s) for s in entry.get("dhcp_servers", []))
    tables = {name for name, t in db.get("ACL_TABLE", {}).items() if t.get("type") == "CTRLPLANE" and "SSH" in t.get("services", [])}
    observed.acl_applied = bool(tables)
    for key, rule in sorted(db.get("ACL_RULE", {}).items()):
        if key.partition("|")[0] in tables and rule.get("PACKET_ACTION") == "ACCEPT":
            observed.permits.append(str(rule.get("SRC_IP", "0.0.0.0/0")))
    return observed


def parse_eos_oob(device: str, text: str) -> OobObserved:
    r"""An EOS ``startup-config`` as ``OobObserved``: access VLANs, ``ip helper-address``, the SSH standard ACL.

    Example:
        >>> o = parse_eos_oob("oob-mgmt", "interface Ethernet1\n   switchport access vlan 100\n   switchport mode access\n!\n")
        >>> o.access
        {'Ethernet1': 100}
    """
    observed = OobObserved(device)
    acls: dict[str, list[str]] = {}
    ssh_acl: str | None = None
    for head, *body in _blocks(text):
        words = head.split()
        if words[:1] == ["interface"] and len(words) == 2:
            vlans = [int(b.split()[-1]) for b in body if b.startswith("switchport access vlan ")]
            if vlans and "switchport mode access" in body:
                observed.access[words[1]] = vlans[0]
            observed.relay_servers.update(b.split()[-1] for b in body if b.startswith("ip helper-address "))
        elif words[:3] == ["ip", "access-list", "standard"]:
            acls[words[3]] = [b.split()[2] for b in body if len(b.split()) == 3 and b.split()[1] == "permit"]
        elif head == "management ssh":
            ssh_acl = next((b.split()[2] for b in body if b.startswith("ip access-group ") and b.endswith(" in")), None)
    observed.acl_applied = ssh_acl is not None and ssh_acl in acls
    observed.permits = acls.get(ssh_acl or "", [])
    return observed


def parse_nxos_oob(device: str, text: str) -> OobObserved:
    r"""An NX-OS ``running-config`` as ``OobObserved``: access VLANs, ``ip dhcp relay address``, the vty ACL's permits.

    Example:
        >>> o = parse_nxos_oob("oob-mgmt", "interface Ethernet1/1\n  switchport mode access\n  switchport access vlan 100\n!\n")
        >>> o.access
        {'Ethernet1/1': 100}
    """
    observed = OobObserved(device)
    acls: dict[str, list[str]] = {}
    vty_acl: str | None = None
    for head, *body in _blocks(text):
        words = head.split()
        if words[:1] == ["interface"] and len(words) == 2:
            vlans = [int(b.split()[-1]) for b in body if b.startswith("switchport access vlan ")]
            if vlans and "switchport mode access" in body:
                observed.access[words[1]] = vlans[0]
            observed.relay_servers.update(b.split()[-1] for b in body if b.startswith("ip dhcp relay address "))
        elif words[:2] == ["ip", "access-list"] and len(words) == 3:
            acls[words[2]] = [w[3] for w in (b.split() for b in body) if len(w) > 3 and w[1:3] == ["permit", "tcp"]]
        elif head == "line vty":
            vty_acl = next((b.split()[1] for b in body if b.startswith("access-class ") and b.endswith(" in")), None)
    observed.acl_applied = vty_acl is not None and vty_acl in acls
    observed.permits = acls.get(vty_acl or "", [])
    return observed


def _blocks(text: str) -> list[list[str]]:
    """Top-level lines with their indented lines under them ("!" comments dropped)."""
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith(" "):
            if blocks:
                blocks[-1].append(line.strip())
        elif line.strip() and not line.startswith("!"):
            blocks.append([line.strip()])
    return blocks


OOB_PARSERS = {"cumulus": parse_nvue_oob, "sonic": parse_config_db_oob, "eos": parse_eos_oob, "nxos": parse_nxos_oob}
OOB_CONFIG_FILE = {"cumulus": "nvue.sh", "sonic": "config_db.json", "eos": "startup-config", "nxos": "running-config"}
