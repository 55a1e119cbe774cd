"""The PFC watchdog on every RoCE switch acts as the contract says: timers and action, as each NOS's config states them."""

from __future__ import annotations

import json

import pytest

from fabric.lint import lint_configs
from fabric.lint.parse.qos import CONFIG_FILE
from fabric.lint.rules import LintFinding
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.plan.types import ClusterPlan
from fabric.render import render_configs
from tests.conftest import DATA

MESSAGE = "the PFC watchdog must act as the contract says"


def rendered(case: str) -> tuple[ClusterPlan, dict[str, str | None]]:
    plan = plan_cluster(load_cluster(DATA / "render" / case / "cluster.yaml"))
    files = render_configs(plan)
    assert plan.fabric is not None
    return plan, {s.name: files.get(f"switches/{s.name}/{CONFIG_FILE[s.nos]}") for s in plan.fabric.switches}


def watchdog(findings: list[LintFinding]) -> list[tuple[str, str, str, str]]:
    return [(f.device, f.where, f.expected, f.actual) for f in findings if f.message == MESSAGE]


@pytest.mark.parametrize("case", ["eos", "nxos", "sonic", "cumulus", "eos-3tier", "nxos-3tier", "sonic-3tier", "cumulus-3tier"])
def test_rendered_watchdogs_follow_the_contract(case: str) -> None:
    plan, configs = rendered(case)
    assert watchdog(lint_configs(plan, configs)) == []


@pytest.mark.parametrize(
    ("case", "edit", "finding"),
    [
        ("eos", ("watchdog default timeout 0.2", "watchdog default timeout 0.5"), ("pfc watchdog detection", "200", "500")),
        ("eos", ("watchdog port action drop", "watchdog port action notify-only"), ("pfc watchdog action", "drop", "alert")),
        ("nxos", ("watch-dog shutdown-multiplier 2", "watch-dog shutdown-multiplier 5"), ("pfc watchdog detection", "200", "500")),
        ("nxos", ("auto-restore multiplier 2", "auto-restore multiplier 9"), ("pfc watchdog restoration", "200", "900")),
        ("cumulus", ("pfc-watchdog polling-interval 100", "pfc-watchdog polling-interval 400"), ("pfc watchdog polling", "100", "400")),
    ],
)
def test_a_timer_or_action_off_the_contract_is_a_finding(case: str, edit: tuple[str, str], finding: tuple[str, str, str]) -> None:
    old, new = edit
    plan, configs = rendered(case)
    name = sorted(configs)[0]
    assert old in (configs[name] or "")
    configs[name] = (configs[name] or "").replace(old, new)
    assert watchdog(lint_configs(plan, configs)) == [(name, *finding)]


def test_a_sonic_port_with_its_own_detection_time_shows_both_values() -> None:
    plan, configs = rendered("sonic")
    name = sorted(configs)[0]
    db = json.loads(configs[name] or "")
    first = sorted(p for p in db["PFC_WD"] if p != "GLOBAL")[0]
    db["PFC_WD"][first]["detection_time"] = "800"
    db["PFC_WD"][first]["action"] = "forward"
    configs[name] = json.dumps(db)
    assert watchdog(lint_configs(plan, configs)) == [
        (name, "pfc watchdog action", "drop", "drop,forward"),
        (name, "pfc watchdog detection", "200", "200,800"),
    ]
