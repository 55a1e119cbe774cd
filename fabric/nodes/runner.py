"""Run a playbook of this repository with ansible-runner and turn its event stream into per-host results.

The project directory is the repository (its ``ansible.cfg`` enables the gpufabric inventory plugin, its ``roles/``
and ``playbooks/`` are what runs). An installed package has no repository: the wheel carries the same four entries
in ``fabric/nodes/project/`` (pyproject.toml's force-include), and that copy runs. Artifacts go to a private directory
that is removed afterwards: events carry host variables, and nothing of a run is kept that the terminal did not show.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ansible_runner

from fabric.errors import ProjectMissingError

CHECKOUT = Path(__file__).resolve().parent.parent.parent
PACKAGED = Path(__file__).resolve().parent / "project"  # only in an installed wheel
SITE = "playbooks/site.yml"
OUTCOMES = ("ok", "changed", "failed", "unreachable", "skipped", "ignored")


def project_dir(playbook: str = SITE) -> Path:
    """The first of the checkout and the installed package's copy that holds ``ansible.cfg`` and ``playbook``.

    Raises:
        ProjectMissingError: none does (a wheel built without the project, or a damaged install); the message says the fix.
    """
    candidates = (CHECKOUT, PACKAGED)
    for candidate in candidates:
        if (candidate / "ansible.cfg").is_file() and (candidate / playbook).is_file():
            return candidate
    looked = " and ".join(str(c / playbook) for c in candidates)
    msg = (
        f"the Ansible project that nodes runs is missing: no {looked}. "
        "Fix: reinstall the package from a wheel built by ./dev dist (pip install --force-reinstall gpufabric-*.whl), "
        "or run python -m fabric nodes from a checkout"
    )
    raise ProjectMissingError(msg)


@dataclass
class HostResult:
    """What one host did: task outcome counts and each failure as (task, message)."""

    host: str
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    failures: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])

    @property
    def ran(self) -> bool:
        """False for a host the playbook selected but never reached (an earlier batch stopped the run)."""
        return any(self.counts.values())

    @property
    def ok(self) -> bool:
        return self.ran and not (self.counts["failed"] or self.counts["unreachable"])


@dataclass(frozen=True)
class RunOptions:
    """The ansible-playbook switches ``python -m fabric nodes`` passes through."""

    check: bool = False
    diff: bool = False
    limit: str | None = None
    tags: str | None = None
    skip_tags: str | None = None
    extra_inventories: tuple[Path, ...] = ()
    extravars: Mapping[str, object] = field(default_factory=dict[str, object])


@dataclass(frozen=True)
class NodesRun:
    """The outcome of a run: ansible-playbook's exit code and the results of every host the plays selected, by name."""

    rc: int
    hosts: tuple[HostResult, ...]
    output_tail: tuple[str, ...] = ()  # ansible-playbook's last lines: why a run failed before any host did

    @property
    def ok(self) -> bool:
        return self.rc == 0 and all(h.ok for h in self.hosts)


Progress = Callable[[str, str, str], None]  # (host or "", task, outcome)


def run_playbook(
    definition: Path,
    options: RunOptions,
    progress: Progress,
    playbook: str = SITE,
    observe: Callable[[Mapping[str, Any]], None] | None = None,
) -> NodesRun:
    """Run ``playbook`` (relative to the repository, or absolute) with the definition as inventory.

    ``progress`` is called for every task start and host result; ``observe`` receives every raw ansible-runner event.

    Raises:
        ProjectMissingError: neither the checkout nor the installed package holds the playbook (nothing ran).
    """
    project = project_dir(playbook)
    hosts = {host: HostResult(host) for host in targeted_hosts(definition, options, playbook, project)}
    tail: deque[str] = deque(maxlen=20)

    def on_event(event: Mapping[str, Any]) -> bool:
        if observe is not None:
            observe(event)
        tail.extend(line for line in str(event.get("stdout", "")).splitlines() if line.strip())
        data = event.get("event_data", {})
        kind = str(event.get("event", ""))
        if kind == "playbook_on_task_start":
            progress("", str(data.get("task", "")), "start")
        outcome = _outcome(kind, data)
        if outcome:
            if outcome == "failed" and data.get("ignore_errors"):
                outcome = "ignored"
            host = hosts.setdefault(str(data["host"]), HostResult(str(data["host"])))
            host.counts[outcome] += 1
            if outcome == "changed":
                host.counts["ok"] += 1  # as in Ansible's recap: ok counts every task that succeeded, changed or not
            if outcome in ("failed", "unreachable"):
                host.failures.append((str(data.get("task", "")), _message(data.get("res", {}))))
            progress(host.host, str(data.get("task", "")), outcome)
        return False  # nothing is kept in the artifacts

    private = Path(tempfile.mkdtemp(prefix="gpufabric-nodes-"))
    try:
        result = ansible_runner.run(
            private_data_dir=str(private),
            project_dir=str(project),
            playbook=playbook,
            inventory=[str(definition.resolve()), *(str(p.resolve()) for p in options.extra_inventories)],
            cmdline=" ".join(flag for flag, on in (("--check", options.check), ("--diff", options.diff)) if on) or None,
            limit=options.limit,
            tags=options.tags,
            skip_tags=options.skip_tags,
            extravars=dict(options.extravars) or None,
            envvars=_environment(project),
            event_handler=on_event,
            quiet=True,
            suppress_env_files=True,
        )
        rc = result.rc if result.rc is not None else 1
    finally:
        shutil.rmtree(private, ignore_errors=True)
    return NodesRun(rc, tuple(sorted(hosts.values(), key=lambda h: h.host)), tuple(tail))


def targeted_hosts(definition: Path, options: RunOptions, playbook: str = SITE, project: Path | None = None) -> tuple[str, ...]:
    """The hosts the playbook's plays select with these options (``ansible-playbook --list-hosts``); empty if it fails.

    Raises:
        ProjectMissingError: no ``project`` given and none found (see ``project_dir``).
    """
    project = project or project_dir(playbook)
    command = [str(Path(sys.executable).parent / "ansible-playbook"), playbook, "--list-hosts"]
    for inventory in (definition, *options.extra_inventories):
        command += ["-i", str(inventory.resolve())]
    for flag, value in (("--limit", options.limit), ("--tags", options.tags), ("--skip-tags", options.skip_tags)):
        if value:
            command += [flag, value]
    if options.extravars:
        command += ["-e", json.dumps(dict(options.extravars))]
    environment = {**os.environ, **_environment(project)}
    done = subprocess.run(command, cwd=project, env=environment, capture_output=True, text=True, timeout=300, check=False)  # noqa: S603 - argv, no shell
    hosts: dict[str, None] = {}
    listing = False
    for line in done.stdout.splitlines() if done.returncode == 0 else ():
        if line.strip().startswith("hosts ("):
            listing = True
        elif listing and line.startswith("      ") and line.strip():
            hosts[line.strip()] = None
        else:
            listing = False
    return tuple(hosts)


def _environment(project: Path) -> dict[str, str]:
    # ansible-playbook and its helpers are found on PATH: put this interpreter's bin first (a venv need not be activated).
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return {"PATH": path, "ANSIBLE_CONFIG": str(project / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}


def _outcome(kind: str, data: Mapping[str, Any]) -> str | None:
    if kind == "runner_on_ok":
        return "changed" if data.get("res", {}).get("changed") else "ok"
    return {"runner_on_failed": "failed", "runner_on_unreachable": "unreachable", "runner_on_skipped": "skipped"}.get(kind)


def _message(res: Mapping[str, Any]) -> str:
    for key in ("msg", "stderr", "stdout"):
        text = res.get(key)
        if text:
            return str(text).strip()
    return "failed"
