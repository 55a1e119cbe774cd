"""NCCL environment for the clouds' GPU fabrics (the facts the cloud inventory, Azure's component, lint and
``export nccl`` share): AWS EFA, GCP GPUDirect-TCPXO and NCCL/gIB, Azure ND InfiniBand.

The stack of each group is ``fabric.plan.cloud.stack.gpu_stack`` (the same the cloud inventories give the
``cloud_fabric`` role). Sources:

    AWS: libfabric's fi_efa(7) man page (``FI_EFA_USE_DEVICE_RDMA``: use the EFA device's RDMA read, which p4d and
    later have); the aws-ofi-nccl wiki "Environment Variables" (the plugin takes the libfabric provider from
    ``FI_PROVIDER``); aws/sagemaker-training-toolkit ``torch_distributed.py`` (``FI_EFA_USE_DEVICE_RDMA=1`` and
    ``RDMAV_FORK_SAFE=1`` on RDMA-capable instances).
    GCP A3 Mega (GPUDirect-TCPXO): GoogleCloudPlatform/cluster-toolkit@1047080,
    ``examples/machine-learning/a3-megagpu-8g/nccl-tests/run-nccl-tests.sh`` ("These parameters should not be
    modified": the FasTrak control and data interfaces of Google's A3 Mega images, the aperture-device directory) and
    ``a3-megagpu-8g/nemo-framework/Dockerfile`` (the values ``nccl-env-profile.sh`` sets: protocols, channels, chunk
    sizes, FasTrak flows, the tuner plugin and its A3 Mega configuration under ``/var/lib/tcpxo/lib64``).
    GCP A3 Ultra / A4 / A4X (NCCL/gIB over RDMA): cluster-toolkit ``a3-ultragpu-8g/nemo-framework/Dockerfile`` ("Set
    the following to match what is in /usr/local/gib/scripts/set_nccl_env.sh": ``NCCL_NET=gIB``, traffic classes
    52/84, QPs, adaptive routing, chunk sizes, the A3 Ultra tuner configuration) and ``a4-highgpu-8g/a4high-vm.yaml``
    (the same set for A4 with ``NCCL_IB_GID_INDEX=3`` and the generic tuner configuration); ``run-nccl-tests-rdma.sh``
    adds ``NCCL_NET=gIB`` after sourcing the script.
    Azure: Azure/azhpc-images, the ND v4/v5 customization scripts, which install ``/opt/microsoft/ndv{4,5}-topo.xml``
    and write ``/etc/nccl.conf`` with ``NCCL_TOPO_FILE``, ``NCCL_IB_PCI_RELAXED_ORDERING=1``,
    ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` and ``NCCL_SOCKET_IFNAME=eth0``. The VM's PCI layout is virtualised, so without
    the topology file NCCL pairs GPUs with the wrong HCAs.

Left out on purpose: ``CUDA_VISIBLE_DEVICES`` (Google's scripts set all 8 GPUs; that is the scheduler's to assign)
and ``LD_LIBRARY_PATH`` (a loader setting, not NCCL's: the ``cloud_fabric`` role puts the plugin directories on it
through ``/etc/profile.d``).
"""

from __future__ import annotations

from fabric.plan.cloud.stack import gpu_stack
from fabric.plan.cloud.types import CloudGroupPlan

# The ND sizes whose topology file the Azure HPC images install (Azure/azhpc-images topology/ and customizations).
AZURE_TOPOLOGY_FILES = {
    "Standard_ND96asr_A100_v4": "/opt/microsoft/ndv4-topo.xml",
    "Standard_ND96amsr_A100_v4": "/opt/microsoft/ndv4-topo.xml",
    "Standard_ND96isr_H100_v5": "/opt/microsoft/ndv5-topo.xml",
    "Standard_ND96isr_H200_v5": "/opt/microsoft/ndv5-topo.xml",
}
# A3 Mega interface names on Google's images (run-nccl-tests.sh): the control NIC and the 8 GPU NICs in order.
TCPXO_CTRL_DEV = "enp0s12"
TCPXO_GPU_NICS = ("enp6s0", "enp7s0", "enp13s0", "enp14s0", "enp134s0", "enp135s0", "enp141s0", "enp142s0")
TCPXO_LIB = "/var/lib/tcpxo/lib64"
# gIB's tuner configuration per machine type (cluster-toolkit: tuner_config_a3u.txtpb for A3 Ultra; A4's VM blueprint
# uses the generic tuner_config.txtpb, and so does every other gIB type here).
GIB_TUNER_CONFIGS = {"a3-ultragpu-8g": "/usr/local/gib/configs/tuner_config_a3u.txtpb"}
GIB_TUNER_DEFAULT = "/usr/local/gib/configs/tuner_config.txtpb"


def _efa(group: CloudGroupPlan) -> dict[str, str]:
    del group
    return {
        "FI_PROVIDER": "efa",  # libfabric's EFA provider; aws-ofi-nccl (NCCL's net plugin on EFA) follows FI_PROVIDER
        "FI_EFA_USE_DEVICE_RDMA": "1",  # the EFA device's RDMA read (fi_efa(7)): every EFA GPU type in the catalog has it
        "RDMAV_FORK_SAFE": "1",  # rdma-core: fork() in the training process does not corrupt registered memory
    }


def _tcpxo(group: CloudGroupPlan) -> dict[str, str]:
    nics = gpu_stack("gcp", group)[1]
    return {
        "NCCL_FASTRAK_CTRL_DEV": TCPXO_CTRL_DEV,
        "NCCL_FASTRAK_IFNAME": ",".join(TCPXO_GPU_NICS[:nics]),
        "NCCL_SOCKET_IFNAME": TCPXO_CTRL_DEV,
        "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY": "/dev/aperture_devices",
        "NCCL_FASTRAK_USE_LLCM": "1",
        "NCCL_FASTRAK_USE_SNAP": "1",
        "NCCL_FASTRAK_NUM_FLOWS": "2",
        "NCCL_FASTRAK_ENABLE_CONTROL_CHANNEL": "0",
        "NCCL_FASTRAK_ENABLE_HOTPATH_LOGGING": "0",
        "NCCL_FASTRAK_PLUGIN_ACCEPT_TIMEOUT_MS": "600000",
        "NCCL_CROSS_NIC": "0",
        "NCCL_PROTO": "Simple,LL128",
        "NCCL_MIN_NCHANNELS": "4",
        "NCCL_P2P_NET_CHUNKSIZE": "524288",
        "NCCL_P2P_PCI_CHUNKSIZE": "524288",
        "NCCL_P2P_NVL_CHUNKSIZE": "1048576",
        "NCCL_BUFFSIZE": "8388608",
        "NCCL_NET_GDR_LEVEL": "PIX",
        "NCCL_TUNER_PLUGIN": "libnccl-tuner.so",
        "NCCL_TUNER_CONFIG_PATH": f"{TCPXO_LIB}/a3plus_tuner_config.textproto",
        "NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE": f"{TCPXO_LIB}/a3plus_guest_config.textproto",
    }


def _gib(group: CloudGroupPlan) -> dict[str, str]:
    return {
        "NCCL_NET": "gIB",  # Google's gIB net plugin, not NCCL's own IB transport
        "NCCL_CROSS_NIC": "0",
        "NCCL_NET_GDR_LEVEL": "PIX",
        "NCCL_P2P_NET_CHUNKSIZE": "131072",
        "NCCL_NVLS_CHUNKSIZE": "524288",
        "NCCL_IB_GID_INDEX": "3",
        "NCCL_IB_ADAPTIVE_ROUTING": "1",
        "NCCL_IB_QPS_PER_CONNECTION": "4",
        "NCCL_IB_TC": "52",  # the traffic classes of Google's RoCE VPCs (data, and the FIFO/control messages)
        "NCCL_IB_FIFO_TC": "84",
        "NCCL_TUNER_CONFIG_PATH": GIB_TUNER_CONFIGS.get(group.instance_type, GIB_TUNER_DEFAULT),
    }


def _nd(group: CloudGroupPlan) -> dict[str, str]:
    return {
        "NCCL_TOPO_FILE": AZURE_TOPOLOGY_FILES.get(group.instance_type, "/opt/microsoft/ndv5-topo.xml"),
        "NCCL_IB_PCI_RELAXED_ORDERING": "1",
        "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
        "NCCL_SOCKET_IFNAME": "eth0",
    }


BUILDERS = {"efa": _efa, "tcpxo": _tcpxo, "gib": _gib, "nd-ib": _nd}

CONTRACT_KEYS: dict[str, tuple[str, ...]] = {
    "efa": ("FI_PROVIDER",),
    "tcpxo": ("NCCL_FASTRAK_CTRL_DEV", "NCCL_FASTRAK_IFNAME", "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY"),
    "gib": ("NCCL_NET", "NCCL_IB_GID_INDEX", "NCCL_IB_TC", "NCCL_IB_FIFO_TC"),
    "nd-ib": ("NCCL_TOPO_FILE",),
}
"""Per stack, the variables that tie NCCL to the fabric (lint checks them): the provider, the interfaces, the traffic
classes, the topology. The others are tuning and may be changed by hand."""


def cloud_nccl_env(provider: str, group: CloudGroupPlan) -> dict[str, str] | None:
    """The NCCL variables of one cloud node group, or None where its nodes have no GPU fabric.

    Example:
        >>> from fabric.model import load_cluster
        >>> from fabric.plan import plan_cluster
        >>> cloud = plan_cluster(load_cluster("inventories/gcp-a3ultra/cluster.yaml")).cloud
        >>> env = cloud_nccl_env(cloud.provider, cloud.groups[0])
        >>> env["NCCL_NET"], env["NCCL_IB_TC"], env["NCCL_TUNER_CONFIG_PATH"]
        ('gIB', '52', '/usr/local/gib/configs/tuner_config_a3u.txtpb')
    """
    stack = gpu_stack(provider, group)[0]
    build = BUILDERS.get(stack)
    return build(group) if build is not None else None
