"""The shipped GitLab pipeline, run for real: its merge-request jobs, then its default-branch jobs, in stage order,
each script line exactly as written, against the twin (the runner's environment: CLUSTER, STATE, the venv on PATH)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import yaml

from fabric.plan import ClusterPlan
from fabric.twin.lab import LabState
from tests.apply.test_push_cli import definition
from tests.conftest import ROOT

PIPELINE = ROOT / "ci" / "fabric-change.gitlab-ci.yml"


def jobs_for(pipeline: dict[str, Any], source: str) -> list[tuple[str, dict[str, Any]]]:
    """The jobs a pipeline of ``source`` (merge_request_event / default branch) runs, in stage order."""
    jobs = {name: job for name, job in pipeline.items() if isinstance(job, dict) and "script" in job and not name.startswith(".")}

    def rules(job: dict[str, Any]) -> str:
        own = job.get("rules") or pipeline[job["extends"]]["rules"]
        return " ".join(rule["if"] for rule in own)

    wanted = "merge_request_event" if source == "merge_request" else "CI_DEFAULT_BRANCH"
    picked = [(name, job) for name, job in jobs.items() if wanted in rules(job)]
    return sorted(picked, key=lambda item: pipeline["stages"].index(item[1]["stage"]))


def run_job(job: dict[str, Any], env: dict[str, str], workdir: Path) -> None:
    for line in [*job.get("before_script", []), *job["script"]]:
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", line], cwd=workdir, env=env, capture_output=True, text=True, timeout=300, check=False
        )
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"


def test_the_shipped_pipeline_reviews_then_pushes_and_verifies(twin: tuple[LabState, Path], plan: ClusterPlan) -> None:
    _, state = twin
    pipeline = yaml.safe_load(PIPELINE.read_text(encoding="utf-8"))
    job_defaults = pipeline["default"]
    work = state / "ci"
    work.mkdir()
    (work / "dev").symlink_to(ROOT / "dev")
    env = {
        **os.environ,
        "CLUSTER": str(definition(plan, state)),
        "STATE": str(state),
        "PATH": f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
    }

    review = jobs_for(pipeline, "merge_request")
    assert [name for name, _ in review] == ["validate", "diff"]
    for _, job in review:
        run_job({**job_defaults, **job}, env, work)
    proposed = json.loads((work / "diff.json").read_text(encoding="utf-8"))["devices"]
    compute = {s.name for s in plan.fabric.switches} if plan.fabric else set()
    # --offline diffs against the change record, and nothing was pushed yet: every switch, of every plane, shows its
    # whole candidate (the live diff of the push job then finds the storage/OOB switches booted with it).
    assert all(d["changed"] and not d["committed"] for d in proposed.values())
    assert set(proposed) > compute, "every plane's switches are diffed by default"
    assert not (state / "audit.jsonl").exists(), "review touches no device and records nothing"
    assert json.loads((work / "lint.json").read_text(encoding="utf-8"))["clean"]

    merge = jobs_for(pipeline, "default_branch")
    assert [name for name, _ in merge] == ["validate", "push", "verify"]
    for _, job in merge:
        run_job({**job_defaults, **job}, env, work)
    pushed = json.loads((work / "push.json").read_text(encoding="utf-8"))
    assert all(d["committed"] == (n in compute) and not d["error"] for n, d in pushed["devices"].items())
    assert all(v["ok"] for v in json.loads((work / "verify.json").read_text(encoding="utf-8")).values())
    audit = [json.loads(line) for line in (state / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
    # Write-ahead: the one change has its "started" line (before any switch was touched) and its "finished" line.
    assert [(a["change"], a["event"]) for a in audit] == [(pushed["change"], "started"), (pushed["change"], "finished")]
