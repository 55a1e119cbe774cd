"""Candidate vs running: the remediation lines that turn one into the other (hier_config), for FRR-style configs.

Pure: text in, text out. The same function gives the rollback (running-after → backup).
"""

from __future__ import annotations

import re

from hier_config import Platform, WorkflowRemediation, get_hconfig

_NOISE = frozenset({"exit", "exit-address-family", "end", "exit-vrf"})
_KEEP_SECTIONS = ("interface ", "line vty")
_VOLATILE = ("frr version", "Building configuration", "Current configuration")


def normalize(text: str) -> str:
    """Drop comments, separators, block terminators and FRR's show-running banner; keep indentation.

    Example:
        >>> normalize("frr version 8.4.4\\n!\\ninterface lo\\n ip address 10.0.0.1/32\\nexit\\n")
        'interface lo\\n ip address 10.0.0.1/32'
    """
    lines: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("!") or stripped in _NOISE or stripped.startswith(_VOLATILE):
            continue
        lines.append(line.rstrip())
    return "\n".join(lines)


def remediation(running: str, candidate: str) -> list[str]:
    """The config-mode lines that make ``running`` equal ``candidate``; empty when they already agree.

    Example:
        >>> remediation("router bgp 1\\n maximum-paths 64\\n", "router bgp 1\\n maximum-paths 32\\n")
        ['router bgp 1', '  no maximum-paths 64', '  maximum-paths 32', '  exit']
    """
    current = get_hconfig(Platform.GENERIC, normalize(running))
    workflow = WorkflowRemediation(current, get_hconfig(Platform.GENERIC, normalize(candidate)))
    lines: list[str] = []
    for section in workflow.remediation_config.children:
        target = section.text.removeprefix("no ")
        if section.text.startswith("no ") and target.startswith(_KEEP_SECTIONS):
            # FRR cannot delete an interface or the vty line: empty the section instead
            existing = next(c for c in current.children if c.text == target)
            lines += [target, *(_negate(child.text) for child in existing.children), "  exit"]
            continue
        lines += [_free_text_negation(line) for line in str(section).splitlines() if line.strip()]
    return _reset_bfd_timers(lines)


# FRR's BFD timers have no ``no`` form: ``vtysh --dryrun`` on Debian's FRR 8.4.4 answers "% Unknown command" to
# ``no transmit-interval 200`` and ``no detect-multiplier 5`` under ``bfd`` / ``profile``. A timer is reset by setting
# its default, which the FRR user guide states: "detect-multiplier (2-255) ... The default value is 3", "receive-interval
# (10-60000) ... The default value is 300 milliseconds", likewise transmit-interval; "echo receive-interval" and
# "echo transmit-interval" default to 50 (https://docs.frrouting.org/en/stable-8.4/bfd.html, BFD Peer and Profile
# Configuration).
_BFD_TIMER_DEFAULTS = {
    "detect-multiplier": 3,
    "receive-interval": 300,
    "transmit-interval": 300,
    "echo receive-interval": 50,
    "echo transmit-interval": 50,
    "echo-interval": 50,
}
_BFD_TIMERS = "|".join(map(re.escape, sorted(_BFD_TIMER_DEFAULTS, key=len, reverse=True)))
_BFD_TIMER_NEGATION = re.compile(rf"^(?P<indent>\s*)no (?P<timer>{_BFD_TIMERS}) \d+$")


def _reset_bfd_timers(lines: list[str]) -> list[str]:
    """``no <timer> <value>`` becomes nothing where the same block sets the timer anew, else ``<timer> <default>``.

    Example:
        >>> _reset_bfd_timers(["bfd", " profile F", "  no transmit-interval 200", "  exit"])
        ['bfd', ' profile F', '  transmit-interval 300', '  exit']
        >>> _reset_bfd_timers(["bfd", " profile F", "  no transmit-interval 200", "  transmit-interval 150", "  exit"])
        ['bfd', ' profile F', '  transmit-interval 150', '  exit']
    """
    kept: list[str] = []
    for index, line in enumerate(lines):
        match = _BFD_TIMER_NEGATION.match(line)
        if match is None:
            kept.append(line)
            continue
        indent, timer = match["indent"], match["timer"]
        if not any(other.startswith(f"{indent}{timer} ") for other in _same_block(lines, index + 1, indent)):
            kept.append(f"{indent}{timer} {_BFD_TIMER_DEFAULTS[timer]}")
    return kept


def _same_block(lines: list[str], start: int, indent: str) -> list[str]:
    """The lines after ``start`` up to the first one indented less than ``indent`` (the end of the block)."""
    block: list[str] = []
    for line in lines[start:]:
        if len(line) - len(line.lstrip()) < len(indent):
            break
        block.append(line)
    return block


def _negate(line: str) -> str:
    return _free_text_negation(f"  no {line}")


def _free_text_negation(line: str) -> str:
    """FRR refuses ``no description <text>``: a description is removed with a bare ``no description``.

    Example:
        >>> _free_text_negation("  no description node1:eth1")
        '  no description'
    """
    return line.split(" description ", maxsplit=1)[0] + " description" if line.lstrip().startswith("no description ") else line


def platform_remediation(running: str, candidate: str, platform: Platform) -> list[str]:
    """hier_config's remediation for a NOS it models (EOS, NX-OS), comments and ``end`` dropped.

    Example:
        >>> platform_remediation("hostname a\\n", "hostname b\\n", Platform.ARISTA_EOS)
        ['hostname b']
    """
    current = get_hconfig(platform, normalize(running))
    workflow = WorkflowRemediation(current, get_hconfig(platform, normalize(candidate)))
    return [line for line in str(workflow.remediation_config).splitlines() if line.strip() and line.strip() != "end"]
