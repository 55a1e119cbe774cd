"""The RoCE contract linter: switch configs (rendered or hand-written) against the NIC side of the contract."""

from __future__ import annotations

from pathlib import Path

from fabric.lint.observed import CONFIG_FILE
from fabric.lint.rules import LintFinding, lint_configs
from fabric.plan.types import ClusterPlan

__all__ = ["LintFinding", "lint_configs", "read_configs"]


def read_configs(plan: ClusterPlan, directory: Path) -> dict[str, str | None]:
    """Each switch's config from ``<directory>/switches/<name>/<file>`` (the layout ``render`` writes); None when missing."""
    configs: dict[str, str | None] = {}
    for switch in plan.fabric.switches if plan.fabric else ():
        file = CONFIG_FILE.get(switch.nos)
        path = directory / "switches" / switch.name / file if file else None
        configs[switch.name] = path.read_text(encoding="utf-8") if path is not None and path.is_file() else None
    return configs
