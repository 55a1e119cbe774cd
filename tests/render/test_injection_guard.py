"""Defence in depth: even a value that got past the model (built in code, not loaded) cannot add a config line."""

from __future__ import annotations

import pytest

from fabric.errors import RenderError
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.render import render_configs
from fabric.render._jinja import one_line, token
from tests.conftest import DATA

INJECTED = "x.com\nusername evil privilege 15 secret 0 pwned"


@pytest.mark.parametrize("nos", ["eos", "nxos"])  # the NOSes whose configs carry the DNS domain
def test_a_line_break_smuggled_past_the_model_stops_the_render(nos: str) -> None:
    spec = load_cluster(DATA / "render" / nos / "cluster.yaml")
    assert spec.fabric is not None
    management = spec.fabric.management.model_copy(update={"domain": INJECTED})
    hostile = spec.model_copy(update={"fabric": spec.fabric.model_copy(update={"management": management})})
    plan = plan_cluster(hostile)
    with pytest.raises(RenderError, match="line break or control character"):
        render_configs(plan)


@pytest.mark.parametrize("value", ["a\nb", "a\rb", "a\x00", "a\x1b[2J", "a\u2028b"])
def test_one_line_refuses_control_characters(value: str) -> None:
    with pytest.raises(RenderError):
        one_line(value)


@pytest.mark.parametrize("value", ["", "a b", "a'b", 'a"b', "a;b", "$(x)", "a\tb"])
def test_token_refuses_what_would_end_a_name(value: str) -> None:
    with pytest.raises(RenderError):
        token(value)
