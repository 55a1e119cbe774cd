"""Cumulus's per-port sections in Python (``fabric.render.nos.cumulus.ports``): the plain path (values checked all at
once, lines written from them) prints what the guarded path (every value through the templates' guard) prints, takes
every bundled Cumulus fabric, and refuses nothing less than the guard refuses."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

import pytest

from fabric.errors import RenderError
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.plan.compute.facts import SwitchFacts, build_switch_facts
from fabric.render import render_switch
from fabric.render.guards import TOKEN_RE, all_words
from fabric.render.nos.cumulus import ports
from tests.conftest import DATA

CASES = ["cumulus", "cumulus-5.9", "cumulus-5.15", "cumulus-3tier", "cumulus-2plane", "thor2-cumulus"]


def _facts(case: str) -> tuple[SwitchFacts, ...]:
    return build_switch_facts(plan_cluster(load_cluster(DATA / "render" / case / "cluster.yaml")))


def _refuse(value: object) -> object:
    msg = f"the guarded path ran for {value!r}"
    raise AssertionError(msg)


@pytest.mark.parametrize("case", CASES)
def test_a_bundled_fabric_takes_the_plain_path_and_prints_what_the_guarded_path_prints(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    facts = _facts(case)
    with monkeypatch.context() as patched:
        patched.setattr(ports, "_guarded", _refuse)  # the plain path calls no guard: a guarded value would fail here
        plain = [render_switch(f)["nvue.sh"] for f in facts]
    with monkeypatch.context() as patched:
        patched.setattr(ports, "_plain", lambda *_: False)  # every value through the guard, as the templates did
        guarded = [render_switch(f)["nvue.sh"] for f in facts]
    assert plain == guarded
    assert any("link mtu" in text for text in plain)


def _hostile(**change: object) -> Iterator[str]:
    """Each switch's config after the first cabled port of the first leaf is changed as ``change`` says (past the model)."""
    for facts in _facts("cumulus"):
        if facts.switch.tier == "leaf" and facts.ports:
            port = dataclasses.replace(facts.ports[0], **change)
            yield render_switch(dataclasses.replace(facts, ports=(port, *facts.ports[1:])))["nvue.sh"]
            return


class _Masked(str):
    """Text whose characters are one NVUE word but whose ``str()``, what a line prints, is two shell commands."""

    __slots__ = ()

    def __str__(self) -> str:
        return f"{super().__str__()};reboot"


HOSTILE: list[tuple[dict[str, object], str]] = [
    ({"name": "swp1 swp2"}, "'swp1 swp2' where one cumulus word goes"),  # two words: the joined regex alone would pass it
    ({"name": "-swp1"}, "'-swp1' where one cumulus word goes"),
    ({"name": ""}, "'' where one cumulus word goes"),
    ({"name": _Masked("swp1")}, "'swp1;reboot' where one cumulus word goes"),  # a str subclass: its characters would pass
    ({"address": "10.0.0.0/31;reboot"}, "'10.0.0.0/31;reboot' where one cumulus word goes"),
    ({"mtu": "9000 x"}, "'9000 x' where one cumulus word goes"),
    ({"peer": "gpu01\nnv unset"}, r"'gpu01\\nnv unset:\S+': a line break or control character"),
]


@pytest.mark.parametrize(("change", "refused"), HOSTILE)
def test_a_value_the_guard_refuses_is_refused_naming_the_section(change: dict[str, object], refused: str) -> None:
    with pytest.raises(RenderError, match=f"^cumulus/interfaces: refusing to render {refused}"):
        list(_hostile(**change))


@pytest.mark.parametrize(("change", "refused"), HOSTILE)
def test_negative_control_without_the_plain_check_each_hostile_value_prints(
    change: dict[str, object], refused: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refusals above can fail: the plain path prints what it is given, so ``_plain`` alone keeps these values off it."""
    monkeypatch.setattr(ports, "_plain", lambda *_: True)
    (config,) = _hostile(**change)
    (value,) = change.values()
    assert str(value) in config, refused


def _all_words_taking_subclasses(nos: str, values: Sequence[object]) -> bool:
    """``all_words`` without its exact-type check: the join alone, which reads a subclass's characters."""
    text = " ".join(str.__str__(v) if isinstance(v, str) else "" for v in values)
    return text.count(" ") == len(values) - 1 and all(TOKEN_RE[nos].fullmatch(part) for part in text.split(" "))


def test_negative_control_a_word_check_taking_str_subclasses_prints_the_masked_word(monkeypatch: pytest.MonkeyPatch) -> None:
    """Why ``all_words`` checks each value's type: without it the masked name prints as two commands."""
    monkeypatch.setattr(ports, "all_words", _all_words_taking_subclasses)
    (config,) = _hostile(name=_Masked("swp1"))
    assert "nv set interface swp1;reboot link mtu 9216\n" in config


def test_the_word_check_refuses_a_str_subclass_whose_characters_are_words() -> None:
    masked = ["swp1", _Masked("swp1")]
    assert _all_words_taking_subclasses("cumulus", masked)  # the characters are two words
    assert not all_words("cumulus", masked)
    assert not ports._plain(masked, (), ())  # pyright: ignore[reportPrivateUsage]
    assert ports._plain(["swp1", "swp2"], (9216,), ("gpu01:eth0",))  # pyright: ignore[reportPrivateUsage]
