"""The render's worker processes (fabric.cli.render_workers): the serial render's bytes, its errors and exit codes, nothing written
before every switch has rendered."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fabric.cli.render as cli
from fabric.__main__ import main
from fabric.cli import output
from fabric.cli import render_workers as parallel
from fabric.cli.output import OutputTree
from fabric.cli.render_workers import SwitchWorkers
from fabric.cli.staging import Staging
from fabric.errors import RenderError
from fabric.plan.types import ClusterPlan
from fabric.render import render_configs
from fabric.validate import Validated, validate_file
from tests.render.conftest import definition, files_of, plan_of

CASES = ["onprem-roce", "render/cumulus-3tier", "render/eos-3tier", "render/sonic-3tier", "render/nxos-3tier", "render/mlnxos-3tier"]


@pytest.fixture
def small_fabrics_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test fabrics are small: let them fork workers as the large ones do."""
    monkeypatch.setattr(parallel, "MIN_SWITCHES", 1)


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def render(capsys: pytest.CaptureFixture[str], file: Path, target: Path, jobs: int) -> dict[str, str]:
    assert main(["render", str(file), "-o", str(target), "--jobs", str(jobs), "--json"]) == 0
    return json.loads(capsys.readouterr().out)["files"]


@pytest.mark.usefixtures("small_fabrics_fork")
@pytest.mark.parametrize("case", CASES)
def test_workers_write_the_bytes_of_the_serial_render(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    serial = render(capsys, definition(case), tmp_path / "serial", 1)
    forked = render(capsys, definition(case), tmp_path / "forked", 3)
    assert forked == serial
    assert tree(tmp_path / "forked") == tree(tmp_path / "serial")
    expected = {path: text.encode() for path, text in files_of(case).items()}
    assert {path: data for path, data in tree(tmp_path / "forked").items() if path != "plan.json"} == expected


@pytest.mark.usefixtures("small_fabrics_fork")
def test_every_worker_renders_its_share(tmp_path: Path) -> None:
    plan = plan_of("render/cumulus-3tier")
    assert plan.fabric is not None
    switch_files = {path: text for path, text in files_of("render/cumulus-3tier").items() if path.startswith("switches/")}
    out = tmp_path / "out"
    with Staging(out, digest=True) as staging, SwitchWorkers(plan, staging, jobs=4) as workers:
        assert workers.jobs == 4
        assert workers.rendered() == len(switch_files) == len(plan.fabric.switches)
        assert sorted(workers.paths()) == sorted(switch_files)
        assert not out.exists(), "nothing enters the output directory before the write"
        staged = sorted(p.name.split("-")[0] for p in staging.path.iterdir())
        children = list(workers._children)
        with OutputTree(out) as moved:
            workers.write(out)
            mine = staging.commit(moved, staging.entries)
            theirs = workers.written()
    processes = {str(os.getpid()), *(str(child.pid) for child in children)}
    assert set(staged) <= processes, "each process stages under its own names"
    assert len(mine) + len(theirs) == len(switch_files)
    assert mine | theirs == {path: hashlib.sha256(text.encode()).hexdigest() for path, text in switch_files.items()}
    assert tree(out) == {path: text.encode() for path, text in switch_files.items()}
    assert [p.name for p in tmp_path.iterdir()] == ["out"], "the staging folder is gone"


def test_a_small_fabric_renders_in_this_process(tmp_path: Path) -> None:
    plan = plan_of("render/cumulus-3tier")
    with Staging(tmp_path) as staging, SwitchWorkers(plan, staging, jobs=8) as workers:
        assert workers.jobs == 1


def poisoned(plan: ClusterPlan, *positions: int) -> ClusterPlan:
    """The plan with a management interface that would inject a line (as if the model had let it through) on the
    switches at these positions in plan order."""
    assert plan.fabric is not None
    spines = len(plan.fabric.super_spines) + len(plan.fabric.spines)
    leaves = list(plan.fabric.leaves)
    for position in positions:
        assert position >= spines, "poison leaves only"
        leaf = leaves[position - spines]
        leaves[position - spines] = dataclasses.replace(leaf, mgmt_interface=f"eth0\nnv set system hostname pwned-{leaf.name}")
    return dataclasses.replace(plan, fabric=dataclasses.replace(plan.fabric, leaves=tuple(leaves)))


@pytest.mark.usefixtures("small_fabrics_fork")
@pytest.mark.parametrize("jobs", [1, 3])
def test_a_worker_render_error_is_the_serial_one_and_nothing_is_written(
    jobs: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    case = "render/cumulus-3tier"
    plan = plan_of(case)
    assert plan.fabric is not None
    first = len(plan.fabric.switches) - 3  # with 3 workers: switch n goes to worker n % 3, so the later switch ...
    bad = poisoned(plan, first, first + 1)  # ... fails in another worker, which must not win
    with pytest.raises(RenderError) as serial:
        render_configs(bad)
    assert f"pwned-{plan.fabric.switches[first].name}" in str(serial.value)
    file = definition(case)
    # The CLI's input boundary: the definition as validate_file gives it, with the poisoned plan in it.
    monkeypatch.setattr(cli, "validate_file", lambda path: Validated(validate_file(file).spec, (), str(path), bad))
    target = tmp_path / "out"
    assert main(["render", str(file), "-o", str(target), "--jobs", str(jobs)]) == 2
    assert f"cannot render: {serial.value}" in capsys.readouterr().err.replace("\n", " ")
    assert not target.exists()


@pytest.mark.usefixtures("small_fabrics_fork")
@pytest.mark.parametrize("jobs", [1, 3])
def test_a_worker_that_cannot_write_fails_as_the_serial_write(
    jobs: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    case = "render/cumulus-3tier"
    plan = plan_of(case)
    assert plan.fabric is not None
    target = tmp_path / "out"
    blocker = target / "switches" / plan.fabric.switches[-1].name  # a file where the switch's directory goes
    blocker.parent.mkdir(parents=True)
    blocker.write_text("not a directory\n", encoding="utf-8")
    assert main(["render", str(definition(case)), "-o", str(target), "--jobs", str(jobs)]) == 2, "seen before anything is written"
    assert f"-o: {str(blocker)!r} exists and is not a folder; nothing was written" in capsys.readouterr().err.replace("\n", "")
    monkeypatch.setattr(output, "refuse_links", lambda *_, **__: None)  # as if the file appeared after the check
    assert main(["render", str(definition(case)), "-o", str(target), "--jobs", str(jobs)]) == 1
    assert f"error: [Errno 20] Not a directory: '{blocker}'" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-1", "two", ""])
def test_jobs_must_be_a_whole_number(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["render", str(definition("lab")), "--jobs", value])
    assert exited.value.code == 2
    assert "is no number of processes" in capsys.readouterr().err


def test_gpufabric_jobs_sets_the_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GPUFABRIC_JOBS", "3")
    assert parallel.default_jobs() == 3
    monkeypatch.setenv("GPUFABRIC_JOBS", "many")
    assert main(["render", str(definition("lab")), "-o", str(tmp_path / "out")]) == 2
    assert "GPUFABRIC_JOBS='many' is no number of render processes" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@settings(deadline=None)  # no timing in a test: a busy CI worker took 373 ms on a 154,680-name case
@given(count=st.integers(0, 120_000), jobs=st.integers(1, 256))
def test_chunks_cover_the_switches_in_order_and_shrink(count: int, jobs: int) -> None:
    """Every switch in one chunk, in plan order; at most MAX_CHUNKS; sizes never grow (the last may be a remainder)."""
    names = [f"s{i}" for i in range(count)]
    chunks = parallel._chunks(names, jobs)
    assert [n for chunk in chunks for n in chunk] == names
    assert len(chunks) <= parallel.MAX_CHUNKS
    assert all(chunks)
    sizes = [len(c) for c in chunks]
    assert sizes[:-1] == sorted(sizes[:-1], reverse=True)
    if count >= 2 * jobs:
        assert sizes[0] >= count // (2 * jobs), "a large first chunk: whoever starts first gets going"
