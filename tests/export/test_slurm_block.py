"""The exported topology-block.conf passes the checks of Slurm's own topology/block reader (restated from Slurm's source
in tests/export/slurm_block.py, since Debian 12's Slurm 22.05 predates topology/block), and those checks can fail."""

from __future__ import annotations

import re

import pytest

from fabric.export import export_slurm
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from tests.conftest import ROOT
from tests.export.slurm_block import check_block_topology, expand_hostlist


def exported() -> tuple[str, set[str]]:
    files = export_slurm(plan_cluster(load_cluster(ROOT / "tests/data/export/nvl72.yaml")))
    nodes = set(re.findall(r"^NodeName=(\S+) ", files["slurm/nodes.conf"], re.MULTILINE))
    return files["slurm/topology-block.conf"], nodes


def test_slurms_block_reader_accepts_the_exported_blocks_with_the_exported_node_lines() -> None:
    text, nodes = exported()
    assert len(nodes) == 36
    assert check_block_topology(text, nodes) == []


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (("BlockSizes=18,36", "BlockSizes=18,54"), "Invalid BlockSizes value: 54"),  # 54 / 18 = 3, not a power of two
        (("BlockSizes=18,36", "BlockSizes=18,27"), "Invalid BlockSizes value: 27"),  # not a multiple of the base
        (("BlockSizes=18,36", "BlockSizes=20,40"), "Block configuration (gpu-nvl01) children count lower than bblock_node_cnt"),
        (("BlockName=gpu-nvl02", "BlockName=gpu-nvl01"), "Block (gpu-nvl01) has already been defined"),
        (("Nodes=gb[019-036]", "Nodes=gb[019-037]"), "Invalid node name (gb[019-037]) in block config (gpu-nvl02)"),
        (("BlockSizes=18,36", "BlockSize=18,36"), "Parsing error at unrecognized key: blocksize"),
        ((" Nodes=gb[019-036]", " Node=gb[019-036]"), "Parsing error at unrecognized key: node"),
    ],
)
def test_the_reader_check_refuses_what_slurm_refuses(change: tuple[str, str], error: str) -> None:
    text, nodes = exported()
    assert change[0] in text
    assert check_block_topology(text.replace(*change), nodes) == [error]


def test_without_block_sizes_the_first_block_sets_the_base() -> None:
    text = "BlockName=a Nodes=n[1-4]\nBlockName=b Nodes=n[5-6]\n"
    assert check_block_topology(text, set(expand_hostlist("n[1-6]"))) == ["Block configuration (b) children count lower than bblock_node_cnt"]
