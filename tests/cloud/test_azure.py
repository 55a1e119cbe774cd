"""Azure NdCluster under Pulumi mocks: InfiniBand scale sets, planes as subnets with NSGs, Bastion, Managed Lustre."""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Any

import yaml

from fabric.cloud._args import CloudClusterArgs
from fabric.cloud.azure_nd import NdCluster
from fabric.plan import ClusterPlan
from tests.cloud.conftest import RecordingMocks, edited_plan, example_plan, register

VMSS = "azure-native:compute:VirtualMachineScaleSet"
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAtest gpufabric"


def build(plan: ClusterPlan, captured: list[str] | None = None) -> RecordingMocks:
    def program() -> None:
        cluster = NdCluster("c", CloudClusterArgs(plan=plan, ssh_public_key=KEY))
        if captured is not None:
            cluster.ansible_inventory.apply(captured.append)

    return register(program)


def scale_sets(mocks: RecordingMocks) -> dict[str, dict[str, Any]]:
    return {r.name: r.inputs for r in mocks.of_type(VMSS)}


def test_120_nodes_become_two_infiniband_groups_of_100_and_20() -> None:
    sets = scale_sets(build(example_plan("azure-ndv5")))
    gpu = {name: s for name, s in sets.items() if s["tags"]["gpufabric-group"] == "gpu"}
    assert {name: s["sku"]["capacity"] for name, s in gpu.items()} == {"c-gpu-0": 100, "c-gpu-1": 20}
    assert sorted(s["tags"]["gpufabric-ib-group"] for s in gpu.values()) == ["1", "2"]
    for s in gpu.values():
        assert s["sku"]["name"] == "Standard_ND96isr_H100_v5"
        assert (s["singlePlacementGroup"], s["platformFaultDomainCount"], s["overprovision"]) == (True, 1, False)
        assert s["orchestrationMode"] == "Uniform"
        assert s["upgradePolicy"] == {"mode": "Manual"}
        assert s["proximityPlacementGroup"] == {"id": "c-ppg-id"}


def test_scale_set_size_is_the_split_point() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["azure"]["scale_set_size"] = 50

    sets = scale_sets(build(edited_plan("azure-ndv5", edit)))
    assert sorted(s["sku"]["capacity"] for s in sets.values() if s["tags"]["gpufabric-group"] == "gpu") == [20, 50, 50]


def test_vms_use_the_gen2_hpc_image_accelerated_networking_and_key_only_ssh() -> None:
    profile = scale_sets(build(example_plan("azure-ndv5")))["c-gpu-0"]["virtualMachineProfile"]
    assert profile["storageProfile"]["imageReference"] == {"publisher": "microsoft-dsvm", "offer": "ubuntu-hpc", "sku": "2204", "version": "latest"}
    (nic,) = profile["networkProfile"]["networkInterfaceConfigurations"]
    assert nic["enableAcceleratedNetworking"] is True
    assert nic["ipConfigurations"][0]["subnet"] == {"id": "c-vnet-id/subnets/inband"}
    linux = profile["osProfile"]["linuxConfiguration"]
    assert linux["disablePasswordAuthentication"] is True
    assert linux["ssh"]["publicKeys"][0]["keyData"] == KEY


def test_vnet_keeps_clear_of_the_rdma_range_and_gives_each_plane_its_subnet_and_nsg() -> None:
    mocks = build(example_plan("azure-ndv5"))
    (vnet,) = mocks.of_type("azure-native:network:VirtualNetwork")
    prefixes = [IPv4Network(p) for p in vnet.inputs["addressSpace"]["addressPrefixes"]]
    assert not any(p.overlaps(IPv4Network("172.16.0.0/16")) for p in prefixes)
    subnets = {s["name"]: s for s in vnet.inputs["subnets"]}
    assert sorted(subnets) == ["AzureBastionSubnet", "inband", "storage"]
    assert subnets["inband"]["networkSecurityGroup"] == {"id": "c-nsg-inband-id"}
    assert subnets["storage"]["networkSecurityGroup"] == {"id": "c-nsg-storage-id"}
    assert "networkSecurityGroup" not in subnets["AzureBastionSubnet"], "Azure Bastion manages its own subnet rules"
    assert [k for k, s in subnets.items() if "natGateway" in s] == ["inband"]


def test_storage_nsg_opens_the_lustre_ports_and_amlfs_sits_on_the_storage_subnet() -> None:
    mocks = build(example_plan("azure-ndv5"))
    nsg = mocks.named("c-nsg-storage").inputs["securityRules"]
    assert sorted(tuple(r["destinationPortRanges"]) for r in nsg) == [("1019-1023",), ("988",)]
    assert all(r["access"] == "Allow" and r["direction"] == "Inbound" and r["protocol"] == "Tcp" for r in nsg)
    (amlfs,) = mocks.of_type("azure-native:storagecache:AmlFilesystem")
    assert amlfs.inputs["filesystemSubnet"] == "c-vnet-id/subnets/storage"
    assert amlfs.inputs["storageCapacityTiB"] == 16


def test_ssh_reaches_nodes_only_from_the_bastion_subnet() -> None:
    mocks = build(example_plan("azure-ndv5"))
    ssh = [r for r in mocks.named("c-nsg-inband").inputs["securityRules"] if r.get("destinationPortRanges") == ["22"]]
    assert [r["sourceAddressPrefixes"] for r in ssh] == [["10.40.8.0/26"]]
    (bastion,) = mocks.of_type("azure-native:network:BastionHost")
    assert bastion.inputs["ipConfigurations"][0]["subnet"] == {"id": "c-vnet-id/subnets/AzureBastionSubnet"}


def test_inventory_output_groups_scale_set_vms_like_on_prem() -> None:
    captured: list[str] = []
    build(example_plan("azure-ndv5"), captured)
    source = yaml.safe_load(captured[0])
    assert source["plugin"] == "azure.azcollection.azure_rm"
    assert source["include_vmss_resource_groups"] == ["rg-gpufabric-ndv5"]
    assert {"prefix": "", "separator": "", "key": "tags['gpufabric-role']"} in source["keyed_groups"]
