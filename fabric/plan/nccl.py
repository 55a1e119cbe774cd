"""NCCL environment per node group, from the RoCE/InfiniBand contract and the compute ports: the facts that the
inventory, lint and ``export nccl`` share.

Every variable below is documented in NCCL's "Environment Variables" page
(https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html); the defaults quoted are NCCL's own
(``src/transport/net_ib/connect.cc``: ``IB_GID_INDEX`` -1, ``IB_SL`` -1, ``IB_TC`` -1, ``IB_PKEY`` 0).
The files use the ``KEY=VALUE`` form NCCL reads from ``/etc/nccl.conf`` or ``$NCCL_CONF_FILE`` (since 2.23),
which a shell can also source (``set -a; . gpu.env``).
"""

from __future__ import annotations

from dataclasses import dataclass

from fabric.errors import Finding, InputError
from fabric.model.load_balancing import LoadBalancingSpec
from fabric.plan.compute.planes import plane_of
from fabric.plan.host_bonds import bonded_ports, host_bonds
from fabric.plan.types import ClusterPlan, HostInterface, NodePlan

# The RoCE v2 GID of a port's IPv4 address sits at index 3 on ConnectX with the mlx5 driver's default GID table
# (0/1: RoCE v1/v2 of the link-local IPv6, 2/3: RoCE v1/v2 of the first IPv4 address). NCCL >= 2.21 picks the RoCE v2
# GID itself when NCCL_IB_GID_INDEX is unset (-1); we pin it so a different table fails loudly. The fabric_check role
# reads the live index from sysfs (roce_gid_index in its report) and that value must equal this one.
ROCE_V2_GID_INDEX = 3
# NCCL_CROSS_NIC=0: "always use the same NIC for the same ring/tree, to avoid crossing network rails" (NCCL env docs),
# the setting for rail-optimized fabrics, where a rail's leaves reach another rail only through the spines.
RAIL_OPTIMIZED_CROSS_NIC = 0
# NCCL_IB_SL: the service level. The definition configures no QoS levels in the subnet manager, so every path uses
# SL 0 (OpenSM's default); set explicitly so a job's environment cannot inherit another one.
DEFAULT_IB_SL = 0
# SHARP through NCCL's CollNet: HPC-X 2.26 "NCCL-RDMA-SHARP Plugins": "The following environment variables enable the
# SHARP aggregation with NCCL when using the plugin. NCCL_COLLNET_ENABLE=1"; SHARP_COLL_ENABLE_SAT=1 asks libsharp for
# streaming aggregation trees (Mellanox/nccl-rdma-sharp-plugins .ci/run_nccl_test.sh @1e29196: NCCL_ALGO=CollNet runs with
# SHARP_COLL_ENABLE_SAT=1). The plugin itself ships with HPC-X / DOCA-Host (libnccl-net.so on the library path).
# SHARP_COLL_* is libsharp's, not NCCL's: it still works from /etc/nccl.conf, as NCCL's setEnvFile (src/misc/param.cc)
# puts every KEY=VALUE line of the file into the process environment (setenv without overwrite) before loading plugins.
SHARP_ENV: dict[str, str] = {"NCCL_COLLNET_ENABLE": "1", "SHARP_COLL_ENABLE_SAT": "1"}

# Multi-plane fabrics (fabric.planes 2-4; docs/definition/planes.md "NCCL on several planes"). Sources, NVIDIA/nccl at
# tag v2.30.7-1 (commit e7fcc7da, 2026-06-03; https://github.com/NVIDIA/nccl/tree/v2.30.7-1) unless named:
# - NCCL_IB_HCA entries are "<hca>[:<port>[:<rail>[:<plane>]]]" ... "The optional <rail> and <plane> fields assign a rail
#   and plane identity to the associated device. Both default to -1 (unassigned)" (docs/userguide/source/env.rst). Added by
#   commit 7ec092af "net: add rail/plane NIC identity" (first in v2.30.7-1); src/graph/search.cc then "always forbid[s]
#   connections between different networking planes (if both planes are defined)", and with NCCL_CROSS_NIC=0 keeps a
#   ring on one rail id (commit 84a95d41 "graph: make cross-NIC search rail-aware"). Releases before it read an entry's
#   port with atoi() and skip the rest of the entry (src/misc/utils.cc parseStringList, the same text from v2.18.3-1 to
#   v2.29.7-1; so does Mellanox/nccl-rdma-sharp-plugins src/utils.c @0eb0d17), so the extra fields are ignored there, not
#   an error: the file works on every release and gains the plane guard from 2.30.7 on. Checked by compiling both tags'
#   parseStringList/matchIfList against "=mlx5_0:1:1:1,mlx5_1:1:1:2": both read ports 1 and match mlx5_0 and mlx5_1
#   (not mlx5_10); v2.30.7-1 also reads rails 1, 1 and planes 1, 2.
# - Rail and plane ids are opaque integers to NCCL (compared for equality; fewer than 14 distinct plane ids,
#   NCCL_IB_PLANE_MAX_INDEX 14 in src/transport/net_ib/init.cc); we write the plan's own numbers (rail 3 of plane 2: ":3:2",
#   the file's p2r3), so the two ports of one dual-port NIC share a rail id and differ in plane.
# - NCCL_IB_MERGE_NICS (since 2.20, default 1: "combine dual-port IB NICs into a single logical network device") is left
#   at NCCL's default: the merged device of a NIC whose ports sit on different planes gets a plane id of its own (the
#   set of its ports' planes: init.cc "Set the virtual bit on to avoid collision with physical planes when multiple planes
#   are merged"), so it connects only to devices merged from the same planes, and queue pair q uses port q % ndevs on both
#   ends (src/transport/net_ib/connect.cc), port i to port i; 0 would be as correct, so neither is a contradiction lint
#   reports.
# - NCCL_CROSS_NIC=0 on every multi-plane fabric, whatever its topology: before 2.30.7 NCCL does not know planes, and its
#   default 2 ("still allow for the use of different NICs", env.rst) could pair a plane-1 port with a plane-2 port,
#   between which no route exists (planes never cross).
# - NCCL uses at most 32 HCAs ("a fixed upper limit of 32 Host Channel Adapter (HCA) devices", env.rst; MAX_IB_DEVS 32
#   in src/transport/net_ib/common.h since 2.20): planes.compute.max_ports_per_node is bounded at 32, so every plane's
#   ports of a node fit.
# - NVIDIA's Spectrum-X NCCL plugin (HPC-X 2.25.1 "Spectrum-X NCCL Plugin",
#   https://docs.nvidia.com/networking/display/hpcxv2251/Spectrum-X-NCCL-Plugin: "loaded by NCCL's environment variable
#   NCCL_NET_PLUGIN=spcx", "Dynamically redistributes data across multiple network interfaces"; HPC-X 2.24.1 named it
#   "NCCLNet", NCCL_NET_PLUGIN=ncclnet) is not set: it ships with HPC-X, which no role installs, and NCCL_NET_PLUGIN
#   naming a library that is not there makes NCCL fall back to its own transport (env.rst NCCL_NET_PLUGIN).
MULTI_PLANE_CROSS_NIC = 0
# Spectrum-X hwplb: "NIC LAG and Hardware Plane Load Balancing (hwplb) handle per-plane fan-out at the hardware layer, so
# each rail still uses a single CIDRPool" (NVIDIA Network Operator 26.4.0, Hardware Multiplane Spectrum-X Quick Start,
# https://docs.nvidia.com/networking/display/kubernetes2640/spectrum-x/quick-start-hwplb.html);
# under RoCE LAG "only one IB device is present for both ports" (Linux commit 7907f23adc18, "net/mlx5: Implement RoCE LAG
# feature"). The plan gives every port its own RDMA device and plane address (swplb's "per-rail, per-plane resources",
# NVIDIA k8s-launch-kit, https://nvidia.github.io/k8s-launch-kit/user/spectrum-x/), so it cannot name the bonded device
# NCCL would see.
HWPLB_REFUSAL = (
    "hwplb bonds each NIC's per-plane ports into one RDMA device (NIC LAG) with one address per rail, but this definition "
    "gives every port its own device and plane address (swplb), so NCCL_IB_HCA cannot be derived; use multiplane_mode: swplb"
)


@dataclass(frozen=True, slots=True)
class NcclGroup:
    """What one node group's NCCL file is built from: its RDMA compute ports in rail order and its in-band port."""

    group: str
    transport: str
    ports: tuple[HostInterface, ...]
    inband: str | None


def rail_ordered_ports(node: NodePlan) -> tuple[HostInterface, ...]:
    """A node's compute ports that carry RDMA (an HCA), in rail order (port index where there are no rails).

    Example:
        >>> rail_ordered_ports(NodePlan("n1", "gpu", "gpu", 1, "x", 0, ()))
        ()
    """
    ports = [i for i in node.interfaces if i.plane == "compute" and i.hca]
    return tuple(sorted(ports, key=lambda i: (i.rail if i.rail is not None else i.index + 1, i.index)))


def nccl_groups(plan: ClusterPlan) -> list[NcclGroup]:
    """The node groups NCCL runs on (GPUs and RDMA compute ports), each from its first node, sorted by name.

    Raises:
        InputError: Spectrum-X hwplb on a multi-plane fabric (``HWPLB_REFUSAL``).
    """
    transport = plan.plane("compute").transport or "roce"
    if plan.spectrum_x_multiplane == "hwplb" and any(n.gpus for n in plan.nodes):
        raise InputError([Finding(("fabric", "spectrum_x", "multiplane_mode"), HWPLB_REFUSAL)])
    first: dict[str, NodePlan] = {}
    for node in plan.nodes:
        first.setdefault(node.group, node)
    groups: list[NcclGroup] = []
    for name, node in sorted(first.items()):
        ports = rail_ordered_ports(node)
        if not ports or node.gpus == 0:
            continue  # NCCL runs where GPUs and RDMA ports are
        inband = next((i.name for i in node.interfaces if i.plane == "inband" and i.kind == "netdev"), None)
        # A bonded in-band port has no address of its own: NCCL's sockets must use the bond that carries it.
        inband = bonded_ports(host_bonds(plan, node)).get(inband, inband) if inband else None
        groups.append(NcclGroup(name, transport, ports, inband))
    return groups


def nccl_env(plan: ClusterPlan, group: NcclGroup) -> dict[str, str]:
    """The NCCL variables of one node group, in file order.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> plan = plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml"))
        >>> env = nccl_env(plan, nccl_groups(plan)[0])
        >>> env["NCCL_IB_TC"], env["NCCL_IB_HCA"].split(",")[:2]
        ('106', ['=mlx5_0:1', 'mlx5_3:1'])
    """
    # "=" makes NCCL match the HCA names exactly (mlx5_1 would otherwise also select mlx5_10); ":1" is the port; on several
    # planes ":<rail>:<plane>" follow (hca_entry).
    multi_plane = is_multi_plane(group)
    env = {"NCCL_IB_HCA": "=" + ",".join(hca_entry(p) for p in group.ports)}
    if group.inband:
        env["NCCL_SOCKET_IFNAME"] = f"={group.inband}"  # bootstrap and out-of-band traffic on the in-band plane
    if group.transport == "infiniband":
        env["NCCL_IB_SL"] = str(DEFAULT_IB_SL)
    else:
        env["NCCL_IB_GID_INDEX"] = str(ROCE_V2_GID_INDEX)
        # NCCL_IB_TC is the GRH traffic class, which RoCE v2 carries as the IP ToS byte: DSCP << 2 plus the ECN bits.
        # The contract's ToS (roce.tos, default DSCP << 2 | ECT(0) = 106 for DSCP 26) is what the NICs' RDMA-CM use too.
        env["NCCL_IB_TC"] = str(plan.roce.effective_tos)
    if multi_plane:
        env["NCCL_CROSS_NIC"] = str(MULTI_PLANE_CROSS_NIC)  # a ring stays on one NIC, so on one plane
    elif plan.fabric is not None and plan.fabric.topology == "rail-optimized":
        env["NCCL_CROSS_NIC"] = str(RAIL_OPTIMIZED_CROSS_NIC)
    ib = plan.infiniband if group.transport == "infiniband" else None
    if ib is not None and ib.adaptive_routing:
        # NCCL src/transport/net_ib: NCCL_PARAM(IbAdaptiveRouting, "IB_ADAPTIVE_ROUTING", -2), and -2 means "Enable
        # ADAPTIVE_ROUTING by default on IB networks" (ar = link layer InfiniBand); written out so the node's file states
        # what the fabric was built for, and a job's environment cannot silently turn it off.
        env["NCCL_IB_ADAPTIVE_ROUTING"] = "1"
    if ib is not None and ib.sharp:
        env.update(SHARP_ENV)
    env.update(load_balancing_env(plan.load_balancing, group.transport))
    return env


def is_multi_plane(group: NcclGroup) -> bool:
    """Whether the group's compute ports sit on several planes (their leaves are plane switches, ``p<k>-...``)."""
    return any(plane_of(p.switch) is not None for p in group.ports)


def hca_entry(port: HostInterface) -> str:
    """One ``NCCL_IB_HCA`` entry: ``mlx5_0:1`` on one plane, ``mlx5_0:1:<rail>:<plane>`` on a plane switch (the rail
    field empty where the fabric has no rails, as env.rst's ``mlx5_0::0:0`` keeps field positions).

    Example:
        >>> hca_entry(HostInterface("enp24s0f1np1", "compute", 1, 200, 9000, "ethernet", switch="p2-leaf-su01-r1", rail=1, hca="mlx5_1"))
        'mlx5_1:1:1:2'
        >>> hca_entry(HostInterface("enp24s0np0", "compute", 0, 400, 9000, "ethernet", switch="leaf-su01-r1", rail=1, hca="mlx5_0"))
        'mlx5_0:1'
    """
    plane = plane_of(port.switch)
    if plane is None:
        return f"{port.hca}:1"
    return f"{port.hca}:1:{port.rail if port.rail is not None else ''}:{plane}"


def load_balancing_env(lb: LoadBalancingSpec, transport: str) -> dict[str, str]:
    """The NCCL side of the fabric's load balancing (``fabric.load_balancing``); nothing the definition leaves unset.

    NCCL's defaults (``src/transport/net_ib``): ``IB_QPS_PER_CONNECTION`` 1 and ``IB_SPLIT_DATA_ON_QPS`` 0
    (``NCCL_PARAM(IbQpsPerConn, "IB_QPS_PER_CONNECTION", 1)``, ``NCCL_PARAM(IbSplitDataOnQps, "IB_SPLIT_DATA_ON_QPS", 0)``);
    ``IB_ADAPTIVE_ROUTING`` -2, which NCCL turns on for InfiniBand only (NCCL env docs: "Default: 1 on IB networks, 0 on
    RoCE networks"), so a RoCE fabric whose switches route adaptively sets it to 1. More queue pairs give the switches
    more UDP source ports, so more flows, to spread over the ECMP paths.

    Example:
        >>> load_balancing_env(LoadBalancingSpec(adaptive_routing=True, nccl_qps_per_connection=4, nccl_split_data_on_qps=False), "roce")
        {'NCCL_IB_QPS_PER_CONNECTION': '4', 'NCCL_IB_SPLIT_DATA_ON_QPS': '0', 'NCCL_IB_ADAPTIVE_ROUTING': '1'}
    """
    env: dict[str, str] = {}
    if lb.nccl_qps_per_connection is not None:
        env["NCCL_IB_QPS_PER_CONNECTION"] = str(lb.nccl_qps_per_connection)
    if lb.nccl_split_data_on_qps is not None:
        env["NCCL_IB_SPLIT_DATA_ON_QPS"] = "1" if lb.nccl_split_data_on_qps else "0"
    if lb.adaptive_routing and transport == "roce":
        env["NCCL_IB_ADAPTIVE_ROUTING"] = "1"
    return env
