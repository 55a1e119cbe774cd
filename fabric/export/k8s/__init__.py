"""Kubernetes: the NVIDIA Network Operator's objects for the compute rails, derived from the plan (pure: plan → YAML).

What is written and why (sources in docs/workload.md, ``k8s``):

- ``k8s/nic-cluster-policy.yaml``: a ``NicClusterPolicy`` (mellanox.com/v1alpha1, Network Operator v26.4.1
  ``config/crd/bases/mellanox.com_nicclusterpolicies.yaml``) with the SR-IOV network device plugin exposing each
  rail's physical function as its own resource ``nvidia.com/rail<N>`` (selected by PCI address: the plugin's
  ``pfNames`` matches only VFs, ``GetPfName`` returns "" for a PF — sriov-network-device-plugin
  ``pkg/utils/utils.go``), Multus and the CNI plugins, and nv-ipam on Ethernet. No ``ofedDriver``: the
  ``rdma_stack`` role installs DOCA on the host, and a second driver container would fight it.
- ``k8s/networks.yaml``: one ``HostDeviceNetwork`` per rail: the pod gets the whole PF with its RDMA device
  (GPUDirect RDMA at line rate, the PF's PFC/ECN/trust settings from ``nic_qos`` intact).
- ``k8s/ip-pools.yaml`` (RoCE): one nv-ipam ``CIDRPool`` per rail with each node's planned /31 as a static
  allocation and the leaf's end as its gateway, so the pod gets exactly the address the fabric routes.
  InfiniBand rails get no IPAM: NCCL speaks verbs over the subnet manager's LIDs, and bootstraps over
  ``NCCL_SOCKET_IFNAME`` (in-band), so the IB netdev needs no address in the pod.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections import defaultdict

from fabric.errors import Finding, InputError
from fabric.export.k8s.documents import dump_documents
from fabric.export.k8s.topology import export_scheduling
from fabric.plan.compute.planes import fabric_plane_cidrs, plane_of
from fabric.plan.types import ClusterPlan, HostInterface, NodePlan

NETWORK_OPERATOR_NAMESPACE = "nvidia-network-operator"  # where nv-ipam watches pools (network-operator example/crs)
POD_NAMESPACE = "default"  # HostDeviceNetwork.spec.networkNamespace: where the NetworkAttachmentDefinitions appear
# Network Operator v26.4.1 component images (example/crs/mellanox.com_v1alpha1_nicclusterpolicy_cr-nvidia-ipam.yaml @ v26.4.1).
IMAGE_REPOSITORY = "nvcr.io/nvidia/mellanox"
IMAGE_VERSION = "network-operator-v26.4.1"
RESOURCE_PREFIX = "nvidia.com"
MELLANOX_VENDOR = "15b3"  # PCI vendor ID of Mellanox/NVIDIA networking (pci.ids)
# systemd's predictable names for PCI devices: en/ib + [P<domain>]p<bus>s<slot>[f<function>][np<port>]; "The PCI domain is
# only prepended when it is not 0", in decimal (systemd.net-naming-scheme(7)): a GB200 tray's 0010:03:00.0 is ibP16p3s0.
_PCI_NAME = re.compile(r"^(?:en|ib)(?:P(\d+))?p(\d+)s(\d+)(?:f(\d+))?(?:np\d+)?$")


def pci_address(interface: HostInterface) -> str:
    """The PCI address of a port named by systemd's predictable scheme, its PCI domain included.

    Example:
        >>> from fabric.plan.types import HostInterface
        >>> pci_address(HostInterface("enp220s0np0", "compute", 7, 400, 9000, "ethernet"))
        '0000:dc:00.0'
        >>> pci_address(HostInterface("ibP16p3s0", "compute", 2, 400, 4092, "infiniband"))
        '0010:03:00.0'

    Raises:
        InputError: the name does not carry its PCI bus (set the profile's ``pci_buses`` so names derive from them).
    """
    match = _PCI_NAME.match(interface.name)
    if match is None:
        msg = (
            f"{interface.name!r} (compute port {interface.index}) does not name its PCI bus (systemd's enp<bus>s<slot>…); "
            "the SR-IOV device plugin selects a rail's PF by PCI address: give the profile pci_buses, not fixed names"
        )
        raise InputError([Finding(("nodes",), msg)])
    domain, bus, slot, function = (int(match.group(i) or 0) for i in (1, 2, 3, 4))
    return f"{domain:04x}:{bus:02x}:{slot:02x}.{function}"


RailKey = tuple[int, int]
"""(compute plane, rail): plane 0 on a one-plane fabric, k on plane k of a multi-plane one (fabric.plan.compute.planes)."""


def rail_name(key: RailKey) -> str:
    """The rail's resource and network name: ``rail3``, or ``p2-rail3`` on plane 2 of a multi-plane fabric.

    Example:
        >>> rail_name((0, 3)), rail_name((2, 3))
        ('rail3', 'p2-rail3')
    """
    plane, rail = key
    return f"p{plane}-rail{rail}" if plane else f"rail{rail}"


def rail_ports(plan: ClusterPlan) -> dict[RailKey, list[tuple[NodePlan, HostInterface]]]:
    """(plane, rail) → (node, port) for every RDMA compute port of a GPU node, nodes in plan order.

    A multi-plane fabric's rails are counted per plane (rail 1 of plane 1 and rail 1 of plane 2 are different leaves,
    addresses and routes), so each plane's rail is its own resource, network and pool.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> [rail_name(k) for k in rail_ports(plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml")))][:3]
        ['rail1', 'rail2', 'rail3']
    """
    rails: dict[RailKey, list[tuple[NodePlan, HostInterface]]] = defaultdict(list)
    for node in plan.nodes:
        if node.role != "gpu":
            continue
        for port in node.interfaces:
            if port.plane == "compute" and port.hca is not None:
                rails[(plane_of(port.switch) or 0, port.rail or port.index + 1)].append((node, port))
    return dict(sorted(rails.items()))


def _image(name: str) -> dict[str, str]:
    return {"image": name, "repository": IMAGE_REPOSITORY, "version": IMAGE_VERSION}


def nic_cluster_policy(plan: ClusterPlan, rails: dict[RailKey, list[tuple[NodePlan, HostInterface]]]) -> dict[str, object]:
    """The ``NicClusterPolicy``: one device-plugin resource per rail, Multus, CNI plugins, nv-ipam on Ethernet."""
    resources = [
        {
            "resourcePrefix": RESOURCE_PREFIX,
            "resourceName": rail_name(rail),
            "selectors": {"vendors": [MELLANOX_VENDOR], "pciAddresses": sorted({pci_address(p) for _, p in ports}), "isRdma": True},
        }
        for rail, ports in rails.items()
    ]
    spec: dict[str, object] = {
        "sriovDevicePlugin": {**_image("sriov-network-device-plugin"), "config": json.dumps({"resourceList": resources}, indent=2) + "\n"},
        "secondaryNetwork": {"cniPlugins": _image("plugins"), "multus": _image("multus-cni")},
    }
    if _is_roce(plan):
        spec["nvIpam"] = {**_image("nvidia-k8s-ipam"), "enableWebhook": False}
    return {"apiVersion": "mellanox.com/v1alpha1", "kind": "NicClusterPolicy", "metadata": {"name": "nic-cluster-policy"}, "spec": spec}


def _is_roce(plan: ClusterPlan) -> bool:
    return plan.fabric is not None and plan.fabric.link_layer == "ethernet"


def host_device_networks(plan: ClusterPlan, rails: dict[RailKey, list[tuple[NodePlan, HostInterface]]]) -> list[dict[str, object]]:
    """One ``HostDeviceNetwork`` per rail, on the rail's resource; RoCE rails take their address from the rail's pool."""
    networks: list[dict[str, object]] = []
    for rail in rails:
        name = rail_name(rail)
        spec: dict[str, object] = {"networkNamespace": POD_NAMESPACE, "resourceName": name}
        if _is_roce(plan):
            spec["ipam"] = json.dumps({"type": "nv-ipam", "poolName": f"{plan.name}-{name}", "poolType": "cidrpool"})
        networks.append({"apiVersion": "mellanox.com/v1alpha1", "kind": "HostDeviceNetwork", "metadata": {"name": name}, "spec": spec})
    return networks


def cidr_pools(plan: ClusterPlan, rails: dict[RailKey, list[tuple[NodePlan, HostInterface]]]) -> list[dict[str, object]]:
    """One nv-ipam ``CIDRPool`` per RoCE rail: the compute plane's range, each node's /31 pinned with the leaf as gateway.

    Raises:
        InputError: a compute port has no routed /31 (address and peer), which host-routed RoCE rails need.
    """
    compute = next(p for p in plan.planes if p.name == "compute")
    blocks = fabric_plane_cidrs(plan)  # a multi-plane rail's range is its plane's block: no pod route reaches another plane
    pools: list[dict[str, object]] = []
    for rail, ports in rails.items():
        cidr = blocks.get(rail[0], compute.cidr)
        allocations: list[dict[str, str]] = []
        for node, port in ports:
            if port.address is None or port.peer_address is None or ipaddress.ip_interface(port.address).network.prefixlen != 31:
                msg = (
                    f"{node.hostname} {port.name}: rail {rail_name(rail)} has no routed /31 (address and leaf peer); nv-ipam pins each node's prefix"
                )
                raise InputError([Finding(("nodes",), msg)])
            prefix = ipaddress.ip_interface(port.address).network
            allocations.append({"nodeName": node.hostname, "prefix": str(prefix), "gateway": port.peer_address})
        spec = {
            "cidr": cidr,
            "perNodeNetworkPrefix": 31,
            "staticAllocations": allocations,
            # Other nodes' ports on this rail sit behind the leaf: route the compute range (the plane's block) through it.
            "routes": [{"dst": cidr}],
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [n.hostname for n, _ in ports]}]}
                ]
            },
        }
        pools.append(
            {
                "apiVersion": "nv-ipam.nvidia.com/v1alpha1",
                "kind": "CIDRPool",
                "metadata": {"name": f"{plan.name}-{rail_name(rail)}", "namespace": NETWORK_OPERATOR_NAMESPACE},
                "spec": spec,
            }
        )
    return pools


def export_network_operator(plan: ClusterPlan) -> dict[str, str]:
    """``k8s/nic-cluster-policy.yaml``, ``k8s/networks.yaml`` and (RoCE) ``k8s/ip-pools.yaml``; empty without RDMA rails.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> sorted(export_network_operator(plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml"))))
        ['k8s/ip-pools.yaml', 'k8s/networks.yaml', 'k8s/nic-cluster-policy.yaml']
    """
    rails = rail_ports(plan)
    if plan.fabric is None or not rails:
        return {}
    files = {
        "k8s/nic-cluster-policy.yaml": dump_documents([nic_cluster_policy(plan, rails)]),
        "k8s/networks.yaml": dump_documents(host_device_networks(plan, rails)),
    }
    if _is_roce(plan):
        files["k8s/ip-pools.yaml"] = dump_documents(cidr_pools(plan, rails))
    return files


def export_k8s(plan: ClusterPlan) -> dict[str, str]:
    """Every Kubernetes file: the Network Operator's objects, node labels, Kueue's topology, GPU Operator values.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> len(export_k8s(plan_cluster(load_cluster("inventories/onprem-roce/cluster.yaml"))))
        6
    """
    return dict(sorted({**export_network_operator(plan), **export_scheduling(plan)}.items()))
