"""The shipped change pipelines, run the way their runners run them: GitLab CI's jobs and GitHub Actions' jobs, in
order, each job's own script lines exactly as written (its install step included), from a directory outside the
checkout, with nothing on PATH but the system's and what the job itself adds, against the local twin.

The one thing the runner would fetch from a package index, gpufabric's dependencies, comes from the project venv: the
job's venv is created first with a ``.pth`` line to the project's pinned packages (as tests/packaging/conftest.py
does; its `dist` fixture builds the wheel), and the job's own ``pip install "$GPUFABRIC"`` then installs the wheel built from this checkout with
``PIP_NO_INDEX``/``PIP_NO_DEPS`` set. Nothing of the checkout is importable or on PATH.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabric.apply.planes import PLANES
from fabric.apply.push import canary_names
from fabric.plan import ClusterPlan
from fabric.twin.lab import LabState
from tests.conftest import ROOT
from tests.packaging.conftest import Dist

pytestmark = pytest.mark.twin  # builds a twin: the twin lane of ./dev test, one twin at a time (docs/testing.md)

GITLAB = ROOT / "ci" / "fabric-change.gitlab-ci.yml"
GITHUB = ROOT / "ci" / "fabric-change.github.yml"
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def runner_env(work: Path, dist: Dist, cluster: Path, state: Path) -> dict[str, str]:
    """What a runner's job starts with: the system's PATH, no PYTHONPATH, the pipeline's variables set per site."""
    return {
        "PATH": SYSTEM_PATH,
        "HOME": str(work),
        "LANG": "C.UTF-8",
        "CLUSTER": str(cluster),
        "STATE": str(state),
        "GPUFABRIC": str(dist.wheel),
        "PIP_NO_INDEX": "1",  # the dependencies come from the project venv (the module docstring)
        "PIP_NO_DEPS": "1",
    }


def prepare_venv(venv: Path) -> None:
    """The job's venv path, created beforehand only to carry a ``.pth`` line to the project's pinned packages, by the
    interpreter the job's own ``python3`` is (the system's, which need not be the one running the tests). pip itself
    is left out of what the line adds, so the job's ``python3 -m venv`` still installs the venv's own pip."""
    python3 = shutil.which("python3", path=SYSTEM_PATH)
    assert python3 is not None, f"no python3 on {SYSTEM_PATH}"
    subprocess.run([python3, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    deps = venv.parent / f"{venv.name}-deps"
    deps.mkdir()
    for where in sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}):
        for entry in Path(where).iterdir():
            if not entry.name.startswith(("pip", "gpufabric", "_gpufabric", "__editable__")) and not (deps / entry.name).exists():
                (deps / entry.name).symlink_to(entry)
    (Path(site) / "_gpufabric_deps.pth").write_text(f"{deps}\n", encoding="utf-8")


def run_script(lines: list[str], env: dict[str, str], work: Path, *, shell: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """One job's (or step's) lines as one shell script, the way the runner runs it."""
    return subprocess.run([*shell, "-c", "\n".join(lines)], cwd=work, env=env, capture_output=True, text=True, timeout=600, check=False)


def run_gitlab_job(pipeline: dict[str, Any], name: str, env: dict[str, str], work: Path) -> subprocess.CompletedProcess[str]:
    job = pipeline[name]
    lines = [*pipeline["default"]["before_script"], *job["script"]]
    # GitLab's bash: every line of before_script and script in one shell that stops at the first failing line
    return run_script(lines, env, work, shell=("bash", "-eo", "pipefail"))


def gitlab_jobs(pipeline: dict[str, Any], source: str) -> list[str]:
    """The jobs a pipeline of ``source`` runs, in stage order, manual ones included (the test is the one who approves)."""

    def rules(job: dict[str, Any]) -> str:
        own = job.get("rules") or pipeline[job["extends"]]["rules"]
        return " ".join(rule["if"] for rule in own)

    wanted = "merge_request_event" if source == "merge_request" else "CI_DEFAULT_BRANCH"
    jobs = [n for n, j in pipeline.items() if isinstance(j, dict) and "script" in j and not n.startswith(".") and wanted in rules(j)]
    return sorted(jobs, key=lambda n: pipeline["stages"].index(pipeline[n]["stage"]))


def expand(value: str, env: dict[str, str]) -> str:
    return re.sub(r"\$(\w+)", lambda m: env.get(m.group(1), m.group(0)), value)


def read(work: Path, name: str) -> dict[str, Any]:
    return json.loads((work / name).read_text(encoding="utf-8"))


def committed(result: dict[str, Any]) -> list[str]:
    assert not [n for n, d in result["devices"].items() if d["error"]], result
    return [n for n, d in result["devices"].items() if d["committed"]]


@pytest.mark.slow
def test_gitlab_reviews_approves_canaries_pushes_verifies_and_rolls_back(
    twin: tuple[LabState, Path], plan: ClusterPlan, dist: Dist, tmp_path: Path
) -> None:
    _, state = twin
    pipeline = yaml.safe_load(GITLAB.read_text(encoding="utf-8"))
    work = tmp_path / "project"
    work.mkdir()
    cluster = write_definition(plan, work, spine_asn=None)
    env = runner_env(work, dist, cluster, state) | {"CI_PROJECT_DIR": str(work)}
    env |= {k: expand(str(v), env) for k, v in pipeline["variables"].items() if k.startswith("GPUFABRIC_")}
    prepare_venv(Path(env["GPUFABRIC_VENV"]))

    assert gitlab_jobs(pipeline, "merge_request") == ["validate", "diff"]
    for name in gitlab_jobs(pipeline, "merge_request"):
        done = run_gitlab_job(pipeline, name, env, work)
        assert done.returncode == 0, f"{name}\n{done.stdout}\n{done.stderr}"
    assert all(d["changed"] for d in read(work, "diff.json")["devices"].values())
    assert not (state / "audit.jsonl").exists(), "review touches no device and records nothing"
    assert read(work, "lint.json")["clean"]

    assert gitlab_jobs(pipeline, "default_branch") == ["validate", "canary", "push", "verify", "rollback"]
    # GitLab refuses a job-level `when` beside `rules`: the manual gate is the rule's
    assert pipeline["canary"]["rules"] == [{"if": "$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH", "when": "manual", "allow_failure": False}]
    for name in ("validate", "canary", "push", "verify"):
        done = run_gitlab_job(pipeline, name, env, work)
        assert done.returncode == 0, f"{name}\n{done.stdout}\n{done.stderr}"
    first = canary_names(plan, PLANES)
    canary = read(work, "canary.json")
    assert list(canary["devices"]) == first, "the canary job reaches only each plane's first switch"
    pushed = read(work, "push.json")
    compute = {s.name for s in plan.fabric.switches} if plan.fabric else set()
    assert set(committed(canary)) | set(committed(pushed)) == compute, "the L2 switches booted their rendered config"
    assert not set(committed(canary)) & set(committed(pushed))
    assert all(v["ok"] for v in read(work, "verify.json").values())

    # A second change, then the rollback job back to the first push: without ROLLBACK_TO it refuses, naming the fix.
    write_definition(plan, work, spine_asn=65200)
    for name in ("canary", "push"):
        done = run_gitlab_job(pipeline, name, env, work)
        assert done.returncode == 0, f"{name}\n{done.stdout}\n{done.stderr}"
    second = set(committed(read(work, "canary.json"))) | set(committed(read(work, "push.json")))
    assert second >= {s.name for s in plan.fabric.spines} if plan.fabric else True, "the spines' ASN changed"
    refused = run_gitlab_job(pipeline, "rollback", env, work)
    assert refused.returncode != 0
    assert "set ROLLBACK_TO to the change id" in refused.stderr
    back = run_gitlab_job(pipeline, "rollback", env | {"ROLLBACK_TO": pushed["change"]}, work)
    assert back.returncode == 0, back.stderr
    assert set(committed(read(work, "rollback.json"))) == second, "every switch the second change moved, back"


@pytest.mark.slow
def test_github_actions_review_canary_push_and_rollback(twin: tuple[LabState, Path], plan: ClusterPlan, dist: Dist, tmp_path: Path) -> None:
    _, state = twin
    workflow = yaml.safe_load(GITHUB.read_text(encoding="utf-8"))
    events = workflow[True]  # YAML 1.1 reads the key `on` as True
    assert set(events) == {"pull_request", "push", "workflow_dispatch"}
    work = tmp_path / "project"
    work.mkdir()
    cluster = write_definition(plan, work, spine_asn=None)
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    prepare_venv(runner_temp / "gpufabric")
    base = runner_env(work, dist, cluster, state) | {"RUNNER_TEMP": str(runner_temp)}

    def run_job(name: str, inputs: dict[str, str] | None = None) -> None:
        job = workflow["jobs"][name]
        env = base | {k: github_value(str(v), inputs or {}) for k, v in job.get("env", {}).items()}
        path_file = runner_temp / f"{name}.path"
        path_file.write_text("", encoding="utf-8")
        for step in job["steps"]:
            if "run" not in step:
                assert step["uses"].split("@")[0] in {"actions/checkout", "actions/upload-artifact"}, step
                continue
            added = [p for p in path_file.read_text(encoding="utf-8").splitlines() if p]
            step_env = env | {"GITHUB_PATH": str(path_file), "PATH": ":".join([*reversed(added), SYSTEM_PATH])}
            done = run_script([step["run"]], step_env, work, shell=("bash", "--noprofile", "--norc", "-e"))
            assert done.returncode == 0, f"{name}: {step.get('name')}\n{done.stdout}\n{done.stderr}"

    jobs = workflow["jobs"]
    assert [n for n, j in jobs.items() if "pull_request" in j.get("if", "")] == ["review"]
    run_job("review")
    assert all(d["changed"] for d in read(work, "diff.json")["devices"].values())
    assert not (state / "audit.jsonl").exists()
    assert jobs["canary"]["environment"] == jobs["push"]["environment"] == jobs["rollback"]["environment"], "one approval"
    assert jobs["push"]["needs"] == "canary"
    run_job("canary")
    run_job("push")
    canary, pushed = read(work, "canary.json"), read(work, "push.json")
    assert list(canary["devices"]) == canary_names(plan, PLANES)
    compute = {s.name for s in plan.fabric.switches} if plan.fabric else set()
    assert set(committed(canary)) | set(committed(pushed)) == compute
    assert all(v["ok"] for v in read(work, "verify.json").values())
    run_job("rollback", {"rollback_to": pushed["change"]})
    assert not committed(read(work, "rollback.json")), "back to the push just made: every switch already runs it"


def github_value(value: str, inputs: dict[str, str]) -> str:
    """A job env value with its ``${{ … }}`` expressions as the runner would give them (no secrets on the twin)."""

    def one(match: re.Match[str]) -> str:
        expression = match.group(1).strip()
        if expression.startswith("inputs."):
            return inputs[expression.removeprefix("inputs.")]
        assert expression.startswith("secrets."), expression
        return ""

    return re.sub(r"\$\{\{(.*?)\}\}", one, value)


def write_definition(plan: ClusterPlan, work: Path, *, spine_asn: int | None) -> Path:
    """The lab definition under the twin's cluster name, in the pipeline's repository (``spine_asn``: a second change)."""
    data = yaml.safe_load((ROOT / "inventories" / "lab" / "cluster.yaml").read_text(encoding="utf-8"))
    data["name"] = plan.name
    if spine_asn is not None:
        data["fabric"]["underlay"]["spine_asn"] = spine_asn
    path = work / "cluster.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path
