"""The NIC Configuration Operator's Spectrum-X settings: ``k8s/nic-configuration.yaml``, one ``NicConfigurationTemplate``
(configuration.net.nvidia.com/v1alpha1; CRD ``config/crd/bases/configuration.net.nvidia.com_nicconfigurationtemplates.yaml``
of Mellanox/nic-configuration-operator at tag network-operator-v26.4.1, the operator Network Operator v26.4.1 deploys).

``spectrumXOptimized`` carries the multi-plane settings: ``multiplaneMode`` (none, swplb, hwplb) and ``numberOfPlanes``
(1, 2, 4) follow ``fabric.planes``; one plane is ``none`` with 1 plane, as the CRD's CEL rules demand. The CRD enables
Spectrum-X only with ``linkType: Ethernet`` and ``numVfs: 1`` and only on ConnectX-8 (1023), ConnectX-9 (1025) or
BlueField-3 SuperNIC (a2dc), which ``fabric.spectrum_x.nic_type`` names (NVIDIA Network Operator 26.4.0 documentation,
"Software Multiplane Spectrum-X Quick Start": "Each SuperNIC is split into multiple PFs, each assigned to a separate
plane", nicType 1023). It is read from the definition (the plan carries no NIC firmware settings), so ``export k8s``
adds it beside the plan's objects.
"""

from __future__ import annotations

from fabric.errors import Finding, InputError
from fabric.export.k8s.documents import dump_documents
from fabric.model.cluster import ClusterSpec

NETWORK_OPERATOR_NAMESPACE = "nvidia-network-operator"


def nic_configuration(spec: ClusterSpec) -> dict[str, str]:
    """``k8s/nic-configuration.yaml`` when the definition sets ``fabric.spectrum_x``; empty otherwise.

    Raises:
        InputError: Spectrum-X on a compute plane that is not RoCE (Spectrum-X is an Ethernet fabric).

    Example:
        >>> from fabric.model import load_cluster
        >>> nic_configuration(load_cluster("inventories/onprem-roce/cluster.yaml"))
        {}
    """
    fabric = spec.fabric
    if fabric is None or fabric.spectrum_x is None:
        return {}
    if spec.planes.compute.transport != "roce":
        msg = f"fabric.spectrum_x configures Ethernet NICs, but the compute plane runs {spec.planes.compute.transport}; drop spectrum_x"
        raise InputError([Finding(("fabric", "spectrum_x"), msg)])
    sx = fabric.spectrum_x
    multi = fabric.planes > 1
    document: dict[str, object] = {
        "apiVersion": "configuration.net.nvidia.com/v1alpha1",
        "kind": "NicConfigurationTemplate",
        "metadata": {"name": f"{spec.name}-spectrum-x", "namespace": NETWORK_OPERATOR_NAMESPACE},
        "spec": {
            "nicSelector": {"nicType": sx.nic_type},
            "template": {
                "numVfs": 1,
                "linkType": "Ethernet",
                "spectrumXOptimized": {
                    "enabled": True,
                    "version": sx.version,
                    "multiplaneMode": sx.multiplane_mode if multi else "none",
                    "numberOfPlanes": fabric.planes,
                },
            },
        },
    }
    return {"k8s/nic-configuration.yaml": dump_documents([document])}
