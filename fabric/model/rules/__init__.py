"""Cross-field rules over a schema-valid ClusterSpec. Each rule yields Findings; all rules always run.

Rules that need the derived topology (leaf radix, oversubscription, pool sizes) live in ``fabric.plan.checks``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from itertools import pairwise

from fabric.catalog.cloud import AWS_INSTANCE_TYPES, AZURE_VM_SIZES, GCP_MACHINE_TYPES
from fabric.catalog.cloud_refused import REFUSED_TYPES
from fabric.catalog.hardware import HARDWARE
from fabric.catalog.switch_refused import UNRENDERED_NOS
from fabric.catalog.switches import SWITCH_MODELS
from fabric.errors import Finding
from fabric.model.base import unknown_choice
from fabric.model.cluster import ClusterSpec
from fabric.model.nics import check_nic_marking
from fabric.model.rules.addressing import check_cidrs, check_explicit_addresses
from fabric.model.rules.aws import check_aws
from fabric.model.rules.azure import check_azure
from fabric.model.rules.gcp import check_gcp
from fabric.model.rules.ib_features import check_ib_features
from fabric.model.rules.infiniband import check_infiniband
from fabric.model.rules.transport import check_mtu, check_nos_watchdog, check_rdma_stack, check_roce_contract
from fabric.model.rules.unpublished import check_unpublished_ports
from fabric.model.topology import unsupported_release

Rule = Callable[[ClusterSpec], Iterator[Finding]]

_TRANSPORT_TARGET = {
    "infiniband": "onprem",
    "roce": "onprem",
    "efa": "aws",
    "gpudirect-tcpx": "gcp",
    "gpudirect-tcpxo": "gcp",
    "gcp-rdma": "gcp",
    "azure-ib": "azure",
}
# The catalogs stay lazy (read at first use): an on-prem definition never reads the cloud data files.
_TYPE_CATALOGS: dict[str, tuple[str, Mapping[str, object]]] = {
    "aws": ("AWS instance type", AWS_INSTANCE_TYPES),
    "gcp": ("GCP machine type", GCP_MACHINE_TYPES),
    "azure": ("Azure VM size", AZURE_VM_SIZES),
}


def check_target(spec: ClusterSpec) -> Iterator[Finding]:
    """The target's block is present, the other clouds' blocks absent, the transport fits the target."""
    for cloud in ("aws", "gcp", "azure"):
        block = getattr(spec, cloud)
        if cloud == spec.target and block is None:
            yield Finding((cloud,), f"target is {cloud} but the '{cloud}' block is missing; add it with region/zone, image and capacity")
        elif cloud != spec.target and block is not None:
            yield Finding((cloud,), f"'{cloud}' block given but target is {spec.target}; remove it or set target: {cloud}")
    transport = spec.planes.compute.transport
    wanted = _TRANSPORT_TARGET[transport]
    if wanted != spec.target:
        fits = sorted(t for t, tgt in _TRANSPORT_TARGET.items() if tgt == spec.target)
        yield Finding(
            ("planes", "compute", "transport"),
            f"transport '{transport}' runs only on target {wanted}, but target is {spec.target}; use one of {', '.join(fits)}",
        )
    if spec.target == "onprem" and spec.fabric is None:
        yield Finding(("fabric",), "an on-prem cluster needs a 'fabric' block (topology, leaf and spine models, NOS)")
    if spec.target != "onprem" and spec.fabric is not None:
        yield Finding(("fabric",), f"the 'fabric' block describes on-prem switches; the {spec.target} provider builds the fabric, remove it")
    if spec.planes.compute.cidr is None and transport != "azure-ib":
        yield Finding(("planes", "compute", "cidr"), f"transport '{transport}' needs a compute cidr; add planes.compute.cidr")
    if transport == "infiniband" and spec.infiniband is None:
        yield Finding(("infiniband",), "transport infiniband needs an 'infiniband' block with at least the subnet_manager")
    if transport != "infiniband" and spec.infiniband is not None:
        yield Finding(("infiniband",), f"'infiniband' block given but the compute transport is '{transport}'; remove it", "warning")


def check_node_groups(spec: ClusterSpec) -> Iterator[Finding]:
    """Group names, hostnames and stable ids are unique; hardware or instance type fits the target."""
    seen_groups: dict[str, int] = {}
    owners: dict[str, int] = {}
    for gi, group in enumerate(spec.nodes):
        base = ("nodes", gi)
        if group.group in seen_groups:
            yield Finding((*base, "group"), f"group name '{group.group}' is already used by nodes[{seen_groups[group.group]}]; rename one")
        seen_groups.setdefault(group.group, gi)
        for name in group.hostnames():
            if name in owners and owners[name] != gi:
                yield Finding((*base, "hostname"), f"hostname '{name}' is also produced by nodes[{owners[name]}]; change one hostname pattern")
                break
            owners[name] = gi
        if group.count == 0:
            yield Finding((*base, "count"), f"group '{group.group}' has count 0 and creates no node", "warning")
        yield from _check_group_hardware(spec, gi)
    yield from _check_id_overlap(spec)


def _check_group_hardware(spec: ClusterSpec, gi: int) -> Iterator[Finding]:
    group = spec.nodes[gi]
    base = ("nodes", gi)
    if spec.target == "onprem":
        if group.hardware is None and not group.ports:
            yield Finding(
                (*base, "hardware"),
                f"on-prem group '{group.group}' needs 'hardware' (a profile such as dgx-h100) or its own 'ports' per plane",
            )
        if group.instance_type is not None:
            yield Finding((*base, "instance_type"), "instance_type is for cloud targets; on-prem groups use 'hardware'")
        if group.hardware is not None and group.hardware not in HARDWARE and group.hardware not in spec.hardware:
            yield Finding((*base, "hardware"), unknown_choice("hardware profile", group.hardware, [*HARDWARE, *spec.hardware]))
            return
        profile = spec.profile_of(group)
        if profile is not None:
            what = f"'{group.hardware}'" if group.hardware else f"group '{group.group}'"
            if group.role == "gpu" and "compute" not in profile.ports:
                yield Finding((*base, "hardware"), f"role gpu needs compute ports, and {what} has none; pick a GPU profile or add ports.compute")
            if group.role == "gpu" and group.count and "inband" not in profile.ports:
                # The in-band address is the node's only routed management address: ansible_host, Slurm's NodeAddr and
                # NCCL's socket interface all come from it, and nothing else reaches the node (the BMC port is out of band).
                yield Finding(
                    (*base, "hardware" if group.hardware else "ports"),
                    f"group '{group.group}': {what} has no in-band port, so its nodes get no management address (no ansible_host, "
                    f"Slurm NodeAddr or NCCL_SOCKET_IFNAME); add an inband entry to its ports (e.g. inband: {{speed_gbps: 25, names: [eno1]}})",
                )
            for plane, names in group.interfaces.items():
                have = profile.ports.get(plane)
                if have is None or len(names) != have.count:
                    count = have.count if have else 0
                    yield Finding(
                        (*base, "interfaces", plane),
                        f"{len(names)} name(s) given but {what} has {count} {plane} port(s); give one name per port",
                    )
        return
    if group.hardware is not None or group.ports:
        key = "hardware" if group.hardware is not None else "ports"
        yield Finding((*base, key), f"'{key}' is for on-prem groups; on {spec.target} set instance_type")
    yield from _check_instance_type(spec.target, group.group, group.instance_type, (*base, "instance_type"))


def _check_instance_type(target: str, group: str, instance_type: str | None, path: tuple[str | int, ...]) -> Iterator[Finding]:
    """Given, in the target's catalog, and not one refused on purpose (``fabric.catalog.cloud_refused``: named with its reason)."""
    label, catalog = _TYPE_CATALOGS[target]
    if instance_type is None:
        yield Finding(path, f"group '{group}' needs instance_type (a {label})")
    elif instance_type in REFUSED_TYPES[target]:
        yield Finding(path, f"{label} '{instance_type}' is not supported yet: {REFUSED_TYPES[target][instance_type]}")
    elif instance_type not in catalog:
        yield Finding(path, unknown_choice(label, instance_type, catalog))


def _check_id_overlap(spec: ClusterSpec) -> Iterator[Finding]:
    groups = sorted(((g.id_offset, gi) for gi, g in enumerate(spec.nodes) if g.count), key=lambda t: t)
    for (_, a), (_, b) in pairwise(groups):
        ga, gb = spec.nodes[a], spec.nodes[b]
        if gb.id_offset < ga.id_offset + ga.count:
            first, last = ga.id_offset + 1, ga.id_offset + ga.count
            yield Finding(
                ("nodes", b, "id_offset"),
                f"node ids of group '{gb.group}' start at {gb.id_offset + 1}, inside group '{ga.group}' ids {first}..{last}; "
                f"ids fix addresses and fabric slots, so set nodes[{b}].id_offset to {last} or more (leave room to grow)",
            )


def check_switch_tiers(spec: ClusterSpec) -> Iterator[Finding]:
    """Each tier's NOS runs on its model; the model's link layer fits the compute transport."""
    fabric = spec.fabric
    if fabric is None:
        return
    transport = spec.planes.compute.transport
    for tier, tier_spec in fabric.tier_specs.items():
        model = SWITCH_MODELS[tier_spec.model]
        if tier_spec.nos not in model.nos:
            why = "".join(f" ({UNRENDERED_NOS[n]})" for n in model.nos if n in UNRENDERED_NOS)
            yield Finding(("fabric", tier, "nos"), f"{model.name} does not run {tier_spec.nos}; it runs {', '.join(model.nos)}{why}")
        yield from unsupported_release(("fabric", tier, "nos_version"), tier_spec.nos, tier_spec.nos_version)
        limit = model.max_mtu(tier_spec.nos)
        if fabric.mtu is not None and limit is not None and fabric.mtu > limit:
            yield Finding(
                ("fabric", "mtu"),
                f"MTU {fabric.mtu} is above the {limit} that {tier_spec.nos} accepts on {model.name} routed ports ({tier} tier); "
                f"set fabric.mtu to {limit} or less, or leave it out to get the largest every tier accepts",
            )
        wanted = "infiniband" if transport == "infiniband" else "ethernet"
        if model.link_layer != wanted:
            yield Finding(
                ("fabric", tier, "model"), f"{model.name} is an {model.link_layer} switch but transport '{transport}' needs {wanted} switches"
            )


def check_hardware_section(spec: ClusterSpec) -> Iterator[Finding]:
    """The definition's own profiles do not take a built-in profile's name (a group would silently get another machine)."""
    for name in spec.hardware:
        if name in HARDWARE:
            yield Finding(("hardware", name), f"'{name}' is a built-in profile; give yours another name, e.g. '{name}-site'")
        elif spec.target != "onprem":
            yield Finding(("hardware", name), f"hardware profiles are for on-prem nodes; on {spec.target} groups set instance_type")


RULES: tuple[Rule, ...] = (
    check_target,
    check_hardware_section,
    check_node_groups,
    check_unpublished_ports,
    check_cidrs,
    check_explicit_addresses,
    check_mtu,
    check_roce_contract,
    check_nic_marking,
    check_rdma_stack,
    check_infiniband,
    check_ib_features,
    check_switch_tiers,
    check_nos_watchdog,
    check_aws,
    check_gcp,
    check_azure,
)


def check_spec(spec: ClusterSpec) -> list[Finding]:
    """Run every rule and return all findings (errors and warnings)."""
    return [finding for rule in RULES for finding in rule(spec)]
