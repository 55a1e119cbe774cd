"""Planes never cross on a shared spine (fabric.plan.compute.shared_spines): the lint of its per-plane VRFs.

Read from the spine's FRR config (``frr.conf``, the only NOS that renders shared spines):

- every port in its leaf's plane's VRF (``interface swp3 vrf plane2``): a port in another plane's VRF, or in the
  default VRF (no ``vrf``), would join two planes or put a plane's routes in the default table;
- every BGP session in the VRF of the port it runs over (``router bgp ASN vrf plane2`` ... ``neighbor``);
- no BGP in the default VRF (``router bgp ASN`` alone) and no route leak between VRFs: FRR's leak statements
  (``import vrf``, ``import vpn`` / ``export vpn``, ``route-target``, ``rt vpn``, ``rd vpn``, ``label vpn``; FRR 8.4
  user guide, BGP "VRF Route Leaking") and a static route into another VRF (``nexthop-vrf``; FRR 8.4 user guide, static
  routes);
- on Cumulus, its ``nvue.sh``: each port's ``nv set interface swpN ip vrf`` (``vrf`` from CL 5.15) its plane's VRF,
  each ``nv set vrf <vrf> router bgp neighbor`` in its port's VRF, nothing in ``vrf default router bgp``, no
  ``route-import from-vrf`` (NVUE reference, CL 5.9-5.15: the VRF route-leak command);
- on EOS and NX-OS, the config text: each port's ``vrf`` (NX-OS ``vrf member``) its plane's VRF, each BGP
  ``neighbor`` under its port's ``router bgp`` ``vrf`` block (none in the default VRF: the one ``router bgp`` of these
  NOSes is not a finding by itself), no ``route-target import|export``, ``rd``, ``import|export vrf|map``,
  ``leak routes`` or ``egress-vrf`` (EOS User Manual, VRF route leaking; NX-OS Unicast Routing guide, route leaking);
- on SONiC, its ``config_db.json``: each port's ``INTERFACE|EthernetN`` ``vrf_name`` its leaf's plane's VRF, and no
  ``STATIC_ROUTE`` whose ``nexthop-vrf`` is another VRF (sonic-static-route.yang, 202405/202411: a route leak).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from fabric.lint.rules import LintFinding
from fabric.plan.compute.facts import build_switch_facts
from fabric.plan.compute.planes import plane_of
from fabric.plan.compute.spine_vrfs import spine_vrfs
from fabric.plan.types import ClusterPlan

_INTERFACE = re.compile(r"^interface (\S+)(?: vrf (\S+))?\s*$")
_ROUTER = re.compile(r"^router bgp \d+(?: vrf (\S+))?\s*$")
_NEIGHBOR = re.compile(r"^\s+neighbor (\S+) (?:interface )?peer-group\b")
_LEAK = re.compile(r"^\s*(import vrf|import vpn|export vpn|route-target|rt vpn|rd vpn|label vpn)\b|\bnexthop-vrf\b")
FIX = "render again: each port and session in its leaf's plane's VRF, no BGP in the default VRF, no leak between VRFs"


def lint_spine_vrfs(plan: ClusterPlan, configs: Mapping[str, str | None]) -> Iterator[LintFinding]:
    """Every line of a shared spine's config that puts a port or session in the wrong VRF, or leaks between VRFs.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> from fabric.render import render_configs
        >>> plan = plan_cluster(load_cluster("tests/data/render/frr-shared/cluster.yaml"))
        >>> conf = render_configs(plan)["switches/spine01/frr.conf"]
        >>> list(lint_spine_vrfs(plan, {"spine01": conf}))
        []
        >>> [f.actual for f in lint_spine_vrfs(plan, {"spine01": conf.replace("swp3 vrf Vrf-plane2", "swp3 vrf Vrf-plane1")})]
        ['swp3 in VRF Vrf-plane1']
    """
    fabric = plan.fabric
    if fabric is None or not any(plane_of(s.name) for s in fabric.leaves):
        return
    shared = [s.name for s in fabric.spines if plane_of(s.name) is None and configs.get(s.name)]
    for facts in build_switch_facts(plan, shared) if shared else ():
        name, text = facts.switch.name, configs.get(facts.switch.name) or ""
        vrfs = spine_vrfs(facts)
        port_vrf = {p.name: v.name for v in vrfs for p in v.ports}
        session_vrf = {key: v.name for v in vrfs for n in v.neighbors for key in (n.interface, n.address) if key}
        if text.lstrip().startswith("{"):  # SONiC's config_db.json
            yield from _config_db(name, json.loads(text), port_vrf)
            continue
        if "\nservice routing protocols model" in text or "\nfeature bgp" in text:  # EOS, NX-OS
            yield from _blocks(name, text, port_vrf, session_vrf)
            continue
        if "\nnv set " in text:  # Cumulus' nvue.sh
            yield from _nvue(name, text, port_vrf, session_vrf)
            continue
        router: str | None = None
        for number, line in enumerate(text.splitlines(), 1):
            where = f"config line {number}"
            if line.startswith("router bgp"):
                match = _ROUTER.match(line)
                router = match.group(1) if match else None
                if router is None:
                    yield LintFinding(name, where, "BGP only in the planes' VRFs", line.strip(), "the default VRF carries no plane's routes; " + FIX)
            elif line.startswith("exit") and not line.startswith("exit-"):
                router = None
            if (match := _INTERFACE.match(line)) and match.group(1) in port_vrf and match.group(2) != port_vrf[match.group(1)]:
                port, got = match.group(1), match.group(2) or "default"
                yield LintFinding(
                    name, where, f"{port} in VRF {port_vrf[port]}", f"{port} in VRF {got}", "a port in another plane's VRF joins two planes; " + FIX
                )
            elif (match := _NEIGHBOR.match(line)) and match.group(1) in session_vrf and router != session_vrf[match.group(1)]:
                peer, want = match.group(1), session_vrf[match.group(1)]
                yield LintFinding(name, where, f"session {peer} in VRF {want}", f"session {peer} in VRF {router or 'default'}", FIX)
            elif _LEAK.search(line):
                yield LintFinding(name, where, "no route leak between the planes' VRFs", line.strip(), "a leak joins two planes; " + FIX)


def _config_db(name: str, db: dict[str, Any], port_vrf: dict[str, str]) -> Iterator[LintFinding]:
    interface: dict[str, Any] = db.get("INTERFACE", {})
    for port, want in port_vrf.items():
        entry: dict[str, Any] = interface.get(port) or {}
        got = str(entry.get("vrf_name", "default"))
        if got != want:
            yield LintFinding(
                name, f"INTERFACE|{port}", f"{port} in VRF {want}", f"{port} in VRF {got}", "a port in another plane's VRF joins two planes; " + FIX
            )
    for key, route in db.get("STATIC_ROUTE", {}).items():
        vrf = key.split("|")[0] if "|" in key else "default"
        leaks = [v for v in str(route.get("nexthop-vrf", "")).split(",") if v and v != vrf]
        if leaks:
            yield LintFinding(
                name,
                f"STATIC_ROUTE|{key}",
                "no route leak between the planes' VRFs",
                f"nexthop-vrf {','.join(leaks)}",
                "a leak joins two planes; " + FIX,
            )


_NV_PORT = re.compile(r"^nv set interface (\S+) (?:ip )?vrf (\S+)$")
_NV_NEIGHBOR = re.compile(r"^nv set vrf (\S+) router bgp neighbor (\S+) peer-group ")


def _nvue(name: str, text: str, port_vrf: dict[str, str], session_vrf: dict[str, str]) -> Iterator[LintFinding]:
    seen: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        where = f"config line {number}"
        if (match := _NV_PORT.match(line)) and match.group(1) in port_vrf:
            seen[match.group(1)] = match.group(2)
        elif (match := _NV_NEIGHBOR.match(line)) and match.group(2) in session_vrf and match.group(1) != session_vrf[match.group(2)]:
            peer, want = match.group(2), session_vrf[match.group(2)]
            yield LintFinding(name, where, f"session {peer} in VRF {want}", f"session {peer} in VRF {match.group(1)}", FIX)
        elif line.startswith("nv set vrf default router bgp neighbor"):
            yield LintFinding(name, where, "BGP only in the planes' VRFs", line, "the default VRF carries no plane's routes; " + FIX)
        elif "route-import from-vrf" in line:
            yield LintFinding(name, where, "no route leak between the planes' VRFs", line, "a leak joins two planes; " + FIX)
    for port, want in port_vrf.items():
        if seen.get(port, "default") != want:
            got = seen.get(port, "default")
            yield LintFinding(
                name, f"interface {port}", f"{port} in VRF {want}", f"{port} in VRF {got}", "a port in another plane's VRF joins two planes; " + FIX
            )


_EOS_LEAK = re.compile(r"^\s+(route-target (import|export)|rd|(import|export) (vrf|map)) |\bleak routes\b|\begress-vrf\b")


def _blocks(name: str, text: str, port_vrf: dict[str, str], session_vrf: dict[str, str]) -> Iterator[LintFinding]:
    seen: dict[str, str] = {}
    block, vrf = "", "default"
    for number, line in enumerate(text.splitlines(), 1):
        where, words = f"config line {number}", line.split()
        if line and not line[0].isspace():
            block, vrf = line.strip(), "default"
        elif block.startswith("router bgp") and words[:1] == ["vrf"] and len(words) == 2:  # a vrf block (EOS, NX-OS)
            vrf = words[1]
        if block.startswith("interface ") and words[:1] == ["vrf"] and len(words) in (2, 3) and words[1:2] != ["forwarding"]:
            seen[block.split()[1]] = words[-1]  # EOS `vrf NAME`, NX-OS `vrf member NAME`
        elif _opens_session(block, words, session_vrf) and vrf != session_vrf[words[1]]:
            peer, want = words[1], session_vrf[words[1]]
            yield LintFinding(name, where, f"session {peer} in VRF {want}", f"session {peer} in VRF {vrf}", FIX)
        if _EOS_LEAK.search(line):
            yield LintFinding(name, where, "no route leak between the planes' VRFs", line.strip(), "a leak joins two planes; " + FIX)
    for port, want in port_vrf.items():
        if seen.get(port, "default") != want:
            got = seen.get(port, "default")
            yield LintFinding(
                name, f"interface {port}", f"{port} in VRF {want}", f"{port} in VRF {got}", "a port in another plane's VRF joins two planes; " + FIX
            )


def _opens_session(block: str, words: list[str], session_vrf: dict[str, str]) -> bool:
    """A line of ``router bgp`` that opens one of the shared spine's sessions: EOS ``neighbor A peer group G``, NX-OS
    ``neighbor A`` (its settings below it)."""
    opens = len(words) == 2 or (len(words) > 3 and words[2:4] == ["peer", "group"])
    return block.startswith("router bgp") and words[:1] == ["neighbor"] and opens and words[1] in session_vrf
