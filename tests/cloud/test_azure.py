"""Azure NdCluster under Pulumi mocks: InfiniBand scale sets, planes as subnets with NSGs, Bastion, Managed Lustre."""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Any

import yaml

from fabric.cloud._args import CloudClusterArgs
from fabric.cloud.azure_nd import NdCluster
from fabric.plan import ClusterPlan
from tests.cloud.conftest import RecordingMocks, built_once, edited_plan, example_plan, register

VMSS = "azure-native:compute:VirtualMachineScaleSet"
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAtest gpufabric"


def build(plan: ClusterPlan, captured: list[str] | None = None) -> RecordingMocks:
    def program() -> None:
        cluster = NdCluster("c", CloudClusterArgs(plan=plan, ssh_public_key=KEY))
        if captured is not None:
            cluster.ansible_inventory.apply(captured.append)

    return register(program)


def built(example: str) -> RecordingMocks:
    """The example's component as registered, built once for the read-only tests of this module."""
    return built_once(f"{__name__}:{example}", lambda: build(example_plan(example)))


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
    assert "securityProfile" not in profile, "encryption at host is an option (it needs a subscription feature)"
    assert profile["storageProfile"]["imageReference"] == {"publisher": "microsoft-dsvm", "offer": "ubuntu-hpc", "sku": "2204", "version": "latest"}
    (nic,) = profile["networkProfile"]["networkInterfaceConfigurations"]
    assert nic["enableAcceleratedNetworking"] is True
    assert nic["ipConfigurations"][0]["subnet"] == {"id": "c-vnet-id/subnets/inband"}
    linux = profile["osProfile"]["linuxConfiguration"]
    assert linux["disablePasswordAuthentication"] is True
    assert linux["ssh"]["publicKeys"][0]["keyData"] == KEY


def test_vnet_keeps_clear_of_the_rdma_range_and_gives_each_plane_its_subnet_and_nsg() -> None:
    mocks = built("azure-ndv5")
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
    mocks = built("azure-ndv5")
    nsg = mocks.named("c-nsg-storage").inputs["securityRules"]
    lustre = [r for r in nsg if r["protocol"] == "Tcp"]
    assert sorted(tuple(r["destinationPortRanges"]) for r in lustre) == [("1019-1023",), ("988",)]
    assert all(r["access"] == "Allow" and r["direction"] == "Inbound" for r in lustre)
    assert all(r["sourceAddressPrefixes"] == ["10.40.0.0/22", "10.40.4.0/22"] for r in lustre)
    (amlfs,) = mocks.of_type("azure-native:storagecache:AmlFilesystem")
    assert amlfs.inputs["filesystemSubnet"] == "c-vnet-id/subnets/storage"
    assert amlfs.inputs["storageCapacityTiB"] == 16


def first_match(rules: list[dict[str, Any]], source: str, port: int) -> dict[str, Any]:
    """The inbound rule an NSG applies to tcp ``source`` → ``port``: the lowest priority number that matches wins."""

    def matches(rule: dict[str, Any]) -> bool:
        sources: list[str] = rule.get("sourceAddressPrefixes") or [rule["sourceAddressPrefix"]]
        from_source = "*" in sources or any(IPv4Network(source + "/32").subnet_of(IPv4Network(p)) for p in sources)
        ranges: list[str] = rule.get("destinationPortRanges") or [rule["destinationPortRange"]]
        on_port = any(r == "*" or int(r.split("-")[0]) <= port <= int(r.split("-")[-1]) for r in ranges)
        return rule["direction"] == "Inbound" and rule["protocol"] in ("*", "Tcp") and from_source and on_port

    return min((r for r in rules if matches(r)), key=lambda r: r["priority"])


def test_ssh_reaches_nodes_only_from_the_bastion_subnet_and_everything_else_is_denied() -> None:
    """NSG default AllowVNetInBound (65000) would let the whole VNet in: the explicit deny at 4096 ends each NSG."""
    mocks = built("azure-ndv5")
    rules = mocks.named("c-nsg-inband").inputs["securityRules"]
    assert first_match(rules, "10.40.8.5", 22)["access"] == "Allow", "from AzureBastionSubnet"
    assert first_match(rules, "10.40.1.9", 22)["access"] == "Allow", "inside the inband plane"
    assert first_match(rules, "10.40.4.9", 22) == {
        "name": "deny-all-inbound",
        "priority": 4096,
        "direction": "Inbound",
        "access": "Deny",
        "protocol": "*",
        "sourceAddressPrefix": "*",
        "sourcePortRange": "*",
        "destinationAddressPrefix": "*",
        "destinationPortRange": "*",
    }, "the storage plane cannot SSH into the nodes"
    assert first_match(rules, "192.168.7.7", 22)["access"] == "Deny", "nor a peered network"
    storage = mocks.named("c-nsg-storage").inputs["securityRules"]
    assert first_match(storage, "10.40.1.9", 988)["access"] == "Allow"
    assert first_match(storage, "10.40.1.9", 22)["access"] == "Deny"
    assert max(r["priority"] for r in rules if r["access"] == "Allow") < 4096


def test_lustre_servers_reach_the_clients_through_the_deny_all_inband_nsg() -> None:
    """Lustre servers open connections to their clients (FSx client rules: 988 / 1018-1023 from the file system); the
    inband NSG's deny-all (4096) would drop them, so the AMLFS ports are allowed from the storage subnet, nothing more."""
    mocks = built("azure-ndv5")
    rules = mocks.named("c-nsg-inband").inputs["securityRules"]
    for port in (988, 1019, 1023):
        assert first_match(rules, "10.40.4.9", port)["access"] == "Allow", f"storage subnet → client port {port}"
    assert first_match(rules, "10.40.4.9", 1018)["access"] == "Deny", "AMLFS names 1019-1023, not 1018"
    assert first_match(rules, "10.40.4.9", 22)["access"] == "Deny"
    assert first_match(rules, "192.168.7.7", 988)["access"] == "Deny", "only the storage subnet"


def test_scale_sets_get_boot_diagnostics_and_a_system_assigned_identity_with_opt_outs() -> None:
    """ARM BootDiagnostics: without storageUri "managed storage will be used"; a system identity with no role of ours."""
    for vmss in built("azure-ndv5").of_type(VMSS):
        assert vmss.inputs["virtualMachineProfile"]["diagnosticsProfile"] == {"bootDiagnostics": {"enabled": True}}
        assert vmss.inputs["identity"] == {"type": "SystemAssigned"}

    def edit(data: dict[str, Any]) -> None:
        data["azure"].update(boot_diagnostics=False, managed_identity=False)

    for vmss in build(edited_plan("azure-ndv5", edit)).of_type(VMSS):
        assert "diagnosticsProfile" not in vmss.inputs["virtualMachineProfile"]
        assert "identity" not in vmss.inputs


def test_bastion_allows_native_client_tunnels_to_private_addresses() -> None:
    mocks = built("azure-ndv5")
    (bastion,) = mocks.of_type("azure-native:network:BastionHost")
    assert bastion.inputs["ipConfigurations"][0]["subnet"] == {"id": "c-vnet-id/subnets/AzureBastionSubnet"}
    assert bastion.inputs["sku"] == {"name": "Standard"}
    assert (bastion.inputs["enableTunneling"], bastion.inputs["enableIpConnect"]) == (True, True)
    assert bastion.inputs["bastionHostName"] == "c-bastion", "the name the README's tunnel command uses"


def test_nsg_deny_opt_out_and_encryption_at_host_option() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["azure"].update(deny_vnet_inbound=False, encryption_at_host=True)

    mocks = build(edited_plan("azure-ndv5", edit))
    for nsg in mocks.of_type("azure-native:network:NetworkSecurityGroup"):
        assert all(r["access"] == "Allow" for r in nsg.inputs["securityRules"])
    assert all(s.inputs["virtualMachineProfile"]["securityProfile"] == {"encryptionAtHost": True} for s in mocks.of_type(VMSS))


def test_120_nodes_in_one_island_with_the_raised_limit() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["azure"].update(scale_set_size=120, raised_scale_set_limit=True)

    sets = scale_sets(build(edited_plan("azure-ndv5", edit)))
    gpu = {name: s["sku"]["capacity"] for name, s in sets.items() if s["tags"]["gpufabric-group"] == "gpu"}
    assert gpu == {"c-gpu-0": 120}


def test_inventory_output_groups_scale_set_vms_like_on_prem() -> None:
    captured: list[str] = []
    build(example_plan("azure-ndv5"), captured)
    source = yaml.safe_load(captured[0])
    assert source["plugin"] == "azure.azcollection.azure_rm"
    assert source["include_vmss_resource_groups"] == ["rg-gpufabric-ndv5"]
    assert {"prefix": "", "separator": "", "key": "tags['gpufabric-role']"} in source["keyed_groups"]
    assert source["hostvar_expressions"] == {
        "ansible_host": "private_ipv4_addresses | first",
        "gpufabric_target": "'azure'",
        "gpufabric_gpu_stack": "{'gpu': 'nd-ib', 'login': 'none'}.get(tags['gpufabric-group'], 'none')",
        "gpufabric_gpu_nics": "{'gpu': 8, 'login': 0}.get(tags['gpufabric-group'], 0)",
        # what roles/cloud_fabric reads back from the image's driver (node-audit.md C4): ND H100 v5 is an NVSwitch board
        "gpufabric_gpus": "{'gpu': 8, 'login': 0}.get(tags['gpufabric-group'], 0)",
        "gpufabric_nvswitch": "{'gpu': True, 'login': False}.get(tags['gpufabric-group'], False)",
        "gpufabric_nccl_env": source["hostvar_expressions"]["gpufabric_nccl_env"],
        # the AMLFS file system every VM mounts, as the mocks report its clientInfo (tests/cloud/test_shared_fs.py)
        "gpufabric_shared_fs": source["hostvar_expressions"]["gpufabric_shared_fs"],
    }
    nccl = source["hostvar_expressions"]["gpufabric_nccl_env"]
    assert nccl.startswith("{'gpu': {'NCCL_TOPO_FILE': '/opt/microsoft/ndv5-topo.xml', ")
    assert nccl.endswith("}}.get(tags['gpufabric-group'], {})")
