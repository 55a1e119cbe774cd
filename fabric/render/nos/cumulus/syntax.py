"""The NVUE words that changed between the Cumulus releases gpufabric renders, in one place, each with its source.

A template writes ``nv set interface {{ n }} {{ nv.ip }} address …`` and gets the word its release takes; a section
whose structure changed (the OOB DHCP relay) has a template variant per release instead (``fabric.render.sections``).
Every rendered line is walked onto NVIDIA's NVUE OpenAPI schema of its release by ``tests/render/test_nvue_schema.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabric.catalog.releases import release_key

IPV4_SINCE = "5.15"
"""NVUE reference, Interface: "nv set interface <interface-id> ipv4 address … In Cumulus Linux 5.14 and earlier the
command is nv set interface <interface-id> ip address"; the CL 5.15 OpenAPI spec (1.11.0.89) ``InterfaceEntry`` has
``ipv4``, ``ipv6`` and ``vrf`` and no ``ip`` (so ``ip vrf`` became ``vrf``, ``ip vrr`` ``ipv4 vrr``)."""

ENABLED_SINCE = "5.15"
"""CL 5.15 OpenAPI spec: ``path-selection multipath aspath-ignore`` and ``bridge domain <id> stp admin-edge|bpdu-guard``
take ``Literal["enabled", "disabled"]``; CL 5.14 (spec 1.10.0.93) and earlier take ``Literal["on", "off"]``."""


@dataclass(frozen=True, slots=True)
class NvueWords:
    """Release-dependent words of an ``nv set`` line.

    Attributes:
        ip: the IPv4 object under an interface (``ip`` up to 5.14, ``ipv4`` from 5.15): ``… {ip} address``, ``… {ip} vrr``.
        ip_vrf: an interface's VRF sits under ``ip`` (``ip vrf <name>``, up to 5.14); from 5.15 it is ``vrf <name>``.
            A flag, not the words: a template expression renders one word (``fabric.render._jinja``).
        on: a switch turned on where 5.15 changed on/off to enabled/disabled (aspath-ignore, STP edge / BPDU guard,
            ``system forwarding ecmp-hash <field>``).
        off: the same switch turned off.
    """

    ip: str
    ip_vrf: bool
    on: str
    off: str = "off"


def nvue_words(release: str) -> NvueWords:
    """The words ``release`` takes.

    Example:
        >>> nvue_words("5.14").ip, nvue_words("5.15").ip
        ('ip', 'ipv4')
    """
    new_ip = release_key(release) >= release_key(IPV4_SINCE)
    enabled = release_key(release) >= release_key(ENABLED_SINCE)
    return NvueWords("ipv4" if new_ip else "ip", not new_ip, "enabled" if enabled else "on", "disabled" if enabled else "off")
