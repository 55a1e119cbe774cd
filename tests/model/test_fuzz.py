"""Property: generated and mutated definitions go through load, validate, plan and render, and nothing escapes but
the project's own error type (``FabricError``).

Two mutators start from the committed examples: one replaces, removes or adds values anywhere in the parsed document
(hostile values: huge and negative numbers, booleans, floats, line breaks, quotes, control characters, nested
containers), the other splices characters into the YAML text (control characters, quotes, brackets, anchors and
aliases, tags). The example count is bounded so the test stays fast in CI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric.errors import FabricError
from fabric.model.loader import parse_cluster
from fabric.plan import check_and_plan
from fabric.render import render_configs
from tests.conftest import DATA, EXAMPLES

SOURCES = [*EXAMPLES, *sorted((DATA / "render").glob("*/cluster.yaml"))]
TEXTS = {path.parent.name: path.read_text(encoding="utf-8") for path in SOURCES}
HOSTILE_VALUES = st.one_of(
    st.sampled_from(
        [
            None,
            True,
            0,
            -1,
            4.0,
            1e308,
            10**20,
            "",
            "1:0",
            "eth1\nip route 0.0.0.0/0 blackhole",
            "x'; reboot; echo '",
            "$(touch /tmp/x)",
            "[/bold]",
            "\x1b[2J",
            "a" * 5000,
            "{index:0200000000d}",
            "n{index}",
            "0.0.0.0/0",
            "10.0.0.0/33",
            [],
            {},
            [[[[]]]],
            {"password": "hunter2"},
        ]
    ),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.text(max_size=40),
)
SPLICES = st.sampled_from(
    ["\x00", "\x07", "\t", "'", '"', "[", "{", "}", ": ", "- ", "&a ", "*a", "!!binary ", "!!set ", "<<: ", "\n  ", "\ufeff", "#"]
)


def _run(text: str) -> None:
    """Load, validate, plan and render; only a FabricError may come out."""
    try:
        spec, _ = parse_cluster(text, "fuzz.yaml")
        findings, plan = check_and_plan(spec)
        if plan is not None and plan.fabric is not None:
            render_configs(plan)
        assert plan is not None or any(f.severity == "error" for f in findings)
    except FabricError:
        return


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(data, dict):
        for key, value in data.items():
            found.extend(_paths(value, (*prefix, key)))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found.extend(_paths(value, (*prefix, index)))
    return found


@st.composite
def mutated_documents(draw: st.DrawFn) -> str:
    data = yaml.safe_load(TEXTS[draw(st.sampled_from(sorted(TEXTS)))])
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = [p for p in _paths(data) if p]
        path = draw(st.sampled_from(paths))
        parent = data
        for part in path[:-1]:
            parent = parent[part]
        action = draw(st.sampled_from(["replace", "remove", "add"]))
        if action == "remove" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "password", "ssh_key", "description", "name"]))] = draw(HOSTILE_VALUES)
        else:
            parent[path[-1]] = draw(HOSTILE_VALUES)
    return yaml.safe_dump(data, allow_unicode=True)


@st.composite
def spliced_texts(draw: st.DrawFn) -> str:
    text = TEXTS[draw(st.sampled_from(sorted(TEXTS)))]
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        at = draw(st.integers(min_value=0, max_value=len(text)))
        text = text[:at] + draw(SPLICES) + text[at:]
    return text


TOP_KEYS = ["name", "target", "description", "aws", "gcp", "azure", "planes", "fabric", "roce", "infiniband", "switches", "nodes"]
VALUES = st.recursive(
    HOSTILE_VALUES, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=12
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.dictionaries(st.sampled_from(TOP_KEYS), VALUES, max_size=len(TOP_KEYS)))
def test_generated_documents_raise_only_fabric_errors(data: dict[str, Any]) -> None:
    _run(yaml.safe_dump(data, allow_unicode=True))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated_documents())
def test_mutated_documents_raise_only_fabric_errors(text: str) -> None:
    _run(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(spliced_texts())
def test_spliced_texts_raise_only_fabric_errors(text: str) -> None:
    _run(text)


def test_the_sources_themselves_plan_and_render() -> None:
    for name, text in TEXTS.items():
        spec, _ = parse_cluster(text, name)
        findings, plan = check_and_plan(spec)
        assert plan is not None, [str(f) for f in findings]


def test_a_path_is_a_real_file() -> None:
    assert all(Path(p).is_file() for p in SOURCES)
