"""One role scenario: the definition's inventory, containers standing in for some of its hosts, a playbook run
through ``fabric.nodes.runner`` (the code ``python -m fabric nodes`` uses), and every event kept for assertions."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabric.inventory import onprem_host_vars
from fabric.model import load_cluster
from fabric.nodes.runner import NodesRun, RunOptions, run_playbook
from fabric.plan import plan_cluster
from tests.conftest import ROOT
from tests.roles.containers import Container

BIN = ROOT / ".venv" / "bin"
ENV = {**os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "NO_COLOR": "1"}


def ansible(*args: str) -> subprocess.CompletedProcess[str]:
    """Run one of the venv's Ansible programs from the repository (its ansible.cfg).

    The timeout only guards against a hang: site.yml in check mode on three containers shares two cores with the
    rest of the suite and the other roles worker in ./dev test, and took over 300 s on a loaded machine.
    """
    return subprocess.run([str(BIN / args[0]), *args[1:]], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=900, check=False)


def container_layer(workdir: Path, containers: Sequence[Container]) -> Path:
    """An inventory layered over the definition: each container's connection variables under its host name."""
    layer = workdir / "containers.yml"
    layer.write_text(json.dumps({"all": {"hosts": {c.name: c.host_vars for c in containers}}}), encoding="utf-8")
    return layer


def site(name: str) -> Path:
    return ROOT / "inventories" / name / "cluster.yaml"


def per_port_site(workdir: Path, name: str = "onprem-roce") -> Path:
    """The example with ``attach: per-port`` storage (no host bonds): each storage port its own address, as on the twin."""
    text = site(name).read_text(encoding="utf-8")
    changed = text.replace("network: {converged: true,", "network: {attach: per-port, converged: true,", 1)
    assert changed != text, f"{name}: no storage network line to make per-port"
    path = workdir / f"{name}-per-port" / "cluster.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(changed, encoding="utf-8")
    return path


def host_vars(definition: Path, host: str) -> dict[str, Any]:
    """The variables ``host`` sees from the gpufabric inventory plugin: cluster, group and its own (the plugin's code path)."""
    return onprem_host_vars(plan_cluster(load_cluster(definition)))[host]


@dataclass
class Events:
    """Every ansible-runner event of a run, with lookups by task name."""

    all: list[Mapping[str, Any]] = field(default_factory=list[Mapping[str, Any]])

    def __call__(self, event: Mapping[str, Any]) -> None:
        self.all.append(event)

    def results(self, task: str) -> list[Mapping[str, Any]]:
        """The ``res`` of every host result (not item results) of the task whose name contains ``task``."""
        return [
            e["event_data"].get("res", {"skipped": True})  # a skipped task's event may carry no result
            for e in self.all
            if e.get("event") in ("runner_on_ok", "runner_on_failed", "runner_on_skipped") and task in str(e["event_data"].get("task", ""))
        ]


def converge(
    definition: Path,
    containers: Sequence[Container],
    playbook: str | Path,
    workdir: Path,
    *,
    check: bool = False,
    skip_tags: str | None = None,
    extravars: Mapping[str, object] | None = None,
) -> tuple[NodesRun, Events]:
    """Run ``playbook`` against ``containers`` only: their connection vars layered over the definition, --limit to them."""
    layer = container_layer(workdir, containers)
    events = Events()
    options = RunOptions(
        check=check,
        diff=True,
        limit=",".join(c.name for c in containers),
        skip_tags=skip_tags,
        extra_inventories=(layer,),
        extravars=dict(extravars or {}),
    )
    result = run_playbook(definition, options, lambda *_: None, playbook=str(playbook), observe=events)
    return result, events


FAKE_OS_MODULE = """#!/usr/bin/python
# test-only: replaces the gathered OS facts, so a bookworm container stands in for another OS in check-mode plans
from ansible.module_utils.basic import AnsibleModule

module = AnsibleModule(argument_spec={"facts": {"type": "dict", "required": True}}, supports_check_mode=True)
module.exit_json(changed=False, ansible_facts=module.params["facts"])
"""


def role_playbook(workdir: Path, *roles: str, os_facts: Mapping[str, str] | None = None) -> Path:
    """A playbook that applies ``roles`` to every host, guarded so it can only ever run inside a container.

    ``os_facts`` (distribution, version, architecture, kernel …) replace the gathered ones after the guard: the
    container then stands in for that OS (check-mode plans only; its packages stay Debian's).
    """
    path = workdir / f"play-{'-'.join(roles)}.yml"
    pre_tasks: list[dict[str, object]] = [
        {
            "name": "Never the test machine itself",
            "ansible.builtin.assert": {"that": "ansible_facts.virtualization_type == 'container'"},
        }
    ]
    if os_facts:
        library = workdir / "library"  # a library/ beside the playbook is on Ansible's module path
        library.mkdir(exist_ok=True)
        (library / "gpufabric_test_os.py").write_text(FAKE_OS_MODULE, encoding="utf-8")
        pre_tasks.append({"name": "Stand in for another OS", "gpufabric_test_os": {"facts": dict(os_facts)}})
    play = [{"name": f"scenario: {', '.join(roles)}", "hosts": "all", "pre_tasks": pre_tasks, "roles": [{"role": role} for role in roles]}]
    path.write_text(json.dumps(play), encoding="utf-8")
    return path


def changed(result: NodesRun) -> dict[str, int]:
    return {h.host: h.counts["changed"] for h in result.hosts}


def failures(result: NodesRun) -> dict[str, list[tuple[str, str]]]:
    return {h.host: h.failures for h in result.hosts if h.failures}


def explain(result: NodesRun) -> object:
    """For assertion messages: per-host failures, or ansible-playbook's last lines when it failed before any host did."""
    return failures(result) or result.output_tail
