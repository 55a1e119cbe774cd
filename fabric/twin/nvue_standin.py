"""The twin's NVUE stand-in: what a storage / in-band / OOB switch of the twin answers over SSH (its sshd's ``ForceCommand``).

The twin's L2 switches are network namespaces with Linux bridges (``fabric.twin.storage``, ``fabric.twin.oob``); this
program gives each one the NVUE command surface the Cumulus adapter (``fabric.apply.nos.cumulus``) drives, so the push
reaches them through the same transaction as a real switch:

- ``nv set`` / ``nv unset`` edit a pending revision; ``nv config detach`` drops it; ``nv config show -o commands``
  prints the applied revision;
- ``nv config apply --confirm <N>s -y`` applies the pending revision and keeps the one before it until
  ``--confirm-yes``; ``--confirm-no``, or the confirm time running out (checked at the next command), puts it back;
  ``nv config save`` makes the applied revision the startup one (NVIDIA Cumulus Linux 5.9 user guide, "NVUE CLI");
- ``ip -j link show`` is the namespace's own; ``bridge -j vlan show`` is read back from the namespace's bridges;
  ``nv show system`` answers a fresh login's reach check; ``sudo vtysh ...`` answers ``{}`` (no routing daemon here).

Applying a revision converges the namespace to it, the twin's way of standing for a VLAN-aware bridge on a kernel
without VLAN filtering, bonding or 802.1Q (this machine's: "Operation not supported" / "Unknown device type"): VLAN N
of ``br_default`` is the bridge ``brN``; an access port is enslaved to its VLAN's bridge; a trunk (a bond with its
VLANs, the MLAG ``peerlink`` with every VLAN) is, per member and VLAN, the veth ``<member>v<N>`` in ``brN`` (or the
member itself when the trunk has one VLAN); ``interface vlanN ip address`` is brN's address, and the VRR address goes
on the MLAG primary only (the lower management address of the pair, standing for clagd's election), one ARP owner;
``link mtu`` and ``link state`` are set on the port. Everything else (ACLs, DHCP relay, MLAG, VRFs, static routes) is
kept in the revision and not realized; the login gate (``fabric.twin.login_gate``) reads the control-plane ACL from it.

Standard library only: sshd runs it with the system Python, inside the switch's namespace.
Usage: nvue_standin.py RUN_DIR HOSTNAME [boot]   (boot: apply the startup revision, as Cumulus ZTP would, and exit)
"""

from __future__ import annotations

import ipaddress
import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

IP, BRIDGE_TOOL = "/usr/sbin/ip", "/usr/sbin/bridge"
MAPS = frozenset({"vlan", "member", "address", "server", "interface", "via", "static", "peer", "network"})
"""Keys that hold a set of values (``nv set`` adds one, ``nv unset <path> <value>`` removes that one)."""
TOP = frozenset({"system", "interface", "bridge", "mlag", "vrf", "service", "acl", "router", "qos", "evpn", "nve"})
_PER_VLAN = re.compile(r"^(?P<port>.+)v(?P<vlan>\d+)$")
_VLAN_BRIDGE = re.compile(r"^br(\d+)$")
Words = tuple[str, ...]


def commands(text: str) -> list[Words]:
    """The words after ``nv set`` of every line of a revision."""
    return [tuple(shlex.split(line)[2:]) for line in text.splitlines() if line.startswith("nv set ")]


def revision_text(lines: list[Words]) -> str:
    """A revision as ``nv config show -o commands`` prints it."""
    return "".join(shlex.join(["nv", "set", *words]) + "\n" for words in lines)


def edit(lines: list[Words], verb: str, words: Words) -> list[Words]:
    """One ``nv set`` (a scalar replaces its old value; a set key gains one) or ``nv unset`` (the path and all below it)."""
    if verb == "unset":
        return [w for w in lines if w[: len(words)] != words]
    if len(words) >= 2 and words[-2] in MAPS:
        return lines if words in lines else [*lines, words]
    return [w for w in lines if w[:-1] != words[:-1]] + [words]


class Switch:
    """One twin switch's revisions (files under its run directory) and its namespace."""

    def __init__(self, run_dir: Path, name: str) -> None:
        self.dir, self.name = run_dir, name
        self.applied, self.pending, self.rollback, self.startup = (run_dir / f"{n}.conf" for n in ("applied", "pending", "rollback", "startup"))

    def read(self, path: Path) -> list[Words]:
        return commands(path.read_text(encoding="utf-8")) if path.exists() else []

    def run(self, line: str) -> str:  # noqa: PLR0911 - a dispatcher: one answer per command
        """One command line; its output (an ``Error:`` line when refused)."""
        try:
            words = tuple(shlex.split(line))
        except ValueError as exc:
            return f"Error: {exc}"
        if not words:
            return ""
        self._expire()
        if words[:1] == ("nv",) and words[1:2] in {("set",), ("unset",)}:
            return self._edit(words[1], words[2:])
        if words[:2] == ("nv", "config"):
            return self._config(words[2:])
        if words[:3] == ("nv", "show", "system"):
            return f"hostname  {self.name}\nbuild     Cumulus Linux 5.14 (gpufabric twin stand-in)\n"
        if words[:4] == ("ip", "-j", "link", "show"):
            return _run(IP, "-j", "link", "show")
        if words[:4] == ("bridge", "-j", "vlan", "show"):
            return json.dumps(vlan_table(json.loads(_run(IP, "-j", "link", "show") or "[]")))
        if words[:1] == ("sudo",) and "vtysh" in words:
            return "{}"  # no routing daemon on the twin's L2 switches
        return f"Error: {words[0]}: not available on the twin's NVUE stand-in"

    def _edit(self, verb: str, words: Words) -> str:
        if len(words) < 2 or words[0] not in TOP:
            return f"Error: Invalid path: {' '.join(words)!r}"
        lines = self.read(self.pending) if self.pending.exists() else self.read(self.applied)
        self.pending.write_text(revision_text(edit(lines, verb, words)), encoding="utf-8")
        return ""

    def _config(self, words: Words) -> str:  # noqa: PLR0911 - a dispatcher: one answer per subcommand
        if words[:1] == ("show",):
            return revision_text(self.read(self.applied))
        if words[:1] == ("detach",):
            self.pending.unlink(missing_ok=True)
            return ""
        if words[:1] == ("save",):
            self.startup.write_text(revision_text(self.read(self.applied)), encoding="utf-8")
            return ""
        if words[:1] != ("apply",):
            return f"Error: nv config {' '.join(words)}: not available on the twin's NVUE stand-in"
        if "--confirm-yes" in words:
            self.rollback.unlink(missing_ok=True)
            return ""
        if "--confirm-no" in words:
            return self._roll_back()
        if not self.pending.exists():
            return "Warning: no pending revision to apply"
        within = words[words.index("--confirm") + 1] if "--confirm" in words else ""
        before = self.read(self.applied)
        if within:
            seconds = int(within.rstrip("s"))
            self.rollback.write_text(f"# confirm by {time.time() + seconds:.0f}\n" + revision_text(before), encoding="utf-8")
        new = self.read(self.pending)
        self.pending.unlink()
        return self._apply(new, before)

    def _apply(self, new: list[Words], before: list[Words]) -> str:
        try:
            realize(new)
        except RuntimeError as exc:
            realize(before)
            self.rollback.unlink(missing_ok=True)
            return f"Error: apply failed, the revision before is back: {exc}"
        self.applied.write_text(revision_text(new), encoding="utf-8")
        return "applied\n"

    def _roll_back(self) -> str:
        if not self.rollback.exists():
            return ""
        before = self.read(self.rollback)
        realize(before)
        self.applied.write_text(revision_text(before), encoding="utf-8")
        self.rollback.unlink()
        return "rolled back\n"

    def _expire(self) -> None:
        """NVUE rolls an unconfirmed apply back by itself when its confirm time runs out."""
        if self.rollback.exists():
            head = self.rollback.read_text(encoding="utf-8").split("\n", 1)[0]
            if head.startswith("# confirm by ") and time.time() > float(head.split()[-1]):
                self._roll_back()

    def boot(self) -> None:
        """Apply the startup revision (the twin's ZTP)."""
        lines = self.read(self.startup)
        realize(lines)
        self.applied.write_text(revision_text(lines), encoding="utf-8")


def _run(*argv: str) -> str:
    done = subprocess.run(list(argv), capture_output=True, text=True, timeout=20, check=False)  # noqa: S603 - fixed argv
    if done.returncode != 0:
        msg = f"{' '.join(argv)}: {done.stderr.strip() or done.stdout.strip()}"
        raise RuntimeError(msg)
    return done.stdout


def vlan_table(links: list[dict[str, object]]) -> list[dict[str, object]]:
    """``bridge -j vlan show`` of the namespace's per-VLAN bridges: a port in brN is untagged in VLAN N, a per-VLAN
    veth ``<port>v<N>`` is ``<port>`` tagged in VLAN N, and ``br_default`` carries every VLAN that has a bridge."""
    vlans = sorted(int(m.group(1)) for link in links if (m := _VLAN_BRIDGE.match(str(link["ifname"]))))
    ports: dict[str, list[dict[str, object]]] = {}
    for link in links:
        master = _VLAN_BRIDGE.match(str(link.get("master", "")))
        if master is None:
            continue
        vlan, name = int(master.group(1)), str(link["ifname"])
        tagged = _PER_VLAN.match(name)
        if tagged and int(tagged.group("vlan")) == vlan:
            ports.setdefault(tagged.group("port"), []).append({"vlan": vlan})
        else:
            ports.setdefault(name, []).append({"vlan": vlan, "flags": ["PVID", "Egress Untagged"]})
    table: list[dict[str, object]] = [{"ifname": "br_default", "vlans": [{"vlan": v} for v in vlans]}] if vlans else []
    return table + [{"ifname": name, "vlans": ports[name]} for name in sorted(ports)]


def realize(lines: list[Words]) -> None:  # noqa: PLR0912 - one pass per kind of kernel state, in order
    """Converge the namespace's bridges, memberships, addresses, MTUs and link states to a revision (see the module docstring)."""
    links = {str(link["ifname"]): link for link in json.loads(_run(IP, "-j", "link", "show") or "[]")}
    vlans = sorted({int(w[4]) for w in lines if w[:4] == ("bridge", "domain", "br_default", "vlan")})
    members: dict[str, list[str]] = {}
    trunks: dict[str, set[int]] = {}
    want: dict[str, str] = {}
    down: set[str] = set()
    for w in lines:
        if w[:1] != ("interface",) or len(w) < 4:
            continue
        port, rest = w[1], w[2:]
        if rest[:4] == ("bridge", "domain", "br_default", "access") and int(rest[4]) in vlans:
            want[port] = f"br{rest[4]}"
        elif rest[:4] == ("bridge", "domain", "br_default", "vlan"):
            trunks.setdefault(port, set()).add(int(rest[4]))
        elif rest[:2] == ("bond", "member"):
            members.setdefault(port, []).append(rest[2])
        elif rest == ("type", "peerlink"):
            trunks.setdefault(port, set()).update(vlans)
        elif rest[:3] == ("link", "state", "down"):
            down.add(port)
    for trunk, carried in trunks.items():
        for member in members.get(trunk, [trunk]):
            for vlan in carried & set(vlans):
                if f"{member}v{vlan}" in links:
                    want[f"{member}v{vlan}"] = f"br{vlan}"
                elif member in links and len(carried) == 1:
                    want[member] = f"br{vlan}"
    for vlan in vlans:
        if f"br{vlan}" not in links:
            _run(IP, "link", "add", f"br{vlan}", "type", "bridge")
        _run(IP, "link", "set", f"br{vlan}", "up")
    for name, link in links.items():
        master = str(link.get("master", ""))
        if _VLAN_BRIDGE.match(master) and want.get(name) != master:
            _run(IP, "link", "set", name, "nomaster")
    for name, bridge in sorted(want.items()):
        if name in links and links[name].get("master") != bridge:
            _run(IP, "link", "set", name, "master", bridge)
    for name in links:
        if (m := _VLAN_BRIDGE.match(name)) and int(m.group(1)) not in vlans:
            _run(IP, "link", "del", name)
    for w in lines:
        if w[:1] == ("interface",) and w[2:4] == ("link", "mtu") and w[1] in links and links[w[1]].get("mtu") != int(w[4]):
            _run(IP, "link", "set", w[1], "mtu", w[4])
    for name in links:
        if name != "lo" and not _VLAN_BRIDGE.match(name):
            base = m.group("port") if (m := _PER_VLAN.match(name)) else name
            _run(IP, "link", "set", name, "down" if name in down or base in down else "up")
    _addresses(lines, vlans)


def _addresses(lines: list[Words], vlans: list[int]) -> None:
    """Each VLAN bridge's addresses: its SVI address, and the VRR address on the MLAG primary only."""
    own = next((w[4] for w in lines if w[:4] == ("interface", "eth0", "ip", "address")), None)
    backup = next((w[2] for w in lines if w[:2] == ("mlag", "backup")), None)
    primary = backup is None or own is None or int(ipaddress.ip_interface(own).ip) < int(ipaddress.ip_address(backup))
    for vlan in vlans:
        svi = ("interface", f"vlan{vlan}", "ip")
        wanted = {w[4] for w in lines if w[:3] == svi and w[3] == "address"}
        wanted |= {w[5] for w in lines if w[:3] == svi and w[3:5] == ("vrr", "address") and primary}
        shown = json.loads(_run(IP, "-j", "addr", "show", "dev", f"br{vlan}") or "[]")
        have = {f"{a['local']}/{a['prefixlen']}" for entry in shown for a in entry.get("addr_info", []) if a.get("family") == "inet"}
        for address in sorted(have - wanted):
            _run(IP, "addr", "del", address, "dev", f"br{vlan}")
        for address in sorted(wanted - have):
            _run(IP, "addr", "add", address, "dev", f"br{vlan}")


def main(argv: list[str]) -> int:
    """Boot (apply the startup revision) or serve one login: a prompt, a command, its output, until EOF or ``exit``."""
    switch = Switch(Path(argv[0]), argv[1])
    if argv[2:] == ["boot"]:
        switch.boot()
        return 0
    prompt = f"root@{switch.name}:mgmt:~# "
    sys.stdout.write(prompt)
    sys.stdout.flush()
    for line in sys.stdin:
        if line.strip() in {"exit", "logout"}:
            break
        try:
            output = switch.run(line.strip())
        except (RuntimeError, OSError, ValueError) as exc:  # a failed ip/bridge read is the command's error, never a dead login
            output = f"Error: {exc}"
        sys.stdout.write(output + ("" if not output or output.endswith("\n") else "\n") + prompt)
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
