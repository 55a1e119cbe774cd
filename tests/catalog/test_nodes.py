"""Node hardware profiles as data: every file loads, the planner's figures hold, and a broken file is named exactly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fabric.catalog.hardware import HARDWARE, NODE_DATA, load_node_profiles
from fabric.catalog.node_model import NodeProfile
from fabric.errors import InputError
from tests.conftest import ROOT, check_golden

FILES = sorted(NODE_DATA.glob("*.yaml"))


def test_every_data_file_loads_as_a_profile() -> None:
    assert sorted(HARDWARE) == sorted(f.stem for f in FILES)
    assert len(FILES) >= 8
    for file in FILES:
        assert file.read_text(encoding="utf-8").startswith("# yaml-language-server: $schema=../../../../schema/node-profile.schema.json")


def test_dgx_h100_compute_ports_follow_the_user_guide() -> None:
    # DGX H100/H200 User Guide, Table 6 "Network Modules": GPU 0..7 sit behind ibp24s0/mlx5_0 ... ibp220s0/mlx5_11.
    compute = HARDWARE["dgx-h100"].ports["compute"]
    assert compute.interface_names("infiniband") == tuple(f"ibp{b}s0" for b in (24, 64, 79, 94, 154, 192, 206, 220))
    assert compute.hcas == ("mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11")
    assert compute.interface_names("ethernet")[0] == "enp24s0np0"
    assert (compute.speed_gbps, HARDWARE["dgx-b200"].gpus, HARDWARE["dgx-b200"].ports["oob"].names) == (400, 8, ("bmc",))


def _broken(tmp_path: Path, name: str, text: str) -> Path:
    directory = tmp_path / "nodes"
    directory.mkdir()
    shutil.copy(NODE_DATA / "lab-node.yaml", directory)
    (directory / f"{name}.yaml").write_text(text, encoding="utf-8")
    return directory


_HEAD = "name: bad\ndescription: x\ngpus: 0\nports:\n"


@pytest.mark.parametrize(
    ("body", "line", "path", "message"),
    [
        (
            "  compute:\n    speed_gbps: 300\n    names: [eth1]\n",
            6,
            "ports.compute.speed_gbps",
            "300 Gb/s is not a port speed; use one of [1, 10, 25, 40, 50, 100, 200, 400, 800, 1600]",
        ),
        (
            "  compute:\n    speed_gbps: 400\n    names: [eth1, eth2]\n    pci_buses: [24]\n",
            5,
            "ports.compute",
            "2 names but 1 pci_buses; give one bus per port",
        ),
        (
            "  compute:\n    speed_gbps: 400\n    pci_buses: [24, 64]\n    hcas: [mlx5_0]\n",
            5,
            "ports.compute",
            "1 hcas for 2 ports; give one RDMA device per port or none",
        ),
        (
            "  compute:\n    speed_gbps: 400\n    pci_buses: [24, 24]\n",
            5,
            "ports.compute",
            "pci_buses lists 24 more than once; each port has its own",
        ),
        (
            "  compute:\n    speed_gbps: 400\n    names: [eth1]\n  inband:\n    speed_gbps: 25\n    names: [eth1]\n",
            4,
            "ports",
            "names eth1 is on both the compute and the inband plane; a port belongs to one plane",
        ),
        ("  compute:\n    speed_gbps: 400\n", 5, "ports.compute", "give the ports' pci_buses or their names (or both, one bus per name)"),
        ("  compute:\n    speed_gbps: 400\n    names: [eth1]\n    mtu: 9000\n", 8, "ports.compute.mtu", "Extra inputs are not permitted"),
    ],
)
def test_a_broken_profile_is_named_with_file_line_and_fix(tmp_path: Path, body: str, line: int, path: str, message: str) -> None:
    directory = _broken(tmp_path, "bad", _HEAD + body)
    with pytest.raises(InputError) as caught:
        load_node_profiles(directory)
    (finding,) = caught.value.findings
    assert (finding.file, finding.line, finding.dotted_path) == (f"{directory}/bad.yaml", line, path)
    assert message in finding.message


def test_a_file_named_differently_from_its_profile_is_refused(tmp_path: Path) -> None:
    directory = _broken(tmp_path, "other", _HEAD + "  inband:\n    speed_gbps: 25\n    names: [eno1]\n")
    with pytest.raises(InputError) as caught:
        load_node_profiles(directory)
    assert [str(f) for f in caught.value.findings] == [f"{directory}/other.yaml:1: error: name: 'bad' lives in other.yaml; name the file bad.yaml"]


def node_schema_json() -> str:
    schema = NodeProfile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "gpufabric node hardware profile"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def test_committed_schema_matches_the_model(update_golden: bool) -> None:
    check_golden(ROOT / "schema" / "node-profile.schema.json", node_schema_json(), update_golden)


def test_a_broken_builtin_profile_stops_the_run_instead_of_becoming_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fabric.catalog import hardware
    from fabric.errors import CatalogError
    from fabric.validate import validate_file

    directory = tmp_path / "nodes"
    shutil.copytree(NODE_DATA, directory)
    path = directory / "dgx-h100.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("speed_gbps: 400", "speed_gbps: 300", 1), encoding="utf-8")
    monkeypatch.setattr(hardware, "NODE_DATA", directory)
    hardware._builtin.cache_clear()
    try:
        with pytest.raises(CatalogError) as caught:
            validate_file(ROOT / "inventories" / "onprem-roce" / "cluster.yaml")
    finally:
        hardware._builtin.cache_clear()
    assert str(caught.value).splitlines() == [
        "gpufabric's built-in catalog is broken; fix these files or reinstall:",
        f"{directory}/dgx-h100.yaml:10: error: ports.compute.speed_gbps: Value error, 300 Gb/s is not a port speed; "
        "use one of [1, 10, 25, 40, 50, 100, 200, 400, 800, 1600] (got 300)",
    ]


@pytest.mark.parametrize("name", ["dgx-h100", "dgx-h200", "dgx-b200"])
def test_dgx_cpus_and_memory_follow_the_user_guides(name: str) -> None:
    # DGX H100/H200 user guide: 2 x Xeon Platinum 8480C, 112 cores, 2 TB; DGX B200 user guide: 2 x Xeon 8570 with 56
    # cores each, 2 TB using 32 DIMMs (fabric/catalog/data/nodes/README.md, [dgx-cpu] and [dgx-b200-cpu])
    profile = HARDWARE[name]
    assert (profile.sockets, profile.cores_per_socket, profile.memory_gb) == (2, 56, 2048)


_PORTS = "ports:\n  inband:\n    speed_gbps: 25\n    names: [eno1]\n"


@pytest.mark.parametrize(
    ("head", "line", "path", "message"),
    [  # issue 30: free text of a profile gets the strict string type, memory a physical bound
        ('description: "DGX\\e[2J\\e[H"\ngpus: 0\n', 2, "description", "'DGX\\x1b[2J\\x1b[H' is not one line of printable text"),
        ('description: "DGX\\u202eevil"\ngpus: 0\n', 2, "description", "'DGX\\u202eevil' is not one line of printable text"),
        ("description: " + "x" * 201 + "\ngpus: 0\n", 2, "description", "String should have at most 200 characters"),
        ('gpus: 8\ngpu_model: "H100\\nGres=gpu:999"\n', 3, "gpu_model", "'H100\\nGres=gpu:999' is not a GPU model name"),
        ("gpus: 0\nmemory_gb: 65537\n", 3, "memory_gb", "Input should be less than or equal to 65536"),
    ],
)
def test_a_profile_with_unsafe_text_or_an_unphysical_memory_is_refused(tmp_path: Path, head: str, line: int, path: str, message: str) -> None:
    directory = _broken(tmp_path, "bad", "name: bad\n" + head + _PORTS)
    with pytest.raises(InputError) as caught:
        load_node_profiles(directory)
    (finding,) = caught.value.findings
    assert (finding.file, finding.line, finding.dotted_path) == (f"{directory}/bad.yaml", line, path)
    assert message in finding.message, finding.message


def test_a_profile_may_describe_itself_in_any_printable_unicode_and_declare_64_tib(tmp_path: Path) -> None:
    text = "name: big\ndescription: Großrechner — 北京 (2 × 32 Sockel)\ngpus: 8\ngpu_model: B300-288GB\nmemory_gb: 65536\n" + _PORTS
    profile = load_node_profiles(_broken(tmp_path, "big", text))["big"]
    assert (profile.description, profile.gpu_model, profile.memory_gb) == ("Großrechner — 北京 (2 × 32 Sockel)", "B300-288GB", 65536)
