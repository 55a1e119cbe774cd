"""The RoCE contract linter: switch configs (rendered or hand-written) against the NIC side of the contract."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from fabric.errors import Finding, InputError
from fabric.lint.parse.qos import CONFIG_FILE
from fabric.lint.rules import LintFinding, lint_configs
from fabric.plan.types import ClusterPlan

MAX_CONFIG_BYTES = 64 * 1024 * 1024  # a large switch's running config is a few MB

__all__ = ["LintFinding", "config_paths", "lint_configs", "read_configs"]


def read_configs(plan: ClusterPlan, directory: Path, files: Mapping[str, str] | None = None) -> dict[str, str | None]:
    """Each switch's config from ``<directory>/switches/<name>/<file>`` (the layout ``render`` writes); None when missing.

    ``files`` names other switches to read (switch -> file, e.g. the storage switches); by default the compute switches.

    Raises:
        InputError: a config file cannot be read or is not UTF-8 text.
    """
    configs: dict[str, str | None] = {}
    wanted = files if files is not None else {s.name: CONFIG_FILE.get(s.nos) for s in (plan.fabric.switches if plan.fabric else ())}
    for name, file in wanted.items():
        path = directory / "switches" / name / file if file else None
        try:
            if path is not None and path.is_file() and path.stat().st_size > MAX_CONFIG_BYTES:
                msg = f"switch {name}: its config is larger than {MAX_CONFIG_BYTES} bytes; that is no switch config"
                raise InputError([Finding((), msg, file=str(path))], str(path))
            configs[name] = path.read_text(encoding="utf-8") if path is not None and path.is_file() else None
        except (OSError, UnicodeDecodeError) as exc:
            msg = f"switch {name}: cannot read its config ({exc}); it must be a readable UTF-8 text file"
            raise InputError([Finding((), msg, file=str(path))], str(path)) from exc
    return configs


def config_paths(plan: ClusterPlan, directory: Path) -> dict[str, str]:
    """Where ``read_configs`` looks for each switch's config."""
    return {
        s.name: str(directory / "switches" / s.name / CONFIG_FILE[s.nos])
        for s in (plan.fabric.switches if plan.fabric else ())
        if s.nos in CONFIG_FILE
    }
