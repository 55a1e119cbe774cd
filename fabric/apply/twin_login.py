"""The twin's login gate: each twin switch's sshd runs this (``ForceCommand``) instead of vtysh straight away.

A real switch applies its management ACL to SSH logins (EOS ``ip access-group ... in`` under ``management ssh``, NX-OS
``access-class ... in`` under ``line vty``, Cumulus/SONiC iptables on the management port); FRR's own ``line vty`` /
``access-class`` guards only FRR's telnet vty, never vtysh (FRR user guide, "Basic Commands": access-class applies to
the vty). So the twin enforces it here, from the switch's running config at login time: the ACL named by
``access-class`` under ``line vty``, FRR's ``access-list`` semantics (entries in sequence order, first match wins, no
match is a deny). Every twin sshd listens on loopback, so the address checked is the management station's (the OOB
plane's gateway, given on the command line), the address a real switch's ACL sees the pushing host come from.

A refused login prints why and exits 1 before vtysh starts; an allowed one becomes vtysh. Standard library only: it
runs for every login, outside the package's imports.

Usage: twin_login.py NAMESPACE RUN_DIR STATION   (STATION "-": no management address, no check)
"""

from __future__ import annotations

import ipaddress
import os
import re
import subprocess
import sys

VTYSH = "/usr/bin/vtysh"
IP = "/usr/sbin/ip"
_CLASS = re.compile(r"^\s*access-class (\S+)")
_ENTRY = re.compile(r"^access-list (\S+) (?:seq (\d+) )?(permit|deny) (.+?)\s*$")


def refused_by(config: str, station: str) -> str | None:
    """Why ``config``'s management ACL refuses a login from ``station``, or None when it is allowed (or has no ACL).

    Example:
        >>> conf = "access-list M seq 10 permit 10.103.0.0/16\\naccess-list M seq 20 deny any\\nline vty\\n access-class M\\nexit\\n"
        >>> refused_by(conf, "10.103.0.1") is None
        True
        >>> refused_by(conf.replace("10.103.0.0/16", "10.199.0.0/16"), "10.103.0.1")
        'access-class M (line vty): seq 20 deny any matches 10.103.0.1'
    """
    lines = config.splitlines()
    in_vty, name = False, None
    for line in lines:
        if line.startswith("line vty"):
            in_vty = True
        elif not line.startswith(" "):
            in_vty = False
        elif in_vty and (m := _CLASS.match(line)):
            name = m.group(1)
    if name is None:
        return None
    address = ipaddress.ip_address(station)
    entries = sorted(
        ((int(m.group(2) or 0), m.group(3), m.group(4)) for line in lines if (m := _ENTRY.match(line)) and m.group(1) == name), key=lambda e: e[0]
    )
    for seq, action, match in entries:
        if _matches(match, address):
            return None if action == "permit" else f"access-class {name} (line vty): seq {seq} {action} {match} matches {station}"
    return f"access-class {name} (line vty): no entry permits {station} (implicit deny)"


def _matches(match: str, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if match == "any":
        return True
    host = match.removeprefix("host ").removesuffix(" exact-match")
    try:
        return address in ipaddress.ip_network(host, strict=False)
    except ValueError:
        return False  # a form we do not read (wildcard masks): it matches nothing, so it can only deny


def main(argv: list[str]) -> int:
    """Check the login, then become vtysh."""
    ns, run_dir, station = argv
    vtysh = [IP, "netns", "exec", ns, VTYSH, "--vty_socket", f"{run_dir}/run", "--config_dir", run_dir]
    if station != "-":
        shown = subprocess.run([*vtysh, "-c", "show running-config"], capture_output=True, text=True, timeout=30, check=False)  # noqa: S603 - fixed argv
        why = refused_by(shown.stdout, station)
        if why is not None:
            sys.stderr.write(f"% Connection refused by the management ACL: {why}\n")
            return 1
    os.execv(IP, vtysh)  # noqa: S606 - fixed argv, no shell
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
