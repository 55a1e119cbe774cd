"""Mask secret material in device text before it is shown, recorded or logged.

Running configs carry secrets gpufabric never renders: local users' password hashes, enable secrets, SNMP communities
and users, TACACS+/RADIUS keys, BGP and OSPF keys, private keys. A diff against a real running config (or a device's
error output) may quote them, so every diff line and message goes through ``mask_secrets`` first. Each secret becomes
``<masked:xxxxxxxx>`` where ``xxxxxxxx`` is the start of its SHA-256: a changed secret still shows as a change, the
value does not. Masking is for display and records only; what is sent to a device is never masked.

The command forms come from the vendors' references:

- Arista EOS User Manual: ``username NAME [privilege N] [role R] secret [0|5|sha512] VALUE``, ``enable password
  [0|5|sha512] VALUE``, ``snmp-server community NAME``, ``tacacs-server [host H] key [0|7] VALUE``, ``radius-server
  [host H] key [0|7] VALUE``, ``ntp authentication-key N md5|sha1 [0|7] VALUE``, ``neighbor X password [0|7] VALUE``.
- Cisco Nexus 9000 NX-OS Security / System Management guides: ``username NAME password [0|5] VALUE``, ``snmp-server
  user NAME [GROUP] auth md5|sha|sha-256 VALUE [priv [aes-128] VALUE] [localizedkey]``, ``snmp-server community NAME``,
  ``tacacs-server key [0|7] "VALUE"``, ``radius-server key [0|7] "VALUE"``, ``neighbor X password 3|7 VALUE``.
- NVIDIA Cumulus Linux NVUE reference: ``nv set system aaa user NAME password|hashed-password VALUE``, ``nv set
  service snmp-server readonly-community NAME``, ``nv set system aaa tacacs server N secret VALUE``, ``nv set system
  aaa radius server H key VALUE``, ``nv set vrf V router bgp neighbor X password VALUE``.
- SONiC config_db (sonic-buildimage ``src/sonic-yang-models``): TACPLUS ``passkey``, RADIUS ``passkey``, BGP_NEIGHBOR
  ``password``, SNMP_COMMUNITY keys; the adapter's diff lines are RFC 6902 JSON-patch operations.
- FRR user guide: ``password VALUE``, ``enable password VALUE``, ``neighbor X password VALUE``, ``ip ospf
  authentication-key VALUE``, ``ip ospf message-digest-key N md5 VALUE``, ``key-string VALUE``.
- NVIDIA MLNX-OS (Onyx) user manual: ``username NAME password [0|7] VALUE``, ``snmp-server community NAME``,
  ``tacacs-server [host H] key [0|7] VALUE``, ``radius-server [host H] key [0|7] VALUE``.

Example:
    >>> mask_secrets("eos", "username admin privilege 15 secret sha512 $6$abc$def")
    'username admin privilege 15 secret sha512 <masked:be52fb47>'
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from typing import cast

from fabric.errors import Finding, InputError

_VALUE = r'("[^"\n]*"|\S+)'
_SECRET = re.compile(r"(?<![\w-])(secret(?:\s+(?:0|5|7|8|9|sha512))?\s+)" + _VALUE)
_PASSWORD = re.compile(r"(?<![\w-])((?:hashed-)?password(?:\s+(?:0|3|5|7|8|9|sha512))?\s+)" + _VALUE)
_KEY = re.compile(r"(?<![\w-])((?:pass)?key(?:\s+(?:0|3|6|7|8))?\s+)" + _VALUE)
_AUTH_KEY = re.compile(r"(?<![\w-])(authentication-key\s+(?:\d+\s+(?:md5|sha1|sha256)\s+)?(?:[0-9]\s+)?)" + _VALUE)
_DIGEST_KEY = re.compile(r"(?<![\w-])(message-digest-key\s+\d+\s+md5\s+(?:[0-9]\s+)?)" + _VALUE)
_KEY_STRING = re.compile(r"(?<![\w-])(key-string(?:\s+[0-9])?\s+)" + _VALUE)
_COMMUNITY = re.compile(r"(?<![\w])((?:snmp-server\s+community|readonly-community|readwrite-community|community-string)\s+)" + _VALUE)
_SNMP_AUTH = re.compile(r"(?<![\w-])(auth\s+(?:md5|sha|sha-224|sha-256|sha-384|sha-512)\s+)" + _VALUE)
_SNMP_PRIV = re.compile(r"(?<![\w-])(priv\s+(?:aes-128\s+|aes-256\s+|3des\s+|des\s+)?)" + _VALUE)
_PEM = re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?-----END \1PRIVATE KEY-----", re.S)

_COMMON = (_SECRET, _PASSWORD, _KEY, _AUTH_KEY, _DIGEST_KEY, _KEY_STRING, _COMMUNITY)
RULES: dict[str, tuple[re.Pattern[str], ...]] = {
    "eos": _COMMON,
    "nxos": (*_COMMON, _SNMP_AUTH, _SNMP_PRIV),
    "cumulus": _COMMON,
    "frr": _COMMON,
    "sonic": _COMMON,  # the vtysh lines of its diff; the JSON-patch lines are handled field by field
    "mlnx-os": _COMMON,
}
ANY_NOS = ""  # where the NOS is not known: every rule of every NOS applies
# config_db fields that hold secrets, and tables whose entry names are secrets (SNMP communities).
_SONIC_FIELDS = frozenset({"passkey", "password", "auth_key", "secret", "key", "shared_secret", "community"})
_SONIC_SECRET_TABLES = frozenset({"SNMP_COMMUNITY"})
_JSON_FIELD = re.compile(r'("(?:' + "|".join(sorted(_SONIC_FIELDS)) + r')"\s*:\s*)"((?:[^"\\]|\\.)*)"', re.I)


def read_env_secret(variable: str | None, field: str, definition: str | None = None) -> str | None:
    """The value of the environment variable ``switches.credentials.<field>`` names, or None when it names none.

    ``definition`` is the file the name comes from, for the error message.

    Example:
        >>> read_env_secret(None, "password_env") is None
        True

    Raises:
        InputError: the variable is named but not set (or empty).
    """
    if variable is None:
        return None
    value = os.environ.get(variable)
    if not value:
        msg = f"environment variable {variable} is not set; export it before running (the definition names it here)"
        raise InputError([Finding(("switches", "credentials", field), msg, file=definition)], definition)
    return value


def masked(secret: str) -> str:
    """The marker that replaces ``secret``: the same secret always gives the same marker.

    Example:
        >>> masked("public")
        '<masked:efa1f375>'
    """
    return f"<masked:{hashlib.sha256(secret.encode()).hexdigest()[:8]}>"


def mask_secrets(nos: str, text: str) -> str:
    """``text`` (a config, a diff, a device's output) with every secret of ``nos``'s command forms masked.

    An unknown NOS gets the union of every rule, so nothing passes unmasked for want of a name.

    Example:
        >>> mask_secrets("cumulus", "nv set service snmp-server readonly-community public access any")
        'nv set service snmp-server readonly-community <masked:efa1f375> access any'
    """
    text = _PEM.sub(lambda m: masked(m.group()), text)
    rules = RULES.get(nos, tuple({p.pattern: p for rules in RULES.values() for p in rules}.values()))
    json_patch = nos == "sonic" or nos not in RULES
    lines = [_mask_line(line, rules, json_patch=json_patch) for line in text.split("\n")]
    return "\n".join(lines)


def mask_lines(nos: str, lines: Iterable[str]) -> list[str]:
    """``mask_secrets`` over each line of a diff."""
    return [mask_secrets(nos, line) for line in lines]


def _mask_line(line: str, rules: tuple[re.Pattern[str], ...], *, json_patch: bool) -> str:
    if json_patch and line.startswith("{"):
        return _mask_patch_op(line)
    line = _JSON_FIELD.sub(lambda m: f'{m.group(1)}"{masked(m.group(2))}"', line)
    for rule in rules:
        line = rule.sub(lambda m: m.group(1) + (m.group(2) if m.group(2).startswith("<masked:") else masked(m.group(2))), line)
    return line


def _mask_patch_op(line: str) -> str:
    """A JSON-patch op with a secret path segment (field or SNMP community) has that segment and its value masked."""
    try:
        op = json.loads(line)
    except ValueError:
        return _JSON_FIELD.sub(lambda m: f'{m.group(1)}"{masked(m.group(2))}"', line)
    if not isinstance(op, dict):
        return line
    fields = cast("dict[str, object]", op)
    parts = str(fields.get("path", "")).split("/")
    secret = any(p.lower() in _SONIC_FIELDS for p in parts)
    if len(parts) > 2 and parts[1] in _SONIC_SECRET_TABLES:
        parts[2] = masked(parts[2])
        fields["path"] = "/".join(parts)
    elif len(parts) == 2 and parts[1] in _SONIC_SECRET_TABLES and isinstance(fields.get("value"), dict):
        entries = cast("dict[str, object]", fields["value"])
        fields["value"] = {masked(name): entry for name, entry in entries.items()}
        return json.dumps(fields, sort_keys=True)
    if secret and "value" in fields:
        fields["value"] = _masked_json(fields["value"])
    elif "value" in fields:
        fields["value"] = _mask_json_value(fields["value"])
    return json.dumps(fields, sort_keys=True)


def _mask_json_value(value: object) -> object:
    if isinstance(value, dict):
        entries = cast("dict[str, object]", value)
        return {k: _masked_json(v) if k.lower() in _SONIC_FIELDS else _mask_json_value(v) for k, v in entries.items()}
    return value


def _masked_json(value: object) -> str:
    return masked(value if isinstance(value, str) else json.dumps(value, sort_keys=True))
