"""Ansible filters of the gpufabric roles: which addresses a node pings to prove each plane's path and MTU."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from typing import Any

# Ethernet ports and IPoIB ports (node-audit.md FC-12). An IPoIB ping crosses the subnet manager's default partition
# (pkey 0x7fff, the one ib0 joins, and NCCL's pkey index 0), so a port that is only a limited member of it, or a
# partition the SM never programmed, shows up here as a ping with no reply. The payload rule is the same: IPoIB's
# datagram MTU (the interface's) minus 28 bytes of IPv4 and ICMP headers.
PINGED_LINK_LAYERS = frozenset({"ethernet", "infiniband"})


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
        >>> bonded = [{**eth(f"s{n}", "storage", n, f"10.1.0.{n + 3}/16"), "bond": "bond-storage"} for n in (0, 1)]
        >>> hv["c"] = {"gpufabric_interfaces": bonded}  # a bonded node pings out of its bond, from port 0's address
        >>> [(t["interface"], t["target"]) for t in ping_targets(bonded, hv, ["a", "c"], "c", planes=["storage"])]
        [('bond-storage', '10.1.0.1')]
        >>> ib = lambda address: {**eth("ibp24s0", "compute", 0, address), "mtu": 4092, "link_layer": "infiniband"}
        >>> hv = {"a": {"gpufabric_interfaces": [ib("10.200.0.1/16")]}, "b": {"gpufabric_interfaces": [ib("10.200.0.2/16")]}}
        >>> [(t["interface"], t["target"], t["mtu"]) for t in ping_targets([ib("10.200.0.1/16")], hv, ["a", "b"], "a", planes=["compute"])]
        [('ibp24s0', '10.200.0.2', 4092)]
    """
    ring = sorted(hosts)
    order = ring[ring.index(me) + 1 :] + ring[: ring.index(me)] if me in ring else ring
    targets: list[dict[str, Any]] = []
    for interface in _addressed(interfaces):
        if interface["plane"] not in planes or not interface.get("address") or interface.get("link_layer") not in PINGED_LINK_LAYERS:
            continue
        base = {
            "interface": interface.get("bond") or interface["name"],
            "plane": interface["plane"],
            "mtu": interface["mtu"],
            "link_layer": interface["link_layer"],
        }
        if interface.get("peer_address"):
            targets.append({**base, "target": interface["peer_address"], "peer": "leaf"})
            continue
        found = 0
        for host in order:
            if found >= peers:
                break
            for theirs in _addressed(hostvars[host].get("gpufabric_interfaces") or ()):
                if (theirs["plane"], theirs["index"]) == (interface["plane"], interface["index"]) and theirs.get("address"):
                    targets.append({**base, "target": theirs["address"].split("/")[0], "peer": host})
                    found += 1
                    break
    return targets


def _addressed(interfaces: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The interfaces whose address is configured: a bond's members (``bond`` set) keep only the first (lowest index),
    whose address the bond carries (roles/network_planes); pings then leave through the bond.

    Example:
        >>> ports = [{"name": "s1", "index": 1, "bond": "b"}, {"name": "s0", "index": 0, "bond": "b"}, {"name": "i0", "index": 0}]
        >>> [i["name"] for i in _addressed(ports)]
        ['s0', 'i0']
    """
    first: dict[str, int] = {}
    for i in interfaces:
        if i.get("bond"):
            first[i["bond"]] = min(first.get(i["bond"], i["index"]), i["index"])
    return [i for i in interfaces if not i.get("bond") or i["index"] == first[i["bond"]]]


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


def _mapped(address: str) -> str:
    """The IPv4-mapped IPv6 GID of ``a.b.c.d[/len]`` as sysfs prints it (eight groups of four hex digits)."""
    return ipaddress.IPv6Address(f"::ffff:{address.split('/', maxsplit=1)[0]}").exploded


def roce_gids(
    lines: Sequence[str], interfaces: Sequence[Mapping[str, Any]], planes: Sequence[str], bonds: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    """Which GID index carries each RoCE port's IPv4 address as a RoCE v2 GID (what NCCL_IB_GID_INDEX must name), and a
    line per port without one. ``lines`` are ``<hca> <index> <gid> <netdev> <type>`` (files/roce-gids-read.sh).

    A bonded port has no address of its own: its bond's address is checked instead, as a RoCE v2 GID whose net device
    is the bond, on whichever RDMA device has it. With RoCE LAG (both ports of one ConnectX in one 802.3ad bond) the
    driver replaces the two ports' devices with one, ``mlx5_bond_<n>``, on the bond (kernel commit 7907f23adc18
    "net/mlx5: Implement RoCE LAG feature": "During LAG, only one IB device is present for both ports"; NVIDIA's
    "RoCE over LAG" notes name it mlx5_bond_0); ports of two cards keep their devices, and each lists the bond's
    addresses with the bond as net device (the RDMA core's roce_gid_mgmt adds an upper bond's addresses to its slaves).
    The index is reported under the bond's name.

    Example:
        >>> port = {"name": "p0", "plane": "compute", "address": "10.100.0.1/31", "link_layer": "ethernet", "hca": "mlx5_0"}
        >>> table = ["mlx5_0 2 0000:0000:0000:0000:0000:ffff:0a64:0001 p0 IB/RoCE v1",
        ...          "mlx5_0 3 0000:0000:0000:0000:0000:ffff:0a64:0001 p0 RoCE v2"]
        >>> roce_gids(table, [port], ["compute"])
        {'index': {'p0': 3}, 'problems': []}
        >>> roce_gids(table[:1], [port], ["compute"])["problems"]
        ['p0 (mlx5_0): no RoCE v2 GID for 10.100.0.1 (only IB/RoCE v1 at index 2)']
        >>> members = [{**port, "name": n, "plane": "storage", "address": a, "hca": h, "bond": "bond-storage"}
        ...            for n, a, h in (("s0", "10.1.0.16/16", "mlx5_7"), ("s1", None, "mlx5_8"))]
        >>> bond = {"name": "bond-storage", "plane": "storage", "members": ["s0", "s1"], "address": "10.1.0.16/16"}
        >>> lag = ["mlx5_bond_0 3 0000:0000:0000:0000:0000:ffff:0a01:0010 bond-storage RoCE v2"]
        >>> roce_gids(lag, members, ["storage"], [bond])
        {'index': {'bond-storage': 3}, 'problems': []}
    """
    table: dict[str, list[tuple[str, int, str, str]]] = {}
    for line in lines:
        fields = line.split(maxsplit=4)
        if len(fields) == 5:
            table.setdefault(fields[2], []).append((fields[0], int(fields[1]), fields[3], fields[4].strip()))
    index: dict[str, int] = {}
    problems: list[str] = []
    roce = [p for p in interfaces if p["plane"] in planes and p.get("link_layer") == "ethernet" and p.get("hca")]
    for port in roce:
        if port.get("bond") or not port.get("address"):
            continue
        entries = [(n, kind) for hca, n, _, kind in table.get(_mapped(port["address"]), []) if hca == port["hca"]]
        v2 = [n for n, kind in entries if kind == "RoCE v2"]
        if v2:
            index[port["name"]] = min(v2)
            continue
        found = ", ".join(f"{kind} at index {n}" for n, kind in entries)
        address = port["address"].split("/")[0]
        problems.append(f"{port['name']} ({port['hca']}): no RoCE v2 GID for {address}" + (f" (only {found})" if found else ""))
    bonded = {str(p["bond"]) for p in roce if p.get("bond")}
    for bond in (b for b in bonds if b["name"] in bonded and b.get("address")):
        entries = table.get(_mapped(bond["address"]), [])
        v2 = sorted((n, hca) for hca, n, ndev, kind in entries if kind == "RoCE v2" and ndev == bond["name"])
        if v2:
            index[bond["name"]] = v2[0][0]
            continue
        found = ", ".join(f"{kind} at {hca} index {n} on {ndev}" for hca, n, ndev, kind in sorted(entries))
        address = bond["address"].split("/")[0]
        problems.append(
            f"{bond['name']} (bond of {', '.join(bond['members'])}): no RoCE v2 GID for {address} on the bond's net device"
            + (f" (only {found})" if found else "")
        )
    return {"index": index, "problems": problems}


def bandwidth_runs(
    interfaces: Sequence[Mapping[str, Any]],
    hosts: Sequence[str],
    me: str,
    *,
    gid_index: Mapping[str, int],
    port: int = 18515,
    cuda: Mapping[str, bool] | None = None,
    gpus: int = 0,
    pairs: Sequence[Mapping[str, Any]] = (),
    round_: int = 1,
) -> list[dict[str, Any]]:
    """This host's side of the pairwise ``ib_write_bw`` runs: hosts in sorted order pair up (1st with 2nd, 3rd with
    4th, …; an odd one out has no partner), the first of a pair serves and the second connects. One run per compute
    port with an HCA, each on its own TCP port; a RoCE port needs its RoCE v2 GID index (``-x``) and is left out
    without one (the GID check names it).

    GPUDirect RDMA (node-audit.md FC-10): when both ends of a pair have a perftest built with CUDA (``cuda``: host →
    its ``ib_write_bw --help`` lists ``--use_cuda``) and this node has ``gpus``, each run reads and writes GPU memory
    with ``--use_cuda=<gpu>`` (linux-rdma/perftest README: "--use_cuda=<cuda device id>"), GPU = the port's rail index
    modulo the GPU count: on 8-GPU HGX/DGX systems rail N's NIC is the one beside GPU N (the project's rail
    numbering; nvidia-smi topo -m shows the PIX pairs). Both ends get it, as perftest wants the same options on both.

    Example:
        >>> rail = lambda n, hca, ll: {"name": n, "plane": "compute", "index": int(n[-1]), "hca": hca, "link_layer": ll}
        >>> ports = [rail("p0", "mlx5_0", "ethernet"), rail("p1", "mlx5_3", "ethernet")]
        >>> [(r["role"], r["peer"], r["args"]) for r in bandwidth_runs(ports, ["b", "a", "c"], "b", gid_index={"p0": 3})]
        [('client', 'a', ['-d', 'mlx5_0', '-p', '18515', '-x', '3'])]
        >>> bandwidth_runs(ports, ["b", "a", "c"], "c", gid_index={"p0": 3})
        []
        >>> [r["args"][-1] for r in bandwidth_runs(ports, ["a", "b"], "b", gid_index={"p0": 3, "p1": 3}, cuda={"a": True, "b": True}, gpus=8)]
        ['--use_cuda=0', '--use_cuda=1']
        >>> [r["args"][-1] for r in bandwidth_runs(ports, ["a", "b"], "b", gid_index={"p0": 3}, cuda={"a": False, "b": True}, gpus=8)]
        ['3']
    """
    if pairs:
        return _pair_runs(interfaces, me, pairs, round_, gid_index=gid_index, cuda=cuda, gpus=gpus)
    ring = sorted(hosts)
    position = ring.index(me) if me in ring else len(ring)
    partner = position + 1 if position % 2 == 0 else position - 1
    if partner >= len(ring):
        return []
    runs: list[dict[str, Any]] = []
    for interface in interfaces:
        if interface["plane"] != "compute" or not interface.get("hca"):
            continue
        args = ["-d", str(interface["hca"]), "-p", str(port + int(interface["index"]))]
        if interface.get("link_layer") == "ethernet":
            if interface["name"] not in gid_index:
                continue
            args += ["-x", str(gid_index[interface["name"]])]
        if gpus > 0 and cuda and cuda.get(me) and cuda.get(ring[partner]):
            args.append(f"--use_cuda={int(interface['index']) % gpus}")
        role = "server" if position % 2 == 0 else "client"
        runs.append({"role": role, "peer": ring[partner], "interface": interface["name"], "hca": interface["hca"], "args": args})
    return runs


def _pair_runs(
    interfaces: Sequence[Mapping[str, Any]],
    me: str,
    pairs: Sequence[Mapping[str, Any]],
    round_: int,
    *,
    gid_index: Mapping[str, int],
    cuda: Mapping[str, bool] | None,
    gpus: int,
) -> list[dict[str, Any]]:
    """This host's runs among the acceptance pairs of round ``round_`` (``fabric export acceptance``): the planned
    ports, the pair's TCP port, both directions (``-b``); a RoCE port without its GID index is left out.

    Example:
        >>> port = {"name": "p0", "plane": "compute", "index": 0, "hca": "mlx5_0", "link_layer": "ethernet"}
        >>> pair = {"name": "p001", "round": 1, "port": 18516, "server": "b", "server_interface": "p0", "client": "a", "client_interface": "p0"}
        >>> [(r["role"], r["peer"], r["args"]) for r in bandwidth_runs([port], ["a", "b"], "a", gid_index={"p0": 3}, pairs=[pair])]
        [('client', 'b', ['-d', 'mlx5_0', '-p', '18516', '-b', '-x', '3'])]
        >>> bandwidth_runs([port], ["a", "b"], "a", gid_index={"p0": 3}, pairs=[pair], round_=2)
        []
    """
    by_name = {i["name"]: i for i in interfaces}
    runs: list[dict[str, Any]] = []
    for pair in pairs:
        if int(pair["round"]) != round_ or me not in (pair["server"], pair["client"]):
            continue
        role, peer = ("server", pair["client"]) if pair["server"] == me else ("client", pair["server"])
        interface = by_name.get(pair[f"{role}_interface"])
        if interface is None or not interface.get("hca"):
            continue
        args = ["-d", str(interface["hca"]), "-p", str(pair["port"]), "-b"]
        if interface.get("link_layer") == "ethernet":
            if interface["name"] not in gid_index:
                continue
            args += ["-x", str(gid_index[interface["name"]])]
        if gpus > 0 and cuda and cuda.get(me) and cuda.get(peer):
            args.append(f"--use_cuda={int(interface['index']) % gpus}")
        runs.append({"role": role, "peer": peer, "interface": interface["name"], "hca": interface["hca"], "args": args, "pair": pair["name"]})
    return runs


def bandwidth_report(results: Sequence[Mapping[str, Any]], min_gbps: float) -> dict[str, Any]:
    """Average Gb/s per port from ``ib_write_bw --report_gbits`` client runs, and a line per run that failed or fell
    below ``min_gbps`` (0: report only).

    Example:
        >>> out = "#bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]\\n 65536 745123 0.00 390.63 0.745\\n"
        >>> item = {"interface": "p0", "hca": "mlx5_0", "peer": "a"}
        >>> bandwidth_report([{"item": item, "rc": 0, "stdout": out}], 350)
        {'gbps': {'p0': 390.63}, 'problems': []}
        >>> bandwidth_report([{"item": item, "rc": 0, "stdout": out}], 395)["problems"]
        ['p0 (mlx5_0) → a: 390.63 Gb/s, below 395']
    """
    gbps: dict[str, float] = {}
    problems: list[str] = []
    for result in results:
        if "rc" not in result:
            continue
        item = result["item"]
        where = f"{item['interface']} ({item['hca']}) → {item['peer']}"
        rate = _average_gbps(str(result.get("stdout", "")))
        if result["rc"] != 0 or rate is None:
            said = [line for line in f"{result.get('stdout', '')}\n{result.get('stderr', '')}".splitlines() if line.strip()]
            problems.append(f"{where}: ib_write_bw failed ({said[-1].strip() if said else result.get('msg', 'no output')})")
            continue
        gbps[item["interface"]] = rate
        if min_gbps and rate < min_gbps:
            problems.append(f"{where}: {rate:g} Gb/s, below {min_gbps:g}")
    return {"gbps": gbps, "problems": problems}


def _average_gbps(output: str) -> float | None:
    lines = output.splitlines()
    for n, line in enumerate(lines):
        if "BW average[Gb/sec]" in line:
            column = line.replace("BW peak", "BW_peak").replace("BW average", "BW_average").split().index("BW_average[Gb/sec]")
            for row in lines[n + 1 :]:
                fields = row.split()
                if len(fields) > column and fields[0].isdigit():
                    return float(fields[column])
    return None


def gpu_board_problems(query: str, details: str, gpus: int, *, nvswitch: bool, fabric_manager: str) -> list[str]:
    """What is wrong with a cloud GPU node's driver as the image ships it (node-audit.md C4): ``query`` is
    ``nvidia-smi --query-gpu=index,driver_version --format=csv,noheader``, ``details`` is ``nvidia-smi -q`` and
    ``fabric_manager`` what ``systemctl is-active nvidia-fabricmanager`` said.

    Every GPU of the instance type must be there. On an NVSwitch board the GPUs must have joined the NVLink fabric:
    from Hopper on ``nvidia-smi -q`` shows each GPU's "Fabric / State" and "Completed" means Fabric Manager registered
    it (Fabric Manager User Guide R2.3); older GPUs (A100) have no such section, so the FM unit must be active.

    Example:
        >>> q = "0, 570.133.20\\n1, 570.133.20\\n"
        >>> fabric = "GPU 00000000:04:00.0\\n    Fabric\\n        State  : In Progress\\n        Status : N/A\\n"
        >>> gpu_board_problems(q, fabric, 2, nvswitch=True, fabric_manager="inactive")
        ['1 of 2 GPUs report a fabric state', 'GPU 00000000:04:00.0: fabric state In Progress, not Completed (nvidia-fabricmanager: inactive)']
        >>> gpu_board_problems(q, "", 8, nvswitch=True, fabric_manager="inactive")
        ['nvidia-smi shows 2 GPUs, the instance type has 8', 'an NVSwitch board without Fabric Manager: nvidia-fabricmanager is inactive']
    """
    problems: list[str] = []
    rows = [line.split(",") for line in query.splitlines() if line.strip()]
    if len(rows) != gpus:
        problems.append(f"nvidia-smi shows {len(rows)} GPUs, the instance type has {gpus}")
    drivers = sorted({row[1].strip() for row in rows if len(row) > 1})
    if len(drivers) > 1:
        problems.append(f"GPUs report different drivers: {', '.join(drivers)}")
    if not nvswitch:
        return problems
    states: dict[str, str] = {}
    gpu, in_fabric = "", False
    for line in details.splitlines():
        if line.startswith("GPU "):
            gpu, in_fabric = line.strip(), False
        elif line.strip() == "Fabric":
            in_fabric = True
        elif in_fabric and line.strip().startswith("State") and ":" in line:
            states[gpu] = line.split(":", 1)[1].strip()
            in_fabric = False
    if not states:
        if fabric_manager != "active":
            problems.append(f"an NVSwitch board without Fabric Manager: nvidia-fabricmanager is {fabric_manager or 'not installed'}")
        return problems
    if len(states) != len(rows):
        problems.append(f"{len(states)} of {len(rows)} GPUs report a fabric state")
    problems += [
        f"{where}: fabric state {state}, not Completed (nvidia-fabricmanager: {fabric_manager or 'not installed'})"
        for where, state in sorted(states.items())
        if state != "Completed"
    ]
    return problems


class FilterModule:
    """Registers the filters with Ansible."""

    def filters(self) -> dict[str, Any]:
        return {
            "gpufabric_ping_targets": ping_targets,
            "gpufabric_failed_pings": failed_pings,
            "gpufabric_inactive_ports": inactive_ports,
            "gpufabric_roce_gids": roce_gids,
            "gpufabric_bandwidth_runs": bandwidth_runs,
            "gpufabric_bandwidth_report": bandwidth_report,
            "gpufabric_gpu_board_problems": gpu_board_problems,
        }
