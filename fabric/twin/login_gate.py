"""The twin's login gate: each twin switch's sshd asks it for the authorized keys (``AuthorizedKeysCommand``).

A real switch applies its management ACL to SSH logins (EOS ``ip access-group ... in`` under ``management ssh``, NX-OS
``access-class ... in`` under ``line vty``, Cumulus/SONiC iptables on the management port); FRR's own ``line vty`` /
``access-class`` guards only FRR's telnet vty, never vtysh (FRR user guide, "Basic Commands": access-class applies to
the vty). So the twin enforces it here, from the switch's running config at login time: the ACL named by
``access-class`` under ``line vty``, FRR's ``access-list`` semantics (entries in sequence order, first match wins, no
match is a deny). Every twin sshd listens on loopback, so the address checked is the management station's (the OOB
plane's gateway, given on the command line), the address a real switch's ACL sees the pushing host come from.

The twin's L2 switches (the NVUE stand-in, ``fabric.twin.nvue_standin``) are checked against their applied revision
instead: every ACL named by ``system control-plane acl <name> inbound``, its rules in number order, the first rule
whose every ``match`` holds for the login (TCP to port 22 from the station) decides; no match lets it in (Cumulus
control-plane ACLs are iptables INPUT rules ahead of the default accept; the rendered ACL ends in its own deny).

An allowed login gets the twin's authorized keys; a refused one gets none, so the client's authentication fails at
once (a refused TCP connection or login on a real switch fails as fast), and the reason is appended to
``ssh/refused.log`` in the twin's directory (sshd discards the command's stderr). Standard library only: sshd runs
it with the system Python for every login.

Usage: login_gate.py NAMESPACE RUN_DIR STATION AUTHORIZED_KEYS   (STATION "-": no management address, no check)
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


def nvue_refused_by(revision: str, station: str) -> str | None:
    """Why the NVUE revision's control-plane ACL refuses an SSH login from ``station``, or None when it is allowed.

    Example:
        >>> acl = "nv set acl M rule 10 match ip source-ip 10.103.0.0/16\\nnv set acl M rule 10 action permit\\n"
        >>> acl += "nv set acl M rule 20 match ip tcp dest-port 22\\nnv set acl M rule 20 action deny\\n"
        >>> acl += "nv set system control-plane acl M inbound\\n"
        >>> nvue_refused_by(acl, "10.103.0.1") is None
        True
        >>> nvue_refused_by(acl.replace("10.103.0.0/16", "10.199.0.0/16"), "10.103.0.1")
        'control-plane acl M: rule 20 deny matches 10.103.0.1'
    """
    lines = [line.split()[2:] for line in revision.splitlines() if line.startswith("nv set ")]
    names = [w[3] for w in lines if w[:3] == ["system", "control-plane", "acl"] and w[-1] == "inbound"]
    address = ipaddress.ip_address(station)
    for name in names:
        rules: dict[int, list[list[str]]] = {}
        for w in lines:
            if w[:3] == ["acl", name, "rule"] and w[3].isdigit():
                rules.setdefault(int(w[3]), []).append(w[4:])
        for number in sorted(rules):
            matches = [w[1:] for w in rules[number] if w[:1] == ["match"]]
            action = next((w[1] for w in rules[number] if w[:1] == ["action"]), "permit")
            if all(_nvue_match(m, address) for m in matches):
                if action == "deny":
                    return f"control-plane acl {name}: rule {number} deny matches {station}"
                break
    return None


def _nvue_match(match: list[str], address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """One ``match`` of an NVUE ACL rule, for a TCP login to port 22 from ``address``."""
    if match[:2] == ["ip", "source-ip"]:
        return _matches(match[2], address)
    if match[:2] == ["ip", "protocol"]:
        return match[2] == "tcp"
    if match[:3] == ["ip", "tcp", "dest-port"]:
        return match[3] in {"22", "ssh"}
    return False  # a match we do not read: the rule does not apply to the login


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
    revision = Path(run_dir) / "applied.conf"
    if station != "-" and revision.exists():
        why = nvue_refused_by(revision.read_text(encoding="utf-8"), station)
        if why is not None:
            with (Path(keys).parent / "refused.log").open("a", encoding="utf-8") as log:
                log.write(f"{ns}: login refused by the management ACL: {why}\n")
            return 0
    elif station != "-":
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
