"""Read a rendered NX-OS / EOS config with Cisco's and Arista's own parsers: the Ansible resource modules.

PyPI ``ansible==12.3.0`` bundles ``cisco.nxos`` 11.1.0 and ``arista.eos`` 12.0.0. Their resource modules (``nxos_interfaces``,
``eos_bgp_global``, ...) take ``state: parsed`` with ``running_config`` (device text → structured data, no device) and
``state: rendered`` with ``config`` (structured data → the commands the module would send, no device). Both run the
module's own ``rm_templates`` parsers / renderers, the code that drives real switches.

A module is run in-process, as the collections' unit tests run it: the arguments go where ``AnsibleModule`` reads them
(``ansible.module_utils.basic._ANSIBLE_ARGS``, legacy serialization profile) and ``exit_json`` / ``fail_json`` raise
instead of exiting: about 0.1 s a call once the module is imported (measured on this project's dev machine), with no
``ansible-playbook``, inventory or ``network_cli`` connection.

On a device, each module's facts read one section of the running config (``show running-config | section ^interface``
and so on, in ``facts/<resource>/<resource>.py``); ``section`` below hands each module the same section of our text, so
that a line outside the module's section cannot trip its parser (a whole NX-OS leaf config makes ``nxos_interfaces``
fail with "'name' is undefined": ``mtu 9216`` under ``policy-map type network-qos`` is read as an interface line).
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass
from typing import Any
from unittest import mock

from ansible.module_utils import basic


class _Exit(Exception):  # noqa: N818 - stands for the module's exit, not an error
    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__(result)
        self.result = result


def run_module(collection: str, module: str, args: dict[str, Any]) -> dict[str, Any]:
    """The result ``module`` of ``collection`` (``cisco.nxos``) returns for ``args``; ``failed`` set when it fails."""
    basic._ANSIBLE_PROFILE = "legacy"  # pyright: ignore[reportPrivateUsage] - where AnsibleModule reads its arguments
    basic._ANSIBLE_ARGS = json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode()  # pyright: ignore[reportPrivateUsage]
    code = importlib.import_module(f"ansible_collections.{collection}.plugins.modules.{module}")

    def exit_json(_self: object, **result: Any) -> None:
        raise _Exit(result)

    def fail_json(_self: object, **result: Any) -> None:
        raise _Exit({"failed": True, **result})

    with mock.patch.object(basic.AnsibleModule, "exit_json", exit_json), mock.patch.object(basic.AnsibleModule, "fail_json", fail_json):
        try:
            code.main()
        except _Exit as done:
            return done.result
    msg = f"{module} returned without exit_json"
    raise AssertionError(msg)


def section(text: str, pattern: str) -> str:
    """``show running-config | section PATTERN``: every top-level block whose first line matches, with its lines."""
    out: list[str] = []
    keep = False
    for line in text.splitlines():
        if line.strip() in ("!", "end") or line.lstrip().startswith("!"):
            continue
        if line and not line[0].isspace():
            keep = re.search(pattern, line) is not None
        if keep:
            out.append(line)
    return "\n".join(out)


@dataclass(frozen=True, slots=True)
class Resource:
    """One resource module and the running-config section its facts read on a device."""

    module: str
    section: str


Line = tuple[str, str]
"""(top-level block, command in it), e.g. ("interface Ethernet1/1", "mtu 9216"); a top-level command is ("", command)."""


def blocks(text: str) -> set[Line]:
    """Our text as (top-level block, stripped command) pairs; block headers pair with ""."""
    found: set[Line] = set()
    top = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("!") or line == "end":
            continue
        if raw[0].isspace():
            found.add((top, line))
        else:
            top = line
            found.add((line, ""))
    return found


def _rendered_blocks(commands: list[str], headers: set[str]) -> set[Line]:
    """A module's flat ``rendered`` command list as (block, command): a command that is one of our top-level headers
    (or opens a block the way one does: ``interface``, ``router bgp``, ``vlan``, ``ip access-list``) starts a block."""
    found: set[Line] = set()
    top = ""
    opener = re.compile(r"^(interface |router bgp |vlan \d|ip access-list |ipv6 access-list )")
    for command in commands:
        line = command.strip()
        if line in headers or opener.match(line):
            top = line
            found.add((line, ""))
        else:
            found.add((top, line))
    return found


@dataclass(frozen=True, slots=True)
class RoundTrip:
    """What the vendor's parsers made of one config: the lines they read back, and any module failure."""

    lines: set[Line]
    failures: tuple[str, ...]


def round_trip(collection: str, resources: tuple[Resource, ...], text: str) -> RoundTrip:
    """Parse ``text`` with every resource module (``state: parsed``), render what it read (``state: rendered``), and
    return the union of the rendered lines as (block, command)."""
    headers = {top for top, line in blocks(text) if not line}
    lines: set[Line] = set()
    failures: list[str] = []
    for resource in resources:
        part = section(text, resource.section)
        if not part:
            continue
        parsed = run_module(collection, resource.module, {"state": "parsed", "running_config": part})
        if parsed.get("failed"):
            failures.append(f"{resource.module} parsed: {parsed.get('msg')}")
            continue
        if not parsed.get("parsed"):
            continue
        rendered = run_module(collection, resource.module, {"state": "rendered", "config": parsed["parsed"]})
        if rendered.get("failed"):
            failures.append(f"{resource.module} rendered: {rendered.get('msg')}")
            continue
        lines |= _rendered_blocks(list(rendered.get("rendered", [])), headers)
    return RoundTrip(lines, tuple(failures))
