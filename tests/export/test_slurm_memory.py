"""Slurm's RealMemory stays a physical number: every memory size a profile may declare renders, one above the bound is
refused at validation (exit 2, file, line, path and fix, nothing written).

Issue 30: ``memory_gb`` had no upper bound, so ``memory_gb: 999999999999999999999999`` exported
``RealMemory=972799999999999901215752192``, past the uint64 of MiB that slurm.conf(5) takes. The bound,
``MAX_MEMORY_GB`` (64 TiB), is argued in ``fabric/catalog/node_model.py``. slurmctld reading the largest value is
checked in ``tests/export/test_slurm.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.__main__ import main
from fabric.catalog.node_model import MAX_MEMORY_GB
from fabric.errors import InputError
from fabric.export import export_slurm
from fabric.export.slurm import REAL_MEMORY_SHARE
from fabric.model import parse_cluster
from fabric.plan import plan_cluster
from tests.conftest import ROOT

NVL72 = (ROOT / "tests/data/export/nvl72.yaml").read_text(encoding="utf-8")  # a profile of its own, memory_gb: 960
MEMORY_LINE = 1 + NVL72.splitlines().index("    memory_gb: 960")
UINT64_MAX = 2**64 - 1


def with_memory(memory_gb: int) -> str:
    return NVL72.replace("memory_gb: 960", f"memory_gb: {memory_gb}")


def real_memory(text: str) -> set[int]:
    nodes = export_slurm(plan_cluster(parse_cluster(text)[0]))["slurm/nodes.conf"]
    return {int(value) for value in re.findall(r" RealMemory=(\d+) ", nodes)}


def test_the_largest_memory_a_profile_may_declare_renders() -> None:
    assert real_memory(with_memory(MAX_MEMORY_GB)) == {63_753_420}  # 64 TiB x 95 %, in MiB
    assert 63_753_420 < 2**32  # far inside Slurm's uint64, even inside 32 bits


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=MAX_MEMORY_GB) | st.integers(min_value=MAX_MEMORY_GB + 1, max_value=10**24 - 1))
def test_every_memory_size_either_renders_a_physical_realmemory_or_is_refused(memory_gb: int) -> None:
    if memory_gb <= MAX_MEMORY_GB:
        (value,) = real_memory(with_memory(memory_gb))
        assert value == int(memory_gb * 1024 * REAL_MEMORY_SHARE)
        assert 0 <= value <= memory_gb * 1024 <= UINT64_MAX
        return
    with pytest.raises(InputError) as caught:
        parse_cluster(with_memory(memory_gb), "nvl72.yaml")
    (finding,) = caught.value.errors
    assert (finding.file, finding.line, finding.dotted_path) == ("nvl72.yaml", MEMORY_LINE, "hardware.gb200-tray.memory_gb")
    assert finding.message == f"{memory_gb} is above the largest value allowed here, {MAX_MEMORY_GB}; use {MAX_MEMORY_GB} or less"


@pytest.mark.parametrize("command", [["validate"], ["export", "slurm"]])
def test_a_memory_above_the_bound_exits_2_naming_file_line_path_and_fix(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    definition = tmp_path / "cluster.yaml"
    definition.write_text(with_memory(MAX_MEMORY_GB + 1), encoding="utf-8")
    out = tmp_path / "out"
    args = [*command, str(definition)] + (["-o", str(out)] if command[0] == "export" else [])
    assert main(args) == 2
    err = capsys.readouterr().err
    assert (
        f"{definition}:{MEMORY_LINE}: error: hardware.gb200-tray.memory_gb: 65537 is above the largest value allowed here, 65536; use 65536 or less"
    ) in err
    assert "Traceback" not in err
    assert not out.exists(), "nothing is written"
