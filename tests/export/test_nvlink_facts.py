"""NVLink domains as the nodes report them (``nvidia-smi -q``) → Slurm topology/block, for the GB200 racks the
definition cannot name (Azure ND GB200 v6). Recorded outputs in tests/data/nvlink-facts (README there: which are
published, which constructed); the block files pass Slurm's own topology/block reader checks (tests/export/slurm_block.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabric.cli import main
from fabric.errors import InputError
from fabric.export.nvlink_facts import MAX_BYTES, SUFFIX, NvlinkDomain, parse_nvidia_smi_q, read_facts_dir
from fabric.export.slurm import export_slurm
from fabric.export.slurm_nvlink import BLOCK_FILE, NOTE_FILE, export_slurm_from_facts, export_slurm_with_blocks
from fabric.model import ClusterSpec, load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from tests.conftest import DATA
from tests.export.slurm_block import check_block_topology

FACTS = DATA / "nvlink-facts"
AZURE = DATA / "cloud-gb200" / "azure-ndgb200.yaml"
PUBLISHED_UUID = "dc6e40c4-d722-4357-9ba6-5291dd461278"
RACK_A = "5e797fc6-0f46-421a-8724-0e102c0f723c"
RACK_B = "5e797fc6-0f46-421a-8724-0e102c0f721e"
ATTACHED = "Attached GPUs                             : 4"


def published() -> str:
    return (FACTS / "published-gb200-fabric.txt").read_text(encoding="utf-8")


def node_output(uuid: str, clique: int = 32766, *, gpus: int = 4, state: str = "Completed") -> str:
    """A GB200 node's nvidia-smi -q: the published output with another domain (constructed)."""
    text = published().replace(PUBLISHED_UUID, uuid).replace("CliqueId                          : 2", f"CliqueId                          : {clique}")
    if gpus != 4:
        sections = text.split("GPU 0000")
        text = sections[0].replace("Attached GPUs                             : 4", f"Attached GPUs                             : {gpus}")
        text += "".join(f"GPU 0000{s}" for s in sections[1 : gpus + 1])
    return text.replace("State                             : Completed", f"State                             : {state}", 1)


def azure_plan(count: int) -> ClusterPlan:
    data: dict[str, Any] = yaml.safe_load(AZURE.read_text(encoding="utf-8"))
    data["nodes"][0]["count"] = count
    return plan_cluster(ClusterSpec.model_validate(data))


def facts_dir(directory: Path, racks: dict[str, str]) -> Path:
    for host, uuid in racks.items():
        (directory / f"{host}{SUFFIX}").write_text(node_output(uuid), encoding="utf-8")
    return directory


def test_the_published_gb200_fabric_section_names_its_domain() -> None:
    fact = parse_nvidia_smi_q(published(), host="gb001", file="published-gb200-fabric.txt")
    assert fact.domain == NvlinkDomain(PUBLISHED_UUID, 2)
    assert fact.gpus == 4


@pytest.mark.parametrize(
    ("recorded", "problems"),
    [
        (
            "constructed-gb200-in-progress.txt",
            [
                "gb001: GPU 00000018:01:00.0: fabric State is 'In Progress', not Completed: it has not joined its NVLink domain",
                "gb001: GPU 00000019:01:00.0: fabric State is 'In Progress', not Completed: it has not joined its NVLink domain",
            ],
        ),
        (
            "constructed-rtx-no-fabric.txt",
            ["gb001: GPU 00000000:01:00.0: fabric State is 'N/A', not Completed: this GPU has no multi-node NVLink fabric"],
        ),
    ],
)
def test_a_node_in_the_wrong_state_is_refused_naming_each_gpu_and_its_state(recorded: str, problems: list[str]) -> None:
    with pytest.raises(InputError) as caught:
        parse_nvidia_smi_q((FACTS / recorded).read_text(encoding="utf-8"), host="gb001", file=recorded)
    assert [f.message.split(". Fix:")[0] for f in caught.value.errors] == problems
    assert {f.file for f in caught.value.errors} == {recorded}
    assert all("Fix: on the node run nvidia-smi -q" in f.message for f in caught.value.errors)


def test_registration_failed_and_gpus_that_disagree_are_refused() -> None:
    failed = published().replace("Status                            : Success", "Status                            : Timeout", 1)
    with pytest.raises(InputError, match=re.escape("GPU 00000008:01:00.0: fabric State is Completed but Status is 'Timeout', not Success")):
        parse_nvidia_smi_q(failed, host="gb001", file="f")
    split = published().replace(PUBLISHED_UUID, RACK_A, 1)  # GPU 0 in another rack than GPUs 1-3
    with pytest.raises(InputError) as caught:
        parse_nvidia_smi_q(split, host="gb001", file="f")
    (finding,) = caught.value.errors
    assert f"GPU 00000008:01:00.0: ClusterUUID {RACK_A} CliqueId 2; GPU 00000009:01:00.0: ClusterUUID {PUBLISHED_UUID}" in finding.message
    other_clique = published().replace("CliqueId                          : 2", "CliqueId                          : 3", 1)
    with pytest.raises(InputError, match="its GPUs report different NVLink domains"):
        parse_nvidia_smi_q(other_clique, host="gb001", file="f")


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ((PUBLISHED_UUID, "00000000-0000-0000-0000-000000000000"), "ClusterUUID '00000000-0000-0000-0000-000000000000' is not a fabric's UUID"),
        ((PUBLISHED_UUID, "dc6e40c4; rm -rf /"), "ClusterUUID 'dc6e40c4; rm -rf /' is not a fabric's UUID"),
        (("CliqueId                          : 2", "CliqueId                          : " + "9" * 5000), "is not a number from 0 to 4294967295"),
        (("CliqueId                          : 2", "CliqueId                          : -1"), "CliqueId '-1' is not a number"),
        ((ATTACHED, ATTACHED.replace("4", "5")), "'Attached GPUs : 5' but 4 'GPU <bus id>' sections"),
        ((ATTACHED, ATTACHED.replace("4", "99999")), "no 'Attached GPUs : N' line"),
        (("    Fabric\n", "    Fabrik\n"), "GPU 00000008:01:00.0: has no Fabric section"),
        (("        ClusterUUID ", "        ClusterUuid "), "the Fabric section has no ClusterUUID"),
        (("Driver Version", "Driver\x1b[2J Version"), "control characters in the output"),
    ],
)
def test_hostile_or_broken_outputs_are_refused_with_the_node_named(change: tuple[str, str], problem: str) -> None:
    assert change[0] in published()
    with pytest.raises(InputError) as caught:
        parse_nvidia_smi_q(published().replace(*change), host="gb007", file="gb007.nvidia-smi-q.txt")
    assert any(problem in f.message and f.message.startswith("gb007: ") for f in caught.value.errors), caught.value
    assert all(f.file == "gb007.nvidia-smi-q.txt" for f in caught.value.errors)


def test_a_health_field_of_the_same_name_does_not_stand_in_for_the_fabric_one() -> None:
    """Only the section's own fields count: a ``State`` nested under Health is not the registration state."""
    text = published().replace("        State                             : Completed\n", "", 1)
    text = text.replace("            Summary                       : Unhealthy", "            State                         : Completed", 1)
    with pytest.raises(InputError, match=re.escape("GPU 00000008:01:00.0: the Fabric section has no State")):
        parse_nvidia_smi_q(text, host="gb001", file="f")


def test_an_oversized_output_is_refused_before_it_is_read() -> None:
    with pytest.raises(InputError, match=f"more than the {MAX_BYTES}"):
        parse_nvidia_smi_q(published() + " " * MAX_BYTES, host="gb001", file="f")


def test_azure_18xn_nodes_get_one_block_per_reported_domain_that_slurm_accepts(tmp_path: Path) -> None:
    """36 ND GB200 v6 VMs in two racks, interleaved as a scale set places them: two blocks of 18, BlockSizes 18,36."""
    plan = azure_plan(36)
    racks = {f"gb{n:03d}": (RACK_A if n % 2 else RACK_B) for n in range(1, 37)}
    files = export_slurm_from_facts(plan, read_facts_dir(facts_dir(tmp_path, racks)), source=str(tmp_path))
    text = files[BLOCK_FILE]
    odd = ",".join(f"{n:03d}" for n in range(1, 37, 2))
    even = ",".join(f"{n:03d}" for n in range(2, 37, 2))
    assert f"# nvl01: ClusterUUID {RACK_A} CliqueId 32766" in text
    assert f"BlockName=nvl01 Nodes=gb[{odd}]" in text
    assert f"# nvl02: ClusterUUID {RACK_B} CliqueId 32766" in text
    assert f"BlockName=nvl02 Nodes=gb[{even}]" in text
    assert text.splitlines()[-1] == "BlockSizes=18,36"
    nodes = set(re.findall(r"^NodeName=(\S+) ", files["slurm/nodes.conf"], re.MULTILINE))
    assert check_block_topology(text, nodes) == []
    assert NOTE_FILE not in files


def test_a_partly_filled_rack_is_its_own_smaller_block_and_says_so(tmp_path: Path) -> None:
    plan = azure_plan(27)
    racks = {f"gb{n:03d}": (RACK_A if n <= 18 else RACK_B) for n in range(1, 28)}
    text = export_slurm_from_facts(plan, read_facts_dir(facts_dir(tmp_path, racks)), source="facts")[BLOCK_FILE]
    assert f"# nvl02: ClusterUUID {RACK_B} CliqueId 32766; 9 of the 18 nodes one domain holds" in text
    assert "BlockSizes=9,18" in text
    assert check_block_topology(text, {f"gb{n:03d}" for n in range(1, 28)}) == []


def test_missing_unknown_miscounted_and_overfull_facts_are_refused(tmp_path: Path) -> None:
    plan = azure_plan(18)
    facts = read_facts_dir(facts_dir(tmp_path, {f"gb{n:03d}": RACK_A for n in range(1, 18)}))
    with pytest.raises(InputError, match=r"no facts for gb018: every GPU node of a multi-node NVLink domain needs one\. Fix: collect them"):
        export_slurm_from_facts(plan, facts, source="d")
    (tmp_path / f"gb018{SUFFIX}").write_text(node_output(RACK_A, gpus=3), encoding="utf-8")
    (tmp_path / f"login1{SUFFIX}").write_text(node_output(RACK_A), encoding="utf-8")
    (tmp_path / f"gb999{SUFFIX}").write_text(node_output(RACK_A), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        export_slurm_from_facts(plan, read_facts_dir(tmp_path), source="d")
    messages = [f.message for f in caught.value.errors]
    assert any(m.startswith("gb999: facts for a host that is not a GPU node of cluster azure-ndgb200") for m in messages)
    assert any(m.startswith("login1: facts for a host that is not a GPU node") for m in messages)
    assert any(m.startswith("gb018: nvidia-smi shows 3 GPUs, its machine (Standard_ND128isr_NDR_GB200_v6) has 4") for m in messages)


def test_nineteen_nodes_in_one_rack_of_eighteen_are_stale_facts(tmp_path: Path) -> None:
    plan = azure_plan(19)
    facts = read_facts_dir(facts_dir(tmp_path, {f"gb{n:03d}": RACK_A for n in range(1, 20)}))
    with pytest.raises(InputError, match=rf"19 nodes \(gb\[001-019\]\) report ClusterUUID {RACK_A} CliqueId 32766, one NVLink domain holds 18"):
        export_slurm_from_facts(plan, facts, source="d")


def test_the_facts_directory_holds_only_node_outputs(tmp_path: Path) -> None:
    facts_dir(tmp_path, {"gb001": RACK_A})
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    (tmp_path / f"gb002{SUFFIX}").symlink_to(tmp_path / "notes.txt")
    (tmp_path / f"gb003{SUFFIX}").write_bytes(b"\xff\xfe")
    with pytest.raises(InputError) as caught:
        read_facts_dir(tmp_path)
    messages = sorted(f.message.split(";")[0] for f in caught.value.errors)
    assert messages == [
        f"--nvlink-facts: 'gb002{SUFFIX}' is not a <hostname>{SUFFIX} file",
        "--nvlink-facts: 'notes.txt' is not a <hostname>.nvidia-smi-q.txt file",
        "gb003: not UTF-8 text",
    ]
    with pytest.raises(InputError, match="is not a directory"):
        read_facts_dir(tmp_path / "absent")


def test_azure_gb200_export_under_mocks_says_where_the_block_file_comes_from() -> None:
    """The plain export: no block file is guessed, and the note names the nodes and the way to get one."""
    plan = plan_cluster(load_cluster(AZURE))
    files = export_slurm_with_blocks(plan)
    assert BLOCK_FILE not in files
    note = files[NOTE_FILE]
    assert "No topology-block.conf for gb[001-018] (group gpu)" in note
    assert "--nvlink-facts DIR" in note
    assert "cloud_fabric_nvlink_facts_dir=DIR" in note
    assert files == {**export_slurm(plan), NOTE_FILE: note}


@pytest.mark.parametrize("name", ["gcp-a4x", "aws-p6e-gb200"])
def test_where_the_definition_places_the_racks_no_note_is_written(name: str) -> None:
    """Negative control: GCP's 1x72 slices and AWS's UltraServer already give their blocks."""
    files = export_slurm_with_blocks(plan_cluster(load_cluster(DATA / "cloud-gb200" / f"{name}.yaml")))
    assert NOTE_FILE not in files
    assert BLOCK_FILE in files


def test_the_cli_writes_the_block_file_from_the_facts_and_refuses_a_bad_node(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "facts").mkdir()
    facts = facts_dir(tmp_path / "facts", {f"gb{n:03d}": RACK_A for n in range(1, 19)})
    assert main(["export", "slurm", str(AZURE), "-o", str(tmp_path / "plain")]) == 0
    assert (tmp_path / "plain" / NOTE_FILE).is_file()
    assert "the nodes must report their NVLink domains" in capsys.readouterr().err
    assert main(["export", "slurm", str(AZURE), "--nvlink-facts", str(facts), "-o", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / BLOCK_FILE).read_text(encoding="utf-8")
    assert "BlockName=nvl01 Nodes=gb[001-018]" in text
    assert "BlockSizes=18" in text
    (facts / f"gb005{SUFFIX}").write_text(node_output(RACK_A, state="In Progress"), encoding="utf-8")
    assert main(["export", "slurm", str(AZURE), "--nvlink-facts", str(facts), "-o", str(tmp_path / "refused")]) == 2
    err = capsys.readouterr().err
    assert "gb005: GPU 00000008:01:00.0: fabric State is 'In Progress', not Completed" in " ".join(err.split())
    assert not (tmp_path / "refused").exists()
    assert main(["export", "nccl", str(AZURE), "--nvlink-facts", str(facts), "-o", str(tmp_path / "nccl")]) == 2
