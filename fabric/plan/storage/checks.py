"""The storage / in-band networks a definition asks for, and the checks that run before any of them is built: target,
convergence, NOS support of RoCE storage, switch models and speeds, plane VLANs, appliances, the packed pairs' ports."""

from __future__ import annotations

from dataclasses import dataclass

from fabric.catalog.switches import SWITCH_MODELS
from fabric.errors import Finding
from fabric.model.cluster import ClusterSpec
from fabric.model.storage import EthernetNetworkSpec
from fabric.model.topology import unsupported_release


@dataclass(frozen=True, slots=True)
class StorageNet:
    """One storage / in-band network the definition asks for: its spec, the planes it carries, where it is written."""

    name: str
    spec: EthernetNetworkSpec
    planes: tuple[str, ...]
    path: tuple[str | int, ...]


def networks(spec: ClusterSpec) -> list[StorageNet]:
    """The networks of the definition: storage (with in-band when converged), then in-band."""
    storage, inband = spec.planes.storage.network, spec.planes.inband.network
    nets: list[StorageNet] = []
    if storage is not None:
        carried = ("storage", "inband") if storage.converged else ("storage",)
        nets.append(StorageNet("storage", storage, carried, ("planes", "storage", "network")))
    if inband is not None:
        nets.append(StorageNet("inband", inband, ("inband",), ("planes", "inband", "network")))
    return nets


def check_network(spec: ClusterSpec, net: StorageNet) -> list[Finding]:
    """Every problem of one network that the catalog and the planes show before anything is built."""
    if spec.target != "onprem":
        return [Finding(net.path, f"a {net.name} network is built on-prem only, not on {spec.target}; remove {'.'.join(map(str, net.path))}")]
    problems: list[Finding] = []
    if net.name == "inband" and spec.planes.storage.network is not None and spec.planes.storage.network.converged:
        problems.append(
            Finding(net.path, "planes.storage.network is converged (it carries in-band too); remove planes.inband.network or set converged: false")
        )
    if net.spec.roce and {"sonic", "eos", "nxos"} & {net.spec.leaf.nos, net.spec.spine.nos}:
        msg = "RoCE storage is rendered for Cumulus storage switches only so far; use nos: cumulus or roce: false"
        problems.append(Finding((*net.path, "roce"), msg))
    problems.extend(_check_tiers(net))
    problems.extend(_check_planes(spec, net))
    if net.spec.leaf_pairs == "packed" and not problems:
        problems.extend(_check_packed(spec, net))
    return problems


def _check_packed(spec: ClusterSpec, net: StorageNet) -> list[Finding]:
    where = (*net.path, "leaf_pairs")
    if net.spec.topology == "collapsed":
        return [Finding(where, "leaf_pairs: packed shares leaf pairs behind a spine pair; use topology: leaf-spine or leave leaf_pairs out")]
    if "leaf_pairs_per_su" in net.spec.model_fields_set:
        return [Finding(where, "leaf_pairs: packed sizes the pairs by their ports; remove leaf_pairs_per_su (it counts pairs per SU)")]
    if slots_per_pair(spec, net) < 1:
        host, slot = host_ports(net), sum(ports_per_side(spec, net.planes).values())
        return [
            Finding(
                where,
                f"a {net.spec.leaf.model} leaf has {max(host, 0)} host ports at {net.spec.speed_gbps} Gb/s after {2 * net.spec.uplinks_per_spine} "
                f"uplink and {net.spec.peerlink_ports} peerlink ports but a node slot takes {slot}; lower uplinks_per_spine or peerlink_ports, "
                "or pick a leaf with more ports",
            )
        ]
    return []


def host_ports(net: StorageNet) -> int:
    """Ports a leaf keeps for hosts: its radix at the network's speed less its uplinks and peerlink."""
    radix = SWITCH_MODELS[net.spec.leaf.model].radix(net.spec.speed_gbps) or 0
    return radix - 2 * net.spec.uplinks_per_spine - net.spec.peerlink_ports


def slots_per_pair(spec: ClusterSpec, net: StorageNet) -> int:
    """``leaf_pairs: packed``: the SU slots one leaf pair holds (its host ports over the ports a slot takes per side)."""
    return host_ports(net) // sum(ports_per_side(spec, net.planes).values())


def _check_tiers(net: StorageNet) -> list[Finding]:
    problems: list[Finding] = []
    slow: dict[str, list[str]] = {}  # model -> the tiers it cannot serve at the network's speed: one finding per model
    for tier in ("leaf",) if net.spec.topology == "collapsed" else ("leaf", "spine"):
        want = getattr(net.spec, tier)
        model = SWITCH_MODELS.get(want.model)
        where = (*net.path, tier)
        if model is None:
            msg = f"switch model '{want.model}' is not in the catalog; pick one of fabric/catalog/data/switches"
            problems.append(Finding((*where, "model"), msg))
            continue
        if model.link_layer != "ethernet":
            problems.append(Finding((*where, "model"), f"'{want.model}' is not an Ethernet switch; pick an Ethernet model such as sn5600"))
        if want.nos not in model.nos:
            problems.append(Finding((*where, "nos"), f"'{want.model}' does not run {want.nos}; it runs {', '.join(sorted(model.nos))}"))
        problems.extend(unsupported_release((*where, "nos_version"), want.nos, want.nos_version))
        if model.radix(net.spec.speed_gbps) is None:
            slow.setdefault(want.model, []).append(tier)
    for name, tiers in slow.items():
        speeds = ", ".join(str(s) for s in SWITCH_MODELS[name].speeds())
        which = " and ".join(tiers)
        msg = f"the {which} model '{name}' cannot run {net.spec.speed_gbps} Gb/s ports; it runs {speeds}: lower speed_gbps or pick a faster model"
        problems.append(Finding((*net.path, "speed_gbps"), msg))
    return problems


def _check_planes(spec: ClusterSpec, net: StorageNet) -> list[Finding]:
    problems = [
        Finding(("planes", plane, "vlan"), f"the {plane} plane rides the {net.name} network as a VLAN; give planes.{plane}.vlan")
        for plane in net.planes
        if getattr(spec.planes, plane).vlan is None
    ]
    vlans = [v for v in (getattr(spec.planes, p).vlan for p in net.planes) if v is not None]
    if len(set(vlans)) != len(vlans):
        problems.append(Finding(net.path, f"planes {' and '.join(net.planes)} share VLAN {vlans[0]}; give each plane its own VLAN"))
    cidr = spec.planes.storage.cidr
    for i, appliance in enumerate(net.spec.appliances):
        if "storage" not in net.planes:
            msg = "storage appliances belong on the storage network; move them to planes.storage.network"
            problems.append(Finding((*net.path, "appliances", i), msg))
        elif appliance.address not in cidr:
            problems.append(Finding((*net.path, "appliances", i, "address"), f"{appliance.address} is outside the storage plane {cidr}"))
    return problems


def ports_per_side(spec: ClusterSpec, planes: tuple[str, ...]) -> dict[str, int]:
    """Ports a slot takes on each side, per plane: half the plane's max_ports_per_node, rounded up."""
    return {p: -(-getattr(spec.planes, p).max_ports_per_node // 2) for p in planes}
