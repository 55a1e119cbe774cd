"""The Kubernetes export against the operators' published schemas (tests/data/crds/SOURCES.md) and the plan's facts:
every object of every example validates against its CRD (closed: an unknown key is an error), the CEL rules a
JSON Schema validator skips are checked by hand, the GPU Operator values exist in the chart and fit the
ClusterPolicy, and the rails, addresses and labels are the plan's."""

from __future__ import annotations

import copy
import ipaddress
import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft7Validator

from fabric.errors import InputError
from fabric.export import export_k8s
from fabric.export.k8s import pci_address
from fabric.export.k8s.topology import GPU_DRIVER_BRANCH, HOST_LABEL
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.plan.types import ClusterPlan, HostInterface
from tests.conftest import DATA, EXAMPLES, ROOT

CRDS = DATA / "crds"
CRD_FILES = {
    ("mellanox.com", "NicClusterPolicy"): "mellanox.com_nicclusterpolicies.yaml",
    ("mellanox.com", "HostDeviceNetwork"): "mellanox.com_hostdevicenetworks.yaml",
    ("nv-ipam.nvidia.com", "CIDRPool"): "nv-ipam.nvidia.com_cidrpools.yaml",
    ("kueue.x-k8s.io", "Topology"): "kueue.x-k8s.io_topologies.yaml",
    ("kueue.x-k8s.io", "ResourceFlavor"): "kueue.x-k8s.io_resourceflavors.yaml",
}
RFC1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")  # API server object names


def _closed(schema: Any) -> Any:
    """The schema with unknown fields refused (kubectl --validate=strict), except where the CRD preserves them."""
    if isinstance(schema, dict):
        out = {k: _closed(v) for k, v in schema.items()}
        if "properties" in out and "additionalProperties" not in out and not out.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_closed(v) for v in schema]
    return schema


@cache
def _validator(group: str, kind: str, version: str) -> Draft7Validator:
    crd = yaml.safe_load((CRDS / CRD_FILES[(group, kind)]).read_text(encoding="utf-8"))
    assert crd["spec"]["group"] == group
    assert crd["spec"]["names"]["kind"] == kind
    served = {v["name"]: v for v in crd["spec"]["versions"] if v["served"]}
    assert version in served, f"{kind}: {group}/{version} is not served by the CRD (served: {sorted(served)})"
    return Draft7Validator(_closed(served[version]["schema"]["openAPIV3Schema"]))


def crd_errors(document: dict[str, Any]) -> list[str]:
    """Every problem of one object against its CRD, the CEL rules we rely on and the name rule."""
    group, version = document["apiVersion"].split("/")
    kind = document["kind"]
    problems = [f"{kind} {'.'.join(map(str, e.absolute_path))}: {e.message}" for e in _validator(group, kind, version).iter_errors(document)]
    if not RFC1123_SUBDOMAIN.match(document["metadata"]["name"]):
        problems.append(f"{kind}: metadata.name {document['metadata']['name']!r} is not an RFC 1123 subdomain")
    if kind == "Topology":  # CEL: kubernetes.io/hostname may only be the last level
        levels = [level["nodeLabel"] for level in document["spec"]["levels"]]
        if HOST_LABEL in levels[:-1]:
            problems.append(f"Topology: {HOST_LABEL} must be the last level, found {levels}")
    if kind == "ResourceFlavor" and "topologyName" in document["spec"] and not document["spec"].get("nodeLabels"):
        problems.append("ResourceFlavor: topologyName needs nodeLabels (CEL rule)")
    return problems


def plan_of(name: str) -> ClusterPlan:
    return plan_cluster(load_cluster(ROOT / "inventories" / name / "cluster.yaml"))


def documents(files: dict[str, str], name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(files[f"k8s/{name}"]) if d is not None]


MORE = [DATA / "plan/three-tier/cluster.yaml", DATA / "plan/reference-2x400/cluster.yaml", DATA / "export/nvl72.yaml"]


@pytest.mark.parametrize("example", [*EXAMPLES, *MORE], ids=lambda p: p.parent.name if p.name == "cluster.yaml" else p.stem)
def test_every_custom_resource_validates_against_its_published_crd(example: Path) -> None:
    files = export_k8s(plan_cluster(load_cluster(example)))
    checked = 0
    for relative, text in files.items():
        if relative.endswith("gpu-operator-values.yaml"):
            continue
        for document in yaml.safe_load_all(text):
            if document["kind"] == "Node":
                assert RFC1123_SUBDOMAIN.match(document["metadata"]["name"])
                continue
            assert crd_errors(document) == [], relative
            checked += 1
    assert checked > 0 or not files


def test_the_validator_refuses_a_misspelt_key_a_missing_field_and_hostname_not_last() -> None:
    files = export_k8s(plan_of("onprem-roce"))
    policy = documents(files, "nic-cluster-policy.yaml")[0]
    bad = copy.deepcopy(policy)
    bad["spec"]["sriovDevicePlugins"] = bad["spec"].pop("sriovDevicePlugin")
    assert crd_errors(bad) == ["NicClusterPolicy spec: Additional properties are not allowed ('sriovDevicePlugins' was unexpected)"]
    pool = copy.deepcopy(documents(files, "ip-pools.yaml")[0])
    del pool["spec"]["perNodeNetworkPrefix"]
    assert crd_errors(pool) == ["CIDRPool spec: 'perNodeNetworkPrefix' is a required property"]
    topology = copy.deepcopy(documents(files, "kueue-topology.yaml")[0])
    topology["spec"]["levels"].reverse()
    assert [p for p in crd_errors(topology) if "last level" in p]


def test_gpu_operator_values_exist_in_the_chart_and_fit_the_cluster_policy() -> None:
    values = yaml.safe_load(export_k8s(plan_of("onprem-roce"))["k8s/gpu-operator-values.yaml"])
    chart = yaml.safe_load((CRDS / "gpu-operator-values.yaml").read_text(encoding="utf-8"))

    def paths(tree: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
        return [p for k, v in tree.items() for p in (paths(v, (*prefix, k)) if isinstance(v, dict) and v else [(*prefix, k)])]

    for path in paths(values):
        node: Any = chart
        for key in path:
            assert isinstance(node, dict), f"{'.'.join(path)}: the chart's value above {key!r} is not a mapping"
            assert key in node, f"{'.'.join(path)} is not a value of the gpu-operator chart"
            node = node[key]
        assert type(node) is type(values_at(values, path)), f"{'.'.join(path)}: the chart's default is a {type(node).__name__}"
    crd = yaml.safe_load((CRDS / "nvidia.com_clusterpolicies.yaml").read_text(encoding="utf-8"))
    spec = next(v for v in crd["spec"]["versions"] if v["served"])["schema"]["openAPIV3Schema"]["properties"]["spec"]
    for section, body in values.items():  # the chart copies these sections into ClusterPolicy.spec under the same keys
        schema = _closed(spec["properties"][section])
        schema.pop("required", None)  # the chart fills the image fields the CRD requires from its own defaults
        assert [e.message for e in Draft7Validator(schema).iter_errors(body)] == [], section


def values_at(tree: dict[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = tree
    for key in path:
        node = node[key]
    return node


def test_gpu_operator_values_match_the_roles() -> None:
    defaults = yaml.safe_load((ROOT / "roles/gpu_driver/defaults/main.yml").read_text(encoding="utf-8"))
    assert defaults["gpu_driver_branch"] == GPU_DRIVER_BRANCH
    assert defaults["gpu_driver_open_kernel_modules"] is True
    assert defaults["gpu_driver_gpudirect"] in {"auto", "dmabuf"}  # DMA-BUF: the operator must not load nvidia-peermem
    values = yaml.safe_load(export_k8s(plan_of("onprem-roce"))["k8s/gpu-operator-values.yaml"])
    assert values["driver"] == {"enabled": False, "rdma": {"enabled": False}}


def test_one_resource_and_network_per_rail_with_the_rails_pci_functions() -> None:
    plan = plan_of("onprem-roce")
    files = export_k8s(plan)
    config = json.loads(documents(files, "nic-cluster-policy.yaml")[0]["spec"]["sriovDevicePlugin"]["config"])
    by_rail = {r["resourceName"]: r["selectors"]["pciAddresses"] for r in config["resourceList"]}
    # dgx-h100: GPU/rail N's port on the buses of the DGX H100 user guide's table (24, 64, 79, 94, 154, 192, 206, 220)
    assert by_rail == {f"rail{n + 1}": [f"0000:{bus:02x}:00.0"] for n, bus in enumerate((24, 64, 79, 94, 154, 192, 206, 220))}
    networks = documents(files, "networks.yaml")
    assert [(n["metadata"]["name"], n["spec"]["resourceName"]) for n in networks] == [(f"rail{n}", f"rail{n}") for n in range(1, 9)]
    assert json.loads(networks[0]["spec"]["ipam"]) == {"type": "nv-ipam", "poolName": "pod-a-rail1", "poolType": "cidrpool"}


def test_each_node_gets_its_planned_slash31_with_the_leaf_as_gateway() -> None:
    plan = plan_of("onprem-roce")
    pools = {p["metadata"]["name"]: p["spec"] for p in documents(export_k8s(plan), "ip-pools.yaml")}
    compute = ipaddress.IPv4Network("10.100.0.0/16")
    for node in (n for n in plan.nodes if n.role == "gpu"):
        for port in (i for i in node.interfaces if i.plane == "compute"):
            spec = pools[f"pod-a-rail{port.rail}"]
            pinned = {a["nodeName"]: a for a in spec["staticAllocations"]}[node.hostname]
            assert port.address is not None
            assert port.address.endswith("/31")
            assert ipaddress.ip_interface(port.address).network == ipaddress.ip_network(pinned["prefix"])
            assert pinned["gateway"] == port.peer_address
            assert ipaddress.IPv4Network(pinned["prefix"]).subnet_of(compute)
    assert {s["cidr"] for s in pools.values()} == {"10.100.0.0/16"}


def test_infiniband_rails_carry_no_ipam_and_no_pool_file() -> None:
    files = export_k8s(plan_of("onprem-ib"))
    assert "k8s/ip-pools.yaml" not in files
    assert all("ipam" not in n["spec"] for n in documents(files, "networks.yaml"))
    assert "nvIpam" not in documents(files, "nic-cluster-policy.yaml")[0]["spec"]


def test_labels_put_each_unit_under_one_block_and_kueue_levels_follow_them() -> None:
    files = export_k8s(plan_of("onprem-roce"))
    labels = {d["metadata"]["name"]: d["metadata"]["labels"] for d in documents(files, "node-labels.yaml")}
    assert len(labels) == 64
    assert labels["gpu032"]["topology.gpufabric.io/scalable-unit"] == "su01"
    assert labels["gpu033"]["topology.gpufabric.io/scalable-unit"] == "su02"
    topology, flavor = documents(files, "kueue-topology.yaml")
    levels = [level["nodeLabel"] for level in topology["spec"]["levels"]]
    assert levels == ["topology.gpufabric.io/spine-block", "topology.gpufabric.io/scalable-unit", HOST_LABEL]
    assert all(set(node) == set(levels[:-1]) for node in labels.values())  # every level but the hostname is on every node
    assert flavor["spec"]["topologyName"] == topology["metadata"]["name"]


def test_a_port_name_without_its_pci_bus_is_a_clear_error() -> None:
    with pytest.raises(InputError, match=r"'eth1' .* give the profile pci_buses"):
        pci_address(HostInterface("eth1", "compute", 0, 400, 9000, "ethernet"))


def test_the_cli_refuses_rails_without_pci_names_with_exit_2(tmp_path: Path) -> None:
    text = (DATA / "export/nvl72.yaml").read_text(encoding="utf-8")
    definition = tmp_path / "cluster.yaml"
    definition.write_text(text.replace("pci_buses: [3, 4, 131, 132], hcas:", "names: [eth1, eth2, eth3, eth4], hcas:", 1), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "fabric", "export", "k8s", str(definition), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "'eth1' (compute port 0) does not name its PCI bus" in result.stdout + result.stderr
    assert not (tmp_path / "out").exists()  # nothing written
