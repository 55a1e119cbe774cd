"""Planes never cross: the lint of a multi-plane compute fabric (``fabric.planes`` > 1).

Two places a crossing shows, both read from what is on disk rather than the plan's intent:

- the cabling list: a cable whose two ends belong to different planes (a switch's plane from its name, ``p<k>-``; a
  node port's from the plane the plan cables it into);
- the switch configs: a compute switch whose config names an address (a /31 end, a loopback: a BGP neighbour, a
  route, an interface address) that the plan gives to another plane;
- a shared spine's config: a port or BGP session in the wrong plane's VRF, BGP in the default VRF, a route leak
  (fabric.lint.planes_vrf).

A one-plane fabric has nothing to check (no switch name carries a plane).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator, Mapping

from fabric.lint.planes_vrf import lint_spine_vrfs
from fabric.lint.rules import LintFinding
from fabric.plan.compute.planes import plane_of
from fabric.plan.types import ClusterPlan

_IPV4 = re.compile(r"(?<![\d.])(\d{1,3}(?:\.\d{1,3}){3})(?![\d.])")


def plane_addresses(plan: ClusterPlan) -> dict[str, int]:
    """Every compute address the plan gives a plane: the ends of its /31s and its switches' loopbacks."""
    fabric = plan.fabric
    owner: dict[str, int] = {}
    if fabric is None:
        return owner
    for s in fabric.switches:
        plane = plane_of(s.name)
        if plane is not None and s.loopback:
            owner[s.loopback.split("/")[0]] = plane
    for x in fabric.links:
        plane = plane_of(x.a_device)
        if plane is None:
            continue
        for address in (x.a_address, x.b_address):
            if address:
                owner[address] = plane
    return owner


def lint_planes(plan: ClusterPlan, configs: Mapping[str, str | None], cabling: str) -> list[LintFinding]:
    """Every cable and every config line that joins two planes (none on a one-plane fabric).

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> from fabric.render import render_cabling
        >>> plan = plan_cluster(load_cluster("inventories/two-plane/cluster.yaml"))
        >>> lint_planes(plan, {}, render_cabling(plan))
        []
    """
    if plan.fabric is None or not any(plane_of(s.name) for s in plan.fabric.leaves):
        return []
    return [*_cables(plan, cabling), *_configs(plan, configs), *lint_spine_vrfs(plan, configs)]  # shared spines: planes_vrf


def _cables(plan: ClusterPlan, cabling: str) -> Iterator[LintFinding]:
    ports = {(n.hostname, i.name): plane_of(i.switch) for n in plan.nodes for i in n.interfaces if i.plane == "compute" and i.switch}
    for row in csv.DictReader(io.StringIO(cabling)):
        ends = ((row.get("device") or "", row.get("port") or ""), (row.get("peer_device") or "", row.get("peer_port") or ""))
        planes = [plane_of(device) or ports.get((device, port)) for device, port in ends]
        if planes[0] is not None and planes[1] is not None and planes[0] != planes[1]:
            (a, ap), (b, bp) = ends
            yield LintFinding(
                a,
                f"cable {a} {ap} - {b} {bp}",
                f"both ends in plane {planes[0]}",
                f"{a} {ap} in plane {planes[0]}, {b} {bp} in plane {planes[1]}",
                "this cable joins two compute planes, which must never reach each other; cable it as cabling.csv from render says",
            )


def _configs(plan: ClusterPlan, configs: Mapping[str, str | None]) -> Iterator[LintFinding]:
    owner = plane_addresses(plan)
    assert plan.fabric is not None
    for s in plan.fabric.switches:
        mine, text = plane_of(s.name), configs.get(s.name)
        if mine is None or not text:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for address in _IPV4.findall(line):
                other = owner.get(address)
                if other is not None and other != mine:
                    yield LintFinding(
                        s.name,
                        f"config line {number}",
                        f"addresses of plane {mine} only",
                        f"{address} (plane {other}): {line.strip()[:120]}",
                        "the config names another plane's address (a session, route or port across planes); render again",
                    )
