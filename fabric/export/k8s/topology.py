"""Kubernetes: node labels for topology-aware scheduling, Kueue's ``Topology`` and a ``ResourceFlavor`` naming it,
and the GPU Operator's Helm values as the node roles imply them (pure: plan → YAML).

Kueue's topology-aware scheduling (kueue.x-k8s.io/v1beta2 ``Topology``, Kueue v0.19.2
``config/components/crd/bases/kueue.x-k8s.io_topologies.yaml``) reads plain node labels, one per level, broadest
first; the last level may be ``kubernetes.io/hostname`` and then must be last (the CRD's validation rule). A
``ResourceFlavor`` with ``topologyName`` must also select nodes by at least one label (its CRD rule). Our levels:
the spine block (every leaf reaches every spine of it), on a three-tier fabric the pod (its leaves reach each other
through the pod's spines, other pods only through the super-spines), then the group of nodes that share their leaves
(a scalable unit on a rail-optimized fabric, where a node reaches all of its unit's rail leaves; the leaf itself on a
fat tree), then the rack where the definition has racks (``fabric.export.racks``: ``placement: rack`` OOB switches) and
each rack's nodes share that group (Kueue's levels must nest; a rack split across two leaves of a fat tree gets no
label), then the multi-node NVLink domain (a GB200/GB300 NVL72 rack: the same blocks as Slurm's topology/block,
``fabric.export.slurm.nvlink_blocks``) where every domain nests in the levels above, then the host.
"""

from __future__ import annotations

import yaml

from fabric.export.k8s.documents import HEADER, dump_documents
from fabric.export.racks import node_racks
from fabric.export.slurm import nvlink_blocks
from fabric.plan.types import ClusterPlan, NodePlan

LABEL_PREFIX = "topology.gpufabric.io/"
BLOCK_LABEL = f"{LABEL_PREFIX}spine-block"
POD_LABEL = f"{LABEL_PREFIX}pod"
SU_LABEL = f"{LABEL_PREFIX}scalable-unit"
LEAF_LABEL = f"{LABEL_PREFIX}leaf"
RACK_LABEL = f"{LABEL_PREFIX}rack"
NVLINK_LABEL = f"{LABEL_PREFIX}nvlink-domain"
HOST_LABEL = "kubernetes.io/hostname"  # the well-known label the kubelet sets (Kubernetes "Well-Known Labels")
# The node roles install the GPU driver and DOCA on the host (roles/gpu_driver/defaults/main.yml gpu_driver_branch,
# gpu_driver_open_kernel_modules, gpu_driver_gpudirect: auto = DMA-BUF; roles/rdma_stack: DOCA), so the operators
# must not install their own: a test reads the role defaults and fails when these drift.
GPU_DRIVER_BRANCH = "580"
GPU_OPERATOR_VERSION = "v26.7.0"


def _leaf_group(plan: ClusterPlan, node: NodePlan) -> tuple[str, str] | None:
    """(label, value) of the group of nodes that share their leaves; None for a node off the compute fabric."""
    port = next((i for i in node.interfaces if i.plane == "compute" and i.switch), None)
    if port is None or port.switch is None:
        return None
    if plan.fabric is not None and plan.fabric.topology == "rail-optimized" and node.scalable_unit is not None:
        return SU_LABEL, f"su{node.scalable_unit:02d}"
    return LEAF_LABEL, port.switch


def node_labels(plan: ClusterPlan) -> dict[str, dict[str, str]]:
    """Hostname → topology labels for every GPU node on the compute fabric.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> node_labels(plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml")))["gpu033"]
        {'topology.gpufabric.io/spine-block': 'pod-a', 'topology.gpufabric.io/scalable-unit': 'su02'}
    """
    labels: dict[str, dict[str, str]] = {}
    pods = plan.fabric.pods if plan.fabric else None
    pod_of = {leaf.name: pods.pod_of(leaf) for leaf in plan.fabric.leaves} if plan.fabric and pods else {}
    for node in plan.nodes:
        group = _leaf_group(plan, node) if node.role == "gpu" else None
        if group is not None:
            # One spine block: every leaf of a two-tier fabric reaches every spine (on three tiers, every pod spine
            # reaches every super-spine of its plane).
            labels[node.hostname] = {BLOCK_LABEL: plan.name}
            leaf = next((i.switch for i in node.interfaces if i.plane == "compute" and i.switch), None)
            if pod_of and leaf in pod_of:
                labels[node.hostname][POD_LABEL] = f"pod{pod_of[leaf]:02d}"
            labels[node.hostname][group[0]] = group[1]
    _add_racks(labels, node_racks(plan))
    _add_level(labels, {host: block for block, hosts in nvlink_blocks(plan).items() for host in hosts}, NVLINK_LABEL)
    return labels


def _add_racks(labels: dict[str, dict[str, str]], racks: dict[str, str]) -> None:
    """The rack label on every labelled node, when every labelled node has a rack and each rack sits inside one group."""
    _add_level(labels, racks, RACK_LABEL)


def _add_level(labels: dict[str, dict[str, str]], values: dict[str, str], key: str) -> None:
    """``key`` on every labelled node, when every labelled node has a value and each value sits inside one group."""
    if not labels or any(host not in values for host in labels):
        return
    parent: dict[str, tuple[str, ...]] = {}
    for host, node in labels.items():
        if parent.setdefault(values[host], tuple(node.values())) != tuple(node.values()):
            return  # a rack or domain across two groups: not a level below them
    for host, node in labels.items():
        node[key] = values[host]


def topology_levels(labels: dict[str, dict[str, str]]) -> list[str]:
    """Kueue's levels, broadest first, ending with the hostname."""
    used = {key for node in labels.values() for key in node}
    return [key for key in (BLOCK_LABEL, POD_LABEL, SU_LABEL, LEAF_LABEL, RACK_LABEL, NVLINK_LABEL) if key in used] + [HOST_LABEL]


def kueue_objects(plan: ClusterPlan, labels: dict[str, dict[str, str]]) -> list[dict[str, object]]:
    """The ``Topology`` and a ``ResourceFlavor`` on the GPU nodes that uses it."""
    name = f"{plan.name}-fabric"
    topology: dict[str, object] = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Topology",
        "metadata": {"name": name},
        "spec": {"levels": [{"nodeLabel": key} for key in topology_levels(labels)]},
    }
    flavor: dict[str, object] = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": f"{plan.name}-gpu"},
        "spec": {"nodeLabels": {BLOCK_LABEL: plan.name}, "topologyName": name},
    }
    return [topology, flavor]


def node_objects(labels: dict[str, dict[str, str]]) -> list[dict[str, object]]:
    """``Node`` objects carrying only our labels, for ``kubectl apply --server-side --field-manager=gpufabric``."""
    return [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": host, "labels": labels[host]}} for host in sorted(labels)]


def gpu_operator_values(plan: ClusterPlan) -> dict[str, object]:
    """GPU Operator chart values: the host keeps its driver (the ``gpu_driver`` role) and GPUDirect RDMA (DMA-BUF)."""
    del plan  # the same for every cluster the roles set up; kept for the exporter's signature
    return {
        # The gpu_driver role installed the driver on the host: the operator uses it (GPU Operator "pre-installed
        # NVIDIA GPU drivers": driver.enabled=false) instead of a driver container that would replace it.
        "driver": {"enabled": False, "rdma": {"enabled": False}},  # rdma.enabled loads nvidia-peermem; DMA-BUF needs none
        "toolkit": {"enabled": True},
        "devicePlugin": {"enabled": True},
        "dcgmExporter": {"enabled": True},  # GPU metrics for the telemetry export
        "gds": {"enabled": False},  # nvidia-fs ships with the operator's driver container, which is off
    }


def export_scheduling(plan: ClusterPlan) -> dict[str, str]:
    """``k8s/node-labels.yaml``, ``k8s/kueue-topology.yaml`` and ``k8s/gpu-operator-values.yaml`` (GPU nodes only).

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> sorted(export_scheduling(plan_cluster(load_cluster("inventories/onprem-ib/cluster.yaml"))))
        ['k8s/gpu-operator-values.yaml', 'k8s/kueue-topology.yaml', 'k8s/node-labels.yaml']
    """
    labels = node_labels(plan)
    files: dict[str, str] = {}
    if labels:
        files["k8s/node-labels.yaml"] = dump_documents(node_objects(labels))
        files["k8s/kueue-topology.yaml"] = dump_documents(kueue_objects(plan, labels))
    if any(n.gpus for n in plan.nodes) and plan.fabric is not None:
        note = (
            f"# helm install gpu-operator nvidia/gpu-operator --version {GPU_OPERATOR_VERSION} -f gpu-operator-values.yaml\n"
            f"# the host runs NVIDIA driver branch {GPU_DRIVER_BRANCH} (open kernel modules) from the gpu_driver role;"
            " GPUDirect RDMA through DMA-BUF, no nvidia-peermem\n"
        )
        files["k8s/gpu-operator-values.yaml"] = HEADER + note + yaml.safe_dump(gpu_operator_values(plan), sort_keys=False)
    return files
