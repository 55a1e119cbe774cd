"""EOS compute sections written in Python (fabric/render/nos/eos/text.py): no Jinja on the way, every value still
guarded, and the branches no golden case takes (issue 36: the EOS per-switch cost)."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.bench_render import eos_fabric
from fabric.errors import RenderError
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.plan.compute.facts import SwitchFacts, build_switch_facts
from fabric.render import render_switch
from fabric.render._jinja import template  # the cached loader: its cache_info counts the templates loaded
from tests.conftest import DATA, ROOT


def _facts(case: str) -> tuple[SwitchFacts, ...]:
    return build_switch_facts(plan_cluster(load_cluster(DATA / "render" / case / "cluster.yaml")))


def _config(facts: SwitchFacts) -> str:
    return render_switch(facts)["startup-config"]


@pytest.mark.parametrize("case", ["eos-2x8", "sonic", "frr-3tier", "frr-shared", "sonic-shared"])
def test_a_render_whose_switches_are_built_in_python_imports_no_jinja(case: str, tmp_path: Path) -> None:
    """Jinja is imported with the first template (fabric.render._jinja), and these NOSes' compute switches load none
    (the bench's EOS fabric: compute switches only; the render/eos case also has templated storage and OOB switches;
    a shared spine's frr.conf was the template frr-vrfs.conf.j2 until fabric.render.nos.frr.render_vrf_conf)."""
    definition = DATA / "render" / case / "cluster.yaml"
    if case == "eos-2x8":
        definition = tmp_path / "eos.yaml"
        definition.write_text(eos_fabric(2, 8), encoding="utf-8")
    words = ["render", str(definition), "-o", str(tmp_path / "out"), "--jobs", "1"]
    code = (
        "import contextlib, io, sys\nfrom fabric.cli import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()):\n    assert main({words!r}) == 0\n"
        "print(sorted(m for m in sys.modules if m == 'jinja2' or m.startswith(('jinja2.', 'fabric.render._jinja'))))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "[]"


def test_an_eos_compute_switch_loads_no_template_and_a_shared_spine_only_its_vrf_sections() -> None:
    template.cache_clear()
    for facts in _facts("eos"):
        _config(facts)
    assert template.cache_info().currsize == 0
    for facts in _facts("eos-shared"):
        _config(facts)
    loaded = {name for name in ("eos/vrfs.j2", "eos/vrf-policy.j2", "eos/vrf-bgp.j2") if template(name)}
    assert template.cache_info().currsize == len(loaded) == 3


def _leaf() -> SwitchFacts:
    return next(f for f in _facts("eos") if f.switch.name.startswith("leaf"))


def test_a_cnp_queue_without_strict_priority_and_no_pfc_watchdog() -> None:
    """AVD qos-profiles.j2: ``no priority`` on a queue that is not strict; no watchdog line once it is off."""
    facts = _leaf()
    assert facts.roce is not None
    cnp = facts.roce.cnp.model_copy(update={"strict": False})
    roce = facts.roce.model_copy(update={"cnp": cnp, "pfc_watchdog": facts.roce.pfc_watchdog.model_copy(update={"enabled": False})})
    text = _config(dataclasses.replace(facts, roce=roce))
    queue = f"   uc-tx-queue {roce.cnp.traffic_class}\n      no priority\n!\n"
    assert queue in text
    assert "watchdog" not in text
    assert "      priority strict\n" in _config(facts)


def test_adaptive_routing_and_no_roce() -> None:
    """EOS DLB (AVD ip-hardware.j2) before ``ip routing``; a switch without RoCE has no QoS map, profile or service-profile."""
    facts = _leaf()
    lb = facts.load_balancing.model_copy(update={"adaptive_routing": True})
    assert "ip hardware fib load-balance distribution dynamic\n!\nip routing\n" in _config(dataclasses.replace(facts, load_balancing=lb))
    plain = _config(dataclasses.replace(facts, roce=None, ports=tuple(dataclasses.replace(p, lossless=False) for p in facts.ports)))
    assert "qos" not in plain
    assert "service-profile" not in plain
    assert "priority-flow-control" not in plain


@pytest.mark.parametrize(
    ("field", "value", "section"),
    [("domain", "a b", "management"), ("allowed_prefix", "10.0.0.0/8 any", "acl"), ("gateway", "10.1.1.1\nreload", "routing")],
)
def test_a_refused_value_names_its_section(field: str, value: str, section: str) -> None:
    facts = _leaf()
    hostile = dataclasses.replace(facts, management=dataclasses.replace(facts.management, **{field: value}))
    with pytest.raises(RenderError, match=rf"^eos/{section}: refusing to render {re.escape(repr(value))}"):
        _config(hostile)


@pytest.mark.parametrize(("case", "imports"), [("nxos", True), ("cumulus", True), ("mlnxos", True), ("sonic", False), ("frr-3tier", False)])
def test_templates_first_imports_jinja_only_for_a_templated_nos(case: str, imports: bool) -> None:
    """``templates_first``: Jinja before the render workers fork when a compute switch prints through templates, so
    each worker does not import it again; never for a plan of switches built in Python."""
    code = (
        "import sys\nfrom fabric.model import load_cluster\nfrom fabric.plan import plan_cluster\n"
        "from fabric.render import templates_first\n"
        f"did = templates_first(plan_cluster(load_cluster({str(DATA / 'render' / case / 'cluster.yaml')!r})))\n"
        "print(did, 'jinja2' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(imports), str(imports)]
