"""The SONiC render checks a switch's inputs instead of its whole output where that is no looser (issue 36): the per-port
config_db tables through the facts' descriptions and addresses, the SKU layout and the shared QoS tables once per
build, frr.conf's words in one regex. Every refusal the output guard made is still made, naming what it refuses."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from fabric.errors import RenderError
from fabric.plan.compute.facts import PortFacts, SwitchFacts, build_switch_facts
from fabric.render.guards import TOKEN_RE, all_words
from fabric.render.nos import frr
from fabric.render.nos.frr import render_frr_conf
from fabric.render.nos.sonic import compute
from fabric.render.nos.sonic.compute import build_config_db, render_sonic
from fabric.render.nos.sonic.guard import guard_config_db
from fabric.render.nos.sonic.qos import port_tables, qos_inputs
from tests.render.conftest import plan_of

SONIC_CASES = ["render/sonic", "render/sonic-202405", "render/sonic-3tier", "render/sonic-mixed", "render/sonic-shared", "onprem-roce"]


def _facts(case: str) -> list[SwitchFacts]:
    return [f for f in build_switch_facts(plan_of(case)) if f.switch.nos == "sonic"]


@pytest.fixture(scope="module")
def leaf() -> SwitchFacts:
    return next(f for f in _facts("render/sonic") if f.switch.tier == "leaf" and any(p.address for p in f.ports))


def _with_port(facts: SwitchFacts, **change: Any) -> SwitchFacts:
    """``facts`` with its first numbered port changed as ``change`` says (past the model)."""
    index = next(i for i, p in enumerate(facts.ports) if p.address)
    ports = list(facts.ports)
    ports[index] = dataclasses.replace(ports[index], **change)
    return dataclasses.replace(facts, ports=tuple(ports))


@pytest.mark.parametrize("case", SONIC_CASES)
def test_what_the_input_checks_pass_the_output_guard_passes(case: str) -> None:
    """Every config_db the render lets through, its own tables checked through their inputs, the whole guard passes."""
    facts = _facts(case)
    assert facts
    for f in facts:
        db = build_config_db(f)
        assert guard_config_db(db) is db


@pytest.mark.parametrize("case", SONIC_CASES)
def test_the_text_assembled_table_by_table_is_the_standard_encoding(case: str) -> None:
    for f in _facts(case):
        assert render_sonic(f)["config_db.json"] == json.dumps(build_config_db(f), indent=2, sort_keys=True) + "\n"


def _config_db_text(facts: SwitchFacts) -> object:
    return render_sonic(facts)["config_db.json"]


# The dict the tests and other renderers read, and the text the render writes (PORT from the SKU's pieces, port_text).
BUILDERS = pytest.mark.parametrize("build", [build_config_db, _config_db_text], ids=["dict", "text"])


@BUILDERS
@pytest.mark.parametrize("peer_port", ["eth1\nip route 0.0.0.0/0 blackhole", "eth1\x1b[2J", "eth1\u2028x"])
def test_a_hostile_description_is_refused_in_port(leaf: SwitchFacts, peer_port: str, build: Callable[[SwitchFacts], object]) -> None:
    hostile = _with_port(leaf, peer_port=peer_port)
    with pytest.raises(RenderError, match=r"^config_db.json PORT\|Ethernet\d+: refusing to render .*line break or control character"):
        build(hostile)


@pytest.mark.parametrize("peer_port", ['eth"1', "eth\\1", "eth\u00e91", "eth1\t"])
def test_a_description_to_escape_is_written_as_the_encoder_writes_it(leaf: SwitchFacts, peer_port: str) -> None:
    """A quote, a backslash or non-ASCII text leave the SKU's pieces for the encoder (a tab is refused as a control)."""
    hostile = _with_port(leaf, peer_port=peer_port)
    if peer_port.endswith("\t"):
        with pytest.raises(RenderError, match="line break or control character"):
            render_sonic(hostile)
        return
    assert render_sonic(hostile)["config_db.json"] == json.dumps(build_config_db(hostile), indent=2, sort_keys=True) + "\n"


@BUILDERS
@pytest.mark.parametrize("address", ["10.0.0.0/31 x", "10.0.0.0/31\n", "-10.0.0.0/31", ""])
def test_a_hostile_address_is_refused_as_an_interface_key_part(leaf: SwitchFacts, address: str, build: Callable[[SwitchFacts], object]) -> None:
    """An empty address makes the port unnumbered (no key); the others would be an ``INTERFACE`` key part."""
    hostile = _with_port(leaf, address=address)
    if not address:
        assert f"{hostile.ports[0].name}|" not in "".join(build_config_db(hostile)["INTERFACE"])
        return
    with pytest.raises(RenderError, match=r"^config_db.json INTERFACE\|Ethernet\d+\|[\s\S]*: refusing to render .* where one sonic word goes"):
        build(hostile)


@BUILDERS
def test_a_hostile_port_name_is_refused_before_any_table(leaf: SwitchFacts, build: Callable[[SwitchFacts], object]) -> None:
    with pytest.raises(RenderError, match=re.escape("ports ['Ethernet0 x'] are not in SONiC SKU")):
        build(_with_port(leaf, name="Ethernet0 x"))


@pytest.mark.parametrize("name", ["leaf 1", "leaf1\nfoo", "-leaf1"])
def test_a_hostile_hostname_is_refused(leaf: SwitchFacts, name: str) -> None:
    hostile = dataclasses.replace(leaf, switch=dataclasses.replace(leaf.switch, name=name))
    with pytest.raises(RenderError, match=r"^config_db.json DEVICE_METADATA\|localhost: refusing to render"):
        render_sonic(hostile)


def test_the_shared_qos_tables_refuse_a_hostile_port_name(leaf: SwitchFacts) -> None:
    """``port_tables`` guards what it builds before anyone gets it (and caches nothing it refused)."""
    assert leaf.roce is not None
    sku, _ = compute._sku(leaf)  # pyright: ignore[reportPrivateUsage]
    inputs = qos_inputs(leaf.roce, sku.buffers, leaf.switch.nos_version)
    for _ in range(2):
        with pytest.raises(RenderError, match=r"^config_db.json \w+\|Ethernet0 x"):
            port_tables(inputs, ("Ethernet0", "Ethernet0 x"))
    assert port_tables(inputs, ("Ethernet0",)) is port_tables(inputs, ("Ethernet0",))


def test_the_sku_layout_is_guarded(leaf: SwitchFacts) -> None:
    row = ("Ethernet0", {"alias": "etp1 x", "index": "1", "lanes": "0,1,2,3", "speed": "400000", "subport": "1"}, ("1", "Ethernet0", "1x400G"))
    with pytest.raises(RenderError, match=r"^config_db.json PORT\|Ethernet0: refusing to render 'etp1 x'"):
        compute._layout((row,), 9100)  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize(
    ("where", "value", "refusal"),
    [
        ("description", "eth1\nip route 0.0.0.0/0 blackhole", "line break or control character"),
        ("name", "Ethernet0 x", "where one frr word goes"),
        ("name", "", "where one frr word goes"),
        ("address", "10.0.0.0/31 x", "where one frr word goes"),
        ("address", "-x", "where one frr word goes"),
    ],
)
def test_frr_refuses_a_hostile_port_value(leaf: SwitchFacts, where: str, value: str, refusal: str) -> None:
    """One regex over every word and one over every description: a space, an empty or leading-dash word still fails."""
    change = {"peer_port": value} if where == "description" else {where: value}
    with pytest.raises(RenderError, match=rf"^frr\.conf: refusing to render .*{refusal}"):
        render_frr_conf(_with_port(leaf, **change), management=False, sonic=True)


def test_frr_prints_a_missing_loopback_as_the_template_did(leaf: SwitchFacts) -> None:
    """A value that is not a string (no loopback) leaves the one-regex check for ``_w`` value by value, as before."""
    text = render_frr_conf(dataclasses.replace(leaf, switch=dataclasses.replace(leaf.switch, loopback=None)), management=False, sonic=True)
    assert "interface lo\n ip address None\n" in text


@pytest.mark.parametrize("nos", sorted(TOKEN_RE))
@pytest.mark.parametrize("values", [["a", "b c"], ["a", ""], ["a", "-b"], ["a\n", "b"], ["a", "b|c d"], ["a", "é"]])
def test_all_words_agrees_with_the_token_regex(nos: str, values: list[str]) -> None:
    assert all_words(nos, values) == all(TOKEN_RE[nos].fullmatch(v) for v in values)
    assert all_words(nos, ["Ethernet0", "10.0.0.0/31", "x@y:z+1"])


@pytest.mark.parametrize("case", ["render/sonic", "onprem-roce", "render/cumulus-3tier"])
def test_port_facts_are_built_as_before(case: str) -> None:
    """The facts build each port in place (``fabric.plan.compute.facts``): both ends of every link as ``_port`` did."""
    plan = plan_of(case)
    assert plan.fabric is not None
    mtu, lossless = plan.fabric.mtu, plan.plane("compute").transport == "roce"
    ports = {(f.switch.name, p.name): p for f in build_switch_facts(plan) for p in f.ports}
    ends = 0
    for lk in plan.fabric.links:
        sides = [(lk.a_device, lk.a_port, lk.b_device, lk.b_port, lk.a_address, lk.b_address)]
        if lk.kind == "fabric":
            sides.append((lk.b_device, lk.b_port, lk.a_device, lk.a_port, lk.b_address, lk.a_address))
        for device, port, peer, peer_port, address, peer_address in sides:
            with_len = f"{address}/31" if address is not None and lk.subnet is not None else None
            want = PortFacts(port, lk.kind, peer, peer_port, lk.speed_gbps, mtu, lk.cable_m, with_len, peer_address, lossless)
            assert ports[device, port] == want
            ends += 1
    assert ends == len(ports)


@BUILDERS
def test_an_address_holding_a_bar_is_refused_though_each_part_is_a_word(leaf: SwitchFacts, build: Callable[[SwitchFacts], object]) -> None:
    """``10.0.0.0/31|x`` splits into two words that each pass: the INTERFACE key's part count refuses it (it passed before)."""
    hostile = _with_port(leaf, address="10.0.0.0/31|x")
    with pytest.raises(RenderError, match=r"config_db.json INTERFACE\|Ethernet\d+\|10.0.0.0/31\|x: 3 key parts where INTERFACE has at most 2"):
        build(hostile)


def test_the_guard_refuses_an_interface_key_with_a_part_too_many() -> None:
    from fabric.render.nos.sonic.guard import guard_config_db

    ok = {"INTERFACE": {"Ethernet0": {}, "Ethernet0|10.0.0.0/31": {}}, "BUFFER_PG": {"Ethernet0|3": {"profile": "x"}}}
    assert guard_config_db(ok) is ok
    with pytest.raises(RenderError, match="3 key parts where LOOPBACK_INTERFACE has at most 2"):
        guard_config_db({"LOOPBACK_INTERFACE": {"Loopback0|10.0.0.1/32|x": {}}})


class _Masked(str):
    """An address whose characters are one word but whose ``str()``, what an f-string prints, adds a key part."""

    __slots__ = ()

    def __str__(self) -> str:
        return f"{super().__str__()}|x"


def _all_words_reading_characters(nos: str, values: Sequence[object]) -> bool:
    """``all_words`` without its exact-type check: the join alone, which reads a subclass's characters."""
    text = " ".join(str.__str__(v) if isinstance(v, str) else "" for v in values)
    return text.count(" ") == len(values) - 1 and all(TOKEN_RE[nos].fullmatch(part) for part in text.split(" "))


def test_an_address_whose_str_is_not_its_characters_is_refused(leaf: SwitchFacts) -> None:
    """frr.conf prints the address with an f-string, config_db joins it into a key: both print its ``str()``."""
    hostile = _with_port(leaf, address=_Masked("10.0.0.0/31"))
    with pytest.raises(RenderError, match=r"^frr\.conf: refusing to render '10.0.0.0/31\|x' where one frr word goes"):
        render_frr_conf(hostile, management=False, sonic=True)
    with pytest.raises(RenderError, match=r"INTERFACE\|Ethernet\d+\|10.0.0.0/31\|x: 3 key parts where INTERFACE has at most 2"):
        build_config_db(hostile)


def test_negative_control_a_word_check_reading_characters_prints_the_masked_address(leaf: SwitchFacts, monkeypatch: pytest.MonkeyPatch) -> None:
    """Why ``all_words`` checks each value's type (it read the characters alone before): the masked address printed."""
    hostile = _with_port(leaf, address=_Masked("10.0.0.0/31"))
    monkeypatch.setattr(frr, "all_words", _all_words_reading_characters)
    monkeypatch.setattr(compute, "all_words", _all_words_reading_characters)
    assert re.search(r"\n ip address 10\.0\.0\.0/31\|x\n", render_frr_conf(hostile, management=False, sonic=True))
    assert any(key.endswith("|10.0.0.0/31|x") for key in build_config_db(hostile)["INTERFACE"])


class _Formatted(str):
    """An address whose ``str()``, what the guard checks, is one word, but whose ``format()``, what an f-string prints,
    adds a config line."""

    __slots__ = ()

    def __format__(self, spec: str) -> str:
        return f"{super().__format__(spec)}\nrouter bgp 666"


def test_frr_prints_what_the_guard_checked_not_a_values_own_format(leaf: SwitchFacts) -> None:
    """A value that is not a plain ``str`` takes the one-by-one path, which prints ``str(_w(value))`` as a template did."""
    text = render_frr_conf(_with_port(leaf, address=_Formatted("10.0.0.0/31")), management=False, sonic=True)
    assert "router bgp 666" not in text
    assert "\n ip address 10.0.0.0/31\nexit\n" in text


def test_negative_control_printing_the_checked_value_itself_prints_its_format(leaf: SwitchFacts, monkeypatch: pytest.MonkeyPatch) -> None:
    """The one-by-one path before: each value checked by the guard, then the value itself printed by an f-string."""
    guard = frr._w  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(frr, "_p", lambda value: (guard(value), value)[1])
    text = render_frr_conf(_with_port(leaf, address=_Formatted("10.0.0.0/31")), management=False, sonic=True)
    assert "\n ip address 10.0.0.0/31\nrouter bgp 666\n" in text
