"""Strict string types: every string that can reach a config, a command, a file name or a path has a pattern.

A definition is untrusted input. Its strings end up in switch configs (one command per line), in shell commands sent
to switches, in files sourced by root shells on nodes, in systemd units and in file and namespace names, so each type
allows only what its consumer can take literally: no whitespace where a token goes, no newline or control character
anywhere, and a length cap everywhere.

Free text that reaches no device (``Description``) may be printable Unicode; text that reaches a device is printable
ASCII (``TagValue``) or a token. ``Description``, ``GpuModel`` and ``CatalogKey`` are shared with the catalog's data
files and defined on its floor (``fabric.catalog.text``); they are re-exported here.

Example:
    >>> from pydantic import TypeAdapter
    >>> TypeAdapter(InterfaceName).validate_python("enp24s0np0")
    'enp24s0np0'
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field

from fabric.catalog.text import CATALOG_KEY_RE, DESCRIPTION_MAX, DESCRIPTION_RE, GPU_MODEL_RE, CatalogKey, Description, GpuModel

__all__ = [  # the catalog's shared strict strings (fabric.catalog.text) are re-exported with the definition's own
    "CATALOG_KEY_RE",
    "DESCRIPTION_MAX",
    "DESCRIPTION_RE",
    "DOMAIN_NAME_MAX",
    "DOMAIN_NAME_RE",
    "FILE_PATH_MAX",
    "FILE_PATH_RE",
    "GPU_MODEL_RE",
    "GUID_RE",
    "HOSTNAME_FORMAT_RE",
    "HOST_NAME_RE",
    "IDENTIFIER_RE",
    "INTERFACE_NAME_RE",
    "SWITCH_PORT_RE",
    "TAG_TEXT_RE",
    "USER_NAME_RE",
    "CatalogKey",
    "Description",
    "DomainName",
    "FilePath",
    "GpuModel",
    "Guid",
    "HostName",
    "HostnameFormat",
    "Identifier",
    "InterfaceName",
    "TagKey",
    "TagValue",
    "UserName",
    "is_safe_text",
    "is_switch_port_name",
]

# Linux interface names, after the kernel's dev_valid_name() (torvalds/linux net/core/dev.c): non-empty, shorter than
# IFNAMSIZ (16), not "." or "..", no '/', ':' or whitespace. We allow a safe subset on top (letters, digits, '_', '.',
# '-', starting with a letter or digit) because the names also reach shell env files, systemd units and NOS commands.
INTERFACE_NAME_RE = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$"
# RFC 1123 §2.1 host name label (letters, digits, '-', 1-63, no leading or trailing '-'); lower case by project rule.
HOST_NAME_RE = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
# RFC 1035 §2.3.1 domain name: dot-separated labels of letters, digits and '-', each 1-63 characters, no leading or
# trailing '-' (RFC 1123 §2.1 allows a leading digit); at most 253 characters in text form.
DOMAIN_NAME_RE = r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
# A host-name format: a DNS label with exactly one {index} field, optionally zero-padded to a width of at most 6.
HOSTNAME_FORMAT_RE = r"^[a-z0-9-]*\{index(:0[1-6]d)?\}[a-z0-9-]*$"
# A port GUID as InfiniBand tools print it (ibstat "Port GUID: 0x0c42a10300a1b2c3"): 0x and 64 bits as 16 hex digits.
GUID_RE = r"^0x[0-9a-fA-F]{16}$"
# A relative or absolute file path: no whitespace, control characters, quotes or shell metacharacters.
FILE_PATH_RE = r"^[A-Za-z0-9_./+-]+$"
# A login name: POSIX portable user name (letters, digits, '.', '_', '-', not starting with '-'), at most 32.
USER_NAME_RE = r"^[A-Za-z_][A-Za-z0-9._-]{0,31}$"
# Catalog keys and cloud identifiers (instance types, image names, tiers): one token of safe characters.
IDENTIFIER_RE = r"^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}$"
# A label or tag key/value: printable ASCII on one line (the cloud-specific character rules are the cloud rules' job).
TAG_TEXT_RE = r"^[ -~]*$"

DOMAIN_NAME_MAX = 253  # RFC 1035 §2.3.4 (255 octets on the wire = 253 characters in text form)
FILE_PATH_MAX = 255

InterfaceName = Annotated[
    str, Field(pattern=INTERFACE_NAME_RE, description="Linux interface name: 1-15 letters, digits, '_', '.', '-', starting alphanumeric.")
]
HostName = Annotated[str, Field(pattern=HOST_NAME_RE, description="RFC 1123 host name label in lower case: a-z, 0-9 and '-'.")]
DomainName = Annotated[str, Field(pattern=DOMAIN_NAME_RE, max_length=DOMAIN_NAME_MAX, description="RFC 1035 domain name, e.g. cluster.example.com.")]
HostnameFormat = Annotated[
    str,
    Field(
        pattern=HOSTNAME_FORMAT_RE,
        max_length=80,
        description="Host-name format with one {index} field, optionally zero-padded up to width 6, e.g. 'gpu{index:03d}'.",
    ),
]
Guid = Annotated[str, Field(pattern=GUID_RE, description="InfiniBand port GUID, e.g. 0x0c42a10300a1b2c3 (0x and 16 hex digits).")]
FilePath = Annotated[str, Field(pattern=FILE_PATH_RE, max_length=FILE_PATH_MAX, description="A file path: letters, digits, '_', '.', '/', '+', '-'.")]
UserName = Annotated[str, Field(pattern=USER_NAME_RE, description="A login name: letters, digits, '.', '_', '-', at most 32.")]
Identifier = Annotated[str, Field(pattern=IDENTIFIER_RE, description="An identifier: letters, digits, '_', '.', ':', '/', '-'.")]
TagKey = Annotated[str, Field(pattern=TAG_TEXT_RE, min_length=1, max_length=128, description="Tag or label key (printable, one line).")]
TagValue = Annotated[str, Field(pattern=TAG_TEXT_RE, max_length=256, description="Tag or label value (printable, one line).")]

# Switch port names per NOS, as the planner names them (fabric/plan/ports.py) and each NOS's CLI spells them.
SWITCH_PORT_RE: dict[str, re.Pattern[str]] = {
    "sonic": re.compile(r"^Ethernet\d{1,4}$"),  # SONiC PORT table keys: Ethernet0, Ethernet8, ...
    "cumulus": re.compile(r"^swp\d{1,3}(s\d)?$"),  # Cumulus Linux: swp1, breakouts swp1s0..swp1s3
    "eos": re.compile(r"^Ethernet\d{1,3}(/\d{1,2}){0,2}$"),  # Arista EOS: Ethernet1, Ethernet1/1
    "nxos": re.compile(r"^Ethernet\d{1,2}/\d{1,3}(/\d{1,2})?$"),  # Cisco NX-OS: Ethernet1/1, breakouts Ethernet1/1/1
    "frr": re.compile(INTERFACE_NAME_RE),  # FRR runs on Linux: its ports are Linux interfaces
    "mlnx-os": re.compile(r"^(IB|ib)\d{1,2}/\d{1,3}(/\d{1,2})?$"),  # MLNX-OS InfiniBand: IB1/1, splits IB1/1/1
    "nvos": re.compile(r"^sw\d{1,3}p\d(s\d)?$"),  # NVOS front-panel ports: sw1p1, logical sw1p1s1 (described, not rendered)
}


def is_switch_port_name(nos: str, name: str) -> bool:
    """Whether ``name`` is a port name of ``nos``.

    Example:
        >>> is_switch_port_name("cumulus", "swp1s0"), is_switch_port_name("cumulus", "swp1'; reboot")
        (True, False)
    """
    pattern = SWITCH_PORT_RE.get(nos)
    return bool(pattern is not None and pattern.fullmatch(name))


def is_safe_text(value: str) -> bool:
    """Whether ``value`` holds no control character (C0, DEL, C1) and no Unicode line or paragraph separator.

    Example:
        >>> is_safe_text("x.com"), is_safe_text("x.com\\nusername evil")
        (True, False)
    """
    return not _UNSAFE.search(value)


_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
