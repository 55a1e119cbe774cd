"""Validate a definition file end to end: schema, model rules and fabric-wide checks, every finding located by line."""

from __future__ import annotations

import gc
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fabric.errors import Finding, InputError
from fabric.model.cluster import ClusterSpec
from fabric.model.loader import parse_cluster
from fabric.model.source import read_definition
from fabric.plan import check_and_plan
from fabric.plan.types import ClusterPlan


@dataclass(frozen=True, slots=True)
class Validated:
    """A valid definition, its warnings and its plan (the rules ran once, the plan was built while checking)."""

    spec: ClusterSpec
    warnings: tuple[Finding, ...]
    file: str
    plan: ClusterPlan


def validate_file(path: str | Path) -> Validated:
    """Read, validate, check and plan a definition; collect every problem before raising.

    Example:
        >>> validate_file("inventories/lab/cluster.yaml").spec.name
        'lab'

    Raises:
        InputError: with every error and warning, each naming file, line and YAML path.
        PlanError: a pool is exhausted or two allocations collide.
    """
    file = str(path)
    with collector_paused():
        spec, source = parse_cluster(read_definition(path), file)
        checked, plan = check_and_plan(spec)
    findings = [source.locate(f) for f in checked]
    if plan is None:
        raise InputError(findings, file)
    return Validated(spec, tuple(findings), file, plan)


@contextmanager
def collector_paused() -> Generator[None, None, None]:
    """No cyclic garbage collection inside (reference counting still frees everything), as it was after.

    Also used around a render (``fabric.cli.render``): a switch's config is big dicts and strings that hold no cycle, and
    each young collection walked the dicts still being filled (some 20 % of a render worker's time at 2,048 nodes).

    The plan of a 4,096-node cluster is some two million objects, all alive until the end: every full collection while
    they are built walks them all again (about 0.3 s of a 2.5 s plan), and finds nothing to free.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
