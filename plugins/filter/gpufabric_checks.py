"""Ansible filters of the gpufabric roles: which addresses a node pings to prove each plane's path and MTU."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from typing import Any


def ping_targets(
    interfaces: Sequence[Mapping[str, Any]],
    hostvars: Mapping[str, Mapping[str, Any]],
    hosts: Sequence[str],
    me: str,
    *,
    planes: Sequence[str],
    peers: int = 1,
) -> list[dict[str, Any]]:
    """One ping per (interface, target): a routed compute port pings its leaf (the link's other end); any other
    interface pings the same plane and interface index on up to ``peers`` other hosts, taken in sorted order starting
    after this host (so the load spreads around the ring and the choice is stable).

    Example:
        >>> eth = lambda name, plane, index, address, peer=None: {"name": name, "plane": plane, "index": index,
        ...     "address": address, "mtu": 9000, "link_layer": "ethernet", "peer_address": peer}
        >>> hv = {"a": {"gpufabric_interfaces": [eth("s0", "storage", 0, "10.1.0.1/16")]},
        ...       "b": {"gpufabric_interfaces": [eth("s0", "storage", 0, "10.1.0.2/16")]}}
        >>> mine = [eth("r0", "compute", 0, "10.0.0.1/31", "10.0.0.0"), *hv["a"]["gpufabric_interfaces"]]
        >>> [(t["interface"], t["target"], t["peer"]) for t in ping_targets(mine, hv, ["b", "a"], "a", planes=["compute", "storage"])]
        [('r0', '10.0.0.0', 'leaf'), ('s0', '10.1.0.2', 'b')]
    """
    ring = sorted(hosts)
    order = ring[ring.index(me) + 1 :] + ring[: ring.index(me)] if me in ring else ring
    targets: list[dict[str, Any]] = []
    for interface in interfaces:
        if interface["plane"] not in planes or not interface.get("address") or interface.get("link_layer") != "ethernet":
            continue
        base = {"interface": interface["name"], "plane": interface["plane"], "mtu": interface["mtu"]}
        if interface.get("peer_address"):
            targets.append({**base, "target": interface["peer_address"], "peer": "leaf"})
            continue
        found = 0
        for host in order:
            if found >= peers:
                break
            for theirs in hostvars[host].get("gpufabric_interfaces") or ():
                if (theirs["plane"], theirs["index"]) == (interface["plane"], interface["index"]) and theirs.get("address"):
                    targets.append({**base, "target": theirs["address"].split("/")[0], "peer": host})
                    found += 1
                    break
    return targets


def failed_pings(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per ping (a registered loop's results) that did not get its full-size frames through.

    Example:
        >>> item = {"interface": "s0", "plane": "storage", "peer": "b", "target": "10.1.0.2", "mtu": 9000}
        >>> failed_pings([{"rc": 1, "item": item, "stdout": "ping: local error: message too long, mtu=1500"}])
        ['s0 (storage) → b 10.1.0.2: 8972-byte DF ping failed at MTU 9000 (ping: local error: message too long, mtu=1500)']
        >>> failed_pings([{"rc": 0, "item": item}, {"skipped": True}])
        []
    """
    lines: list[str] = []
    for result in results:
        if "rc" not in result or result["rc"] == 0:
            continue
        item = result["item"]
        said = [line for line in f"{result.get('stdout', '')}\n{result.get('stderr', '')}".splitlines() if line.strip()]
        why = said[-1].strip() if said else result.get("msg", "no reply")
        path = f"{item['interface']} ({item['plane']}) → {item['peer']} {item['target']}"
        lines.append(f"{path}: {item['mtu'] - 28}-byte DF ping failed at MTU {item['mtu']} ({why})")
    return lines


def inactive_ports(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per InfiniBand port (a registered ``ibstat`` loop) that is not Active.

    Example:
        >>> inactive_ports([{"item": {"hca": "mlx5_0", "port": 1}, "stdout": "State: Down", "rc": 0},
        ...                 {"item": {"hca": "mlx5_3", "port": 1}, "stdout": "State: Active", "rc": 0}])
        ['mlx5_0 port 1: State: Down']
    """
    lines: list[str] = []
    for result in results:
        if "item" not in result or "State: Active" in str(result.get("stdout", "")):
            continue
        state = next((line.strip() for line in str(result.get("stdout", "")).splitlines() if line.strip().startswith("State:")), None)
        lines.append(f"{result['item']['hca']} port {result['item']['port']}: {state or result.get('msg') or 'no ibstat output'}")
    return lines


def roce_gids(lines: Sequence[str], interfaces: Sequence[Mapping[str, Any]], planes: Sequence[str]) -> dict[str, Any]:
    """Which GID index carries each RoCE port's IPv4 address as a RoCE v2 GID (what NCCL_IB_GID_INDEX must name), and a
    line per port without one. ``lines`` are ``<hca> <index> <gid> <type>`` as read from sysfs.

    Example:
        >>> port = {"name": "p0", "plane": "compute", "address": "10.100.0.1/31", "link_layer": "ethernet", "hca": "mlx5_0"}
        >>> table = ["mlx5_0 2 0000:0000:0000:0000:0000:ffff:0a64:0001 IB/RoCE v1",
        ...          "mlx5_0 3 0000:0000:0000:0000:0000:ffff:0a64:0001 RoCE v2"]
        >>> roce_gids(table, [port], ["compute"])
        {'index': {'p0': 3}, 'problems': []}
        >>> roce_gids(table[:1], [port], ["compute"])["problems"]
        ['p0 (mlx5_0): no RoCE v2 GID for 10.100.0.1 (only IB/RoCE v1 at index 2)']
    """
    table: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for line in lines:
        fields = line.split(maxsplit=3)
        if len(fields) == 4:
            table.setdefault((fields[0], fields[2]), []).append((int(fields[1]), fields[3].strip()))
    index: dict[str, int] = {}
    problems: list[str] = []
    for port in interfaces:
        if port["plane"] not in planes or port.get("link_layer") != "ethernet" or not port.get("hca") or not port.get("address"):
            continue
        address = port["address"].split("/")[0]
        entries = table.get((port["hca"], ipaddress.IPv6Address(f"::ffff:{address}").exploded), [])
        v2 = [n for n, kind in entries if kind == "RoCE v2"]
        if v2:
            index[port["name"]] = min(v2)
            continue
        found = ", ".join(f"{kind} at index {n}" for n, kind in entries)
        problems.append(f"{port['name']} ({port['hca']}): no RoCE v2 GID for {address}" + (f" (only {found})" if found else ""))
    return {"index": index, "problems": problems}


class FilterModule:
    """Registers the filters with Ansible."""

    def filters(self) -> dict[str, Any]:
        return {
            "gpufabric_ping_targets": ping_targets,
            "gpufabric_failed_pings": failed_pings,
            "gpufabric_inactive_ports": inactive_ports,
            "gpufabric_roce_gids": roce_gids,
        }
