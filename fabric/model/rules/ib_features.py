"""InfiniBand in-network features: SHARP and adaptive routing, refused with the reason where the SM, the routing
engine, the switches or the topology cannot carry them.

Sources:

- MLNX-OS User Manual v3.11.2502 LTS, "Subnet Manager": "Subnet manager running via MLNX-OS does not support adaptive
  routing, fault routing (i.e., SHIELD or FRN), congestion control, SHIELD, and SHARP."
- SHARP Rev 3.3.0, "Setting up NVIDIA SHARP Environment": "Make sure onboard Subnet Manager is disabled in the managed
  switches. (Aggregation Manager is a central entity running on a dedicated server with a master Subnet Manager. This
  dedicated server cannot serve as a compute node."; routing engines "Tree based topologies: updn, ar_updn, ftree,
  ar_ftree".
- SHARP Rev 3.12.0, "Appendix E: Using NVIDIA SHARP from DOCA-Host": "The minimal required OpenSM version for working
  with SHARP_am is v5.20." (the upstream opensm the distributions ship is 3.3.x).
- HPC-X 2.26, "NCCL-RDMA-SHARP Plugins": "NVIDIA switches allow a limited number of streaming aggregation flows
  (maximum: 2) ... NCCL creates an aggregation streaming flow (NCCL Ring/Channel) per HCA rail. It is required to build
  the cluster topology in such a way that leaf level switches are connected to the same HCA rail from each server."
- InfiniBand Cluster Bring-up Procedure v1.0, "Adaptive Routing": AR groups for tree topologies (fat-tree, quasi-fat-tree)
  come from the TREE algorithm of the ar_* engines; "The default value is: ar_updn".
"""

from __future__ import annotations

from collections.abc import Iterator

from fabric.catalog.ib_features import IB_SWITCH_FEATURES
from fabric.errors import Finding
from fabric.model.cluster import ClusterSpec

SHARP_ENGINES = frozenset({"updn", "ar_updn", "ftree", "ar_ftree"})
AR_ENGINES = frozenset({"ar_updn", "ar_ftree"})
NO_SWITCH_SM = (
    "the switch-hosted subnet manager (MLNX-OS) does not support {what} "
    '(MLNX-OS User Manual v3.11.2502: "does not support adaptive routing, ... and SHARP")'
)


def check_ib_features(spec: ClusterSpec) -> Iterator[Finding]:
    """SHARP and adaptive routing only where the SM, routing engine, switch models and topology carry them."""
    ib = spec.infiniband
    if ib is None or not (ib.sharp or ib.adaptive_routing):
        return
    sm = ib.subnet_manager
    base = ("infiniband", "subnet_manager")
    wanted = [name for name, on in (("SHARP", ib.sharp), ("adaptive routing", ib.adaptive_routing)) if on]
    if sm.kind == "switch":
        yield Finding(
            (*base, "kind"),
            NO_SWITCH_SM.format(what=" or ".join(wanted)) + "; run the SM on hosts: kind ufm, or kind opensm with nvidia_opensm: true",
        )
    elif sm.kind == "opensm" and not sm.nvidia_opensm:
        yield Finding(
            (*base, "nvidia_opensm"),
            f"{' and '.join(wanted)} need NVIDIA's OpenSM (SHARP_am needs OpenSM v5.20 or later, the ar_* engines are NVIDIA's); "
            "the distributions' upstream opensm 3.3 has neither: install DOCA-Host's OpenSM on the SM hosts and set "
            "infiniband.subnet_manager.nvidia_opensm: true, or use kind ufm",
        )
    if ib.adaptive_routing and sm.routing_engine not in AR_ENGINES:
        yield Finding(
            (*base, "routing_engine"),
            f"adaptive routing is programmed by the ar_* routing engines; routing_engine {sm.routing_engine} leaves the switches' "
            "AR groups empty: use ar_updn (the NVIDIA SM default for fat trees) or ar_ftree",
        )
    if ib.sharp and sm.routing_engine not in SHARP_ENGINES:
        yield Finding(
            (*base, "routing_engine"),
            f"SHARP's aggregation manager builds its trees on a tree routing engine (SHARP 3.3.0: updn, ar_updn, ftree, ar_ftree); "
            f"routing_engine {sm.routing_engine} is not one: pick one of those",
        )
    yield from _switch_models(spec, wanted)
    if ib.sharp:
        yield from _sharp_placement(spec)


def _switch_models(spec: ClusterSpec, wanted: list[str]) -> Iterator[Finding]:
    """Every InfiniBand tier's model is known to carry each feature asked for."""
    ib, fabric = spec.infiniband, spec.fabric
    if ib is None or fabric is None:
        return
    for tier, tier_spec in fabric.tier_specs.items():
        features = IB_SWITCH_FEATURES.get(tier_spec.model)
        missing = [name for name in wanted if features is None or (name == "adaptive routing" and not features.adaptive_routing)]
        if missing:
            yield Finding(
                ("fabric", tier, "model"),
                f"{tier_spec.model}: no source in fabric/catalog/ib_features.py says its ASIC does {' or '.join(missing)}; "
                "use a Quantum, Quantum-2 or Quantum-X800 model (qm8700, qm9700), or turn the feature off",
            )


def _sharp_placement(spec: ClusterSpec) -> Iterator[Finding]:
    """The aggregation manager is not on a compute node, and NCCL's per-rail SHARP flows meet one leaf per rail."""
    ib, fabric = spec.infiniband, spec.fabric
    assert ib is not None
    gpu_hosts = {h: g.group for g in spec.nodes if g.role == "gpu" for h in g.hostnames()}
    for ni, node in enumerate(ib.subnet_manager.nodes):
        if node.host in gpu_hosts:
            yield Finding(
                ("infiniband", "subnet_manager", "nodes", ni, "host"),
                f"'{node.host}' is a GPU node (group {gpu_hosts[node.host]}); SHARP's aggregation manager runs beside the master SM "
                'on a dedicated server that "cannot serve as a compute node" (SHARP 3.3.0): put the SM on a management host',
            )
    multi_rail = any(
        (p := spec.profile_of(g)) is not None and "compute" in p.ports and p.ports["compute"].count > 1 for g in spec.nodes if g.role == "gpu"
    )
    if fabric is not None and multi_rail and fabric.topology != "rail-optimized":
        yield Finding(
            ("fabric", "topology"),
            f'SHARP with NCCL opens one streaming-aggregation flow per HCA rail, and "it is required to build the cluster topology '
            f'in such a way that leaf level switches are connected to the same HCA rail from each server" (HPC-X, NCCL-RDMA-SHARP '
            f"plugins); topology {fabric.topology} mixes rails on a leaf: use rail-optimized, or infiniband.sharp: false",
        )
