"""Defence in depth: even a value that got past the model (built in code, not loaded) cannot add a config line."""

from __future__ import annotations

import dataclasses
import re
import shlex

import pytest

from fabric.errors import RenderError
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.plan.compute.facts import build_switch_facts
from fabric.render import guards, render_configs, render_switch
from fabric.render.avd.compute import render_avd
from fabric.render.guards import guard, one_line, token
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


# One case per NOS: its definition, and the template (or file) that first prints a host port's name and description.
NOS_CASES = {
    "eos": ("render/eos/cluster.yaml", "eos/interfaces"),  # a section built in Python (fabric/render/nos/eos/text.py)
    "nxos": ("render/nxos/cluster.yaml", "nxos/interfaces.j2"),
    "cumulus": ("render/cumulus/cluster.yaml", "cumulus/interfaces"),  # a section built in Python (fabric/render/nos/cumulus/ports.py)
    "mlnx-os": ("render/mlnxos/cluster.yaml", "mlnxos/interfaces.j2"),
    "frr": ("../../inventories/lab/cluster.yaml", "frr.conf"),  # built in Python (fabric.render.nos.frr), named by its file
    "sonic": ("render/sonic/cluster.yaml", "config_db.json PORT|"),
}


def _render_with_host_link(definition: str, **change: str) -> None:
    """Render every switch of ``definition`` after changing its first host link as ``change`` says (past the model)."""
    plan = plan_cluster(load_cluster(DATA / definition))
    assert plan.fabric is not None
    links = list(plan.fabric.links)
    first = next(i for i, link in enumerate(links) if link.kind == "host")
    links[first] = dataclasses.replace(links[first], **change)
    hostile = dataclasses.replace(plan, fabric=dataclasses.replace(plan.fabric, links=tuple(links)))
    for facts in build_switch_facts(hostile):
        render_switch(facts)


@pytest.mark.parametrize("nos", sorted(NOS_CASES))
def test_a_line_break_in_a_description_is_refused_naming_value_and_template(nos: str) -> None:
    definition, where = NOS_CASES[nos]
    with pytest.raises(RenderError, match=rf"{re.escape(where)}.*refusing to render '[^']*eth1\\nip route 0.0.0.0/0 blackhole'"):
        _render_with_host_link(definition, b_port="eth1\nip route 0.0.0.0/0 blackhole")


@pytest.mark.parametrize("nos", sorted(set(NOS_CASES) - {"sonic"}))
def test_a_port_name_that_is_not_one_word_is_refused_naming_value_and_template(nos: str) -> None:
    definition, where = NOS_CASES[nos]
    plan = plan_cluster(load_cluster(DATA / definition))
    assert plan.fabric is not None
    port = next(link.a_port for link in plan.fabric.links if link.kind == "host")
    with pytest.raises(RenderError, match=rf"^{re.escape(where)}: refusing to render '[^']*; reboot' where one \S+ word goes"):
        _render_with_host_link(definition, a_port=f"{port} ; reboot")


def test_sonic_refuses_a_port_name_outside_the_sku_and_a_key_part_that_is_not_one_word() -> None:
    with pytest.raises(RenderError, match=r"ports \['Ethernet0 ; reboot'\] are not in SONiC SKU"):
        _render_with_host_link("render/sonic/cluster.yaml", a_port="Ethernet0 ; reboot")
    plan = plan_cluster(load_cluster(DATA / "render/sonic/cluster.yaml"))
    assert plan.fabric is not None
    leaf = dataclasses.replace(plan.fabric.leaves[0], mgmt_interface="eth0 x")
    facts = build_switch_facts(dataclasses.replace(plan, fabric=dataclasses.replace(plan.fabric, leaves=(leaf, *plan.fabric.leaves[1:]))))
    mine = next(f for f in facts if f.switch.name == leaf.name)
    with pytest.raises(RenderError, match=r"^config_db.json MGMT_PORT\|eth0 x: refusing to render 'eth0 x' where one sonic word goes"):
        render_switch(mine)


def test_cumulus_quotes_a_description_as_one_shell_word() -> None:
    """A quote in free text stays inside the one word the NVUE line gives it (the adapter splits lines with shlex)."""
    plan = plan_cluster(load_cluster(DATA / "render/cumulus/cluster.yaml"))
    assert plan.fabric is not None
    link = next(link for link in plan.fabric.links if link.kind == "host")
    nvue = ""
    links = tuple(dataclasses.replace(x, b_port="eth1'; reboot; echo '") if x is link else x for x in plan.fabric.links)
    for facts in build_switch_facts(dataclasses.replace(plan, fabric=dataclasses.replace(plan.fabric, links=links))):
        if facts.switch.name == link.a_device:
            nvue = render_switch(facts)["nvue.sh"]
    line = next(line for line in nvue.splitlines() if f"interface {link.a_port} description" in line)
    assert shlex.split(line)[-1] == f"{link.b_device}:eth1'; reboot; echo '"
    assert len(shlex.split(line)) == len(["nv", "set", "interface", link.a_port, "description", "text"])


@pytest.mark.parametrize("nos", ["eos", "nxos", "frr", "mlnxos", "cumulus", "sonic"])
@pytest.mark.parametrize("value", ["-x", "a!b", "a#b", "a?b", "a|b", "a`b", "a\\b"])
def test_no_nos_takes_a_word_that_would_end_or_change_its_line(nos: str, value: str) -> None:
    with pytest.raises(RenderError, match=f"where one {nos} word goes"):
        token(value, nos)


def test_the_avd_structured_config_is_guarded_as_the_eos_text() -> None:
    """AVD's own templates print these strings into EOS lines, so the same words and one-line rule apply."""
    plan = plan_cluster(load_cluster(DATA / "render/eos/cluster.yaml"))
    assert plan.fabric is not None
    link = next(link for link in plan.fabric.links if link.kind == "host")
    for change, refused in (
        ({"a_port": f"{link.a_port} ; reboot"}, r"\.name: refusing to render ';'"),
        ({"b_port": "eth1\nusername x"}, r"\.description: "),
    ):
        links = tuple(dataclasses.replace(x, **change) if x is link else x for x in plan.fabric.links)
        facts = build_switch_facts(dataclasses.replace(plan, fabric=dataclasses.replace(plan.fabric, links=links)))
        with pytest.raises(RenderError, match=rf"^AVD structured config {link.a_device}\.ethernet_interfaces\[\d+\]{refused}"):
            render_avd(next(f for f in facts if f.switch.name == link.a_device))


class _Numeral(int):
    """A number whose ``str()``, what a template prints, is a number and a config line."""

    def __str__(self) -> str:
        return f"{int(self)}\nreload"


class _Level(int):
    """A benign subclass (as an ``IntEnum`` is): its ``str()`` is one word."""

    def __str__(self) -> str:
        return f"{int(self)}"


@pytest.mark.parametrize("nos", ["eos", "nxos", "frr", "mlnxos", "cumulus", "sonic"])
def test_a_number_prints_as_it_is_only_when_its_type_is_int_or_float(nos: str) -> None:
    assert guard(nos, 9214) == 9214
    assert guard(nos, 0.5) == 0.5
    assert guard(nos, _Level(3)) == "3"
    assert guard(nos, True) == "True"  # noqa: FBT003 - the value under test
    with pytest.raises(RenderError, match=rf"refusing to render '9214\\nreload' where one {nos} word goes"):
        guard(nos, _Numeral(9214))


def _nxos_leaf_with_mtu(mtu: int) -> dict[str, str]:
    plan = plan_cluster(load_cluster(DATA / "render/nxos/cluster.yaml"))
    facts = next(f for f in build_switch_facts(plan) if f.switch.tier == "leaf" and f.ports)
    ports = (dataclasses.replace(facts.ports[0], mtu=mtu), *facts.ports[1:])
    return render_switch(dataclasses.replace(facts, ports=ports))


def test_a_templated_number_whose_str_adds_a_line_is_refused() -> None:
    with pytest.raises(RenderError, match=r"refusing to render '9216\\nreload' where one nxos word goes"):
        _nxos_leaf_with_mtu(_Numeral(9216))


def test_negative_control_a_guard_that_passes_numbers_lets_the_line_through(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard before: a value of any ``int`` type returned as it is, which the template then prints with ``str()``."""
    real = guards.guard
    monkeypatch.setattr(guards, "guard", lambda nos, value: value if isinstance(value, int) else real(nos, value))
    (config,) = _nxos_leaf_with_mtu(_Numeral(9216)).values()
    assert "9216\nreload\n" in config
