"""The twin's login gate: each twin switch's sshd asks it for the authorized keys (``AuthorizedKeysCommand``).

A real switch applies its management ACL to SSH logins (EOS ``ip access-group ... in`` under ``management ssh``, NX-OS
``access-class ... in`` under ``line vty``, Cumulus/SONiC iptables on the management port); FRR's own ``line vty`` /
``access-class`` guards only FRR's telnet vty, never vtysh (FRR user guide, "Basic Commands": access-class applies to
the vty). So the twin enforces it here, from the switch's running config at login time: the ACL named by
``access-class`` under ``line vty``, FRR's ``access-list`` semantics (entries in sequence order, first match wins, no
match is a deny). Every twin sshd listens on loopback, so the address checked is the management station's (the OOB
plane's gateway, given on the command line), the address a real switch's ACL sees the pushing host come from.

An allowed login gets the twin's authorized keys; a refused one gets none, so the client's authentication fails at
once (a refused TCP connection or login on a real switch fails as fast), and the reason is appended to
``ssh/refused.log`` in the twin's directory (sshd discards the command's stderr). Standard library only: sshd runs
it with the system Python for every login.

Usage: twin_login.py NAMESPACE RUN_DIR STATION AUTHORIZED_KEYS   (STATION "-": no management address, no check)
"""

from __future__ import annotations

import ipaddress
import re
import subprocess
import sys
from pathlib import Path

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
    """Print the authorized keys when the switch's management ACL lets the station in; else log why."""
    ns, run_dir, station, keys = argv
    if station != "-":
        vtysh = [IP, "netns", "exec", ns, VTYSH, "--vty_socket", f"{run_dir}/run", "--config_dir", run_dir, "-c", "show running-config"]
        shown = subprocess.run(vtysh, capture_output=True, text=True, timeout=20, check=False)  # noqa: S603 - fixed argv
        why = refused_by(shown.stdout, station)
        if why is not None:
            with (Path(keys).parent / "refused.log").open("a", encoding="utf-8") as log:
                log.write(f"{ns}: login refused by the management ACL: {why}\n")
            return 0
    sys.stdout.write(Path(keys).read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
