"""A shared spine's ``frr.conf`` is written in Python (``fabric.render.nos.frr.render_vrf_conf``; it was the template
``frr-vrfs.conf.j2``): the branches the frr-shared and sonic-shared goldens do not take, each a golden written from the
template's output before the template was deleted, and every value guarded as the template's ``finalize`` guarded it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from fabric.errors import RenderError
from fabric.plan.compute.facts import SwitchFacts, build_switch_facts
from fabric.plan.compute.spine_vrfs import VrfFacts, spine_vrfs
from fabric.render.nos import frr
from fabric.render.nos.frr import render_frr_conf, render_vrf_conf
from tests.conftest import DATA, check_golden
from tests.render.conftest import plan_of
from tests.render.test_shared_spines_render import dry_run

GOLDEN = DATA / "render" / "frr-shared" / "golden" / "vrf-variants"


def _spine() -> SwitchFacts:
    return next(f for f in build_switch_facts(plan_of("render/frr-shared")) if f.switch.name == "spine01")


def _unnumbered(facts: SwitchFacts) -> SwitchFacts:
    """Every session by interface and no port address (``fabric.underlay.addressing: unnumbered``), BFD off."""
    ports = tuple(dataclasses.replace(p, address=None) for p in facts.ports)
    neighbors = tuple(dataclasses.replace(n, address=None) for n in facts.neighbors)
    return dataclasses.replace(facts, ports=ports, neighbors=neighbors, underlay=facts.underlay.model_copy(update={"bfd": False}))


def _timers(facts: SwitchFacts) -> SwitchFacts:
    """BFD timers off FRR's defaults (3 x 300 ms, hidden when equal), and fewer ECMP paths."""
    return dataclasses.replace(facts, underlay=facts.underlay.model_copy(update={"bfd_multiplier": 5, "bfd_interval_ms": 100, "max_paths": 8}))


VARIANTS: dict[str, tuple[Callable[[SwitchFacts], SwitchFacts], bool, bool]] = {  # the change, sonic, management
    "sonic-management": (lambda f: f, True, True),
    "no-management": (lambda f: f, False, False),
    "unnumbered-no-bfd": (_unnumbered, False, True),
    "bfd-timers-sonic": (_timers, True, False),
}


def _render(variant: str) -> str:
    change, sonic, management = VARIANTS[variant]
    return render_frr_conf(change(_spine()), management=management, sonic=sonic)


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_branch_no_case_takes_prints_as_the_template_did(variant: str, update_golden: bool) -> None:
    check_golden(GOLDEN / f"{variant}.conf", _render(variant), update_golden)


def test_the_variants_take_the_branches_the_cases_do_not() -> None:
    """Negative control of the goldens above: each variant prints what the cases' spines never print."""
    rendered = {variant: _render(variant) for variant in VARIANTS}
    assert "no fpm use-next-hop-groups\n" in rendered["sonic-management"]
    assert "access-list MGMT-SSH seq 10 permit" in rendered["sonic-management"]
    assert "interface Vrf-plane1 vrf Vrf-plane1\n" not in rendered["sonic-management"]
    assert "MGMT-SSH" not in rendered["no-management"]
    assert "interface Vrf-plane1 vrf Vrf-plane1\n" in rendered["no-management"]
    assert " neighbor swp1 interface peer-group FABRIC\n neighbor swp1 description p1-leaf01\n" in rendered["unnumbered-no-bfd"]
    assert "interface swp1 vrf Vrf-plane1\n description p1-leaf01:swp3\nexit\n" in rendered["unnumbered-no-bfd"]
    assert "bfd" not in rendered["unnumbered-no-bfd"]
    assert "  detect-multiplier 5\n  receive-interval 100\n  transmit-interval 100\n" in rendered["bfd-timers-sonic"]
    assert "  maximum-paths 8\n" in rendered["bfd-timers-sonic"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_frr_accepts_every_variant_without_a_word(variant: str, tmp_path: Path) -> None:
    assert dry_run(_render(variant), tmp_path) == ""


class _Masked(str):
    """Characters that are one word; a ``str()`` (what the file prints) that adds a BGP instance."""

    __slots__ = ()

    def __str__(self) -> str:
        return f"{super().__str__()}\nrouter bgp 666"


def _first_vrf(facts: SwitchFacts, **change: object) -> tuple[VrfFacts, ...]:
    first, *rest = spine_vrfs(facts)
    return (dataclasses.replace(first, **change), *rest)  # pyright: ignore[reportArgumentType] - values past the model


def _port(facts: SwitchFacts, **change: object) -> tuple[VrfFacts, ...]:
    first = spine_vrfs(facts)[0]
    return _first_vrf(facts, ports=(dataclasses.replace(first.ports[0], **change), *first.ports[1:]))  # pyright: ignore[reportArgumentType]


HOSTILE: list[tuple[str, Callable[[SwitchFacts], tuple[VrfFacts, ...]], str, str]] = [  # where, the VRFs, refusal, printed unguarded
    ("vrf name", lambda f: _first_vrf(f, name="Vrf-plane1 x"), "'Vrf-plane1 x' where one frr word goes", "vrf Vrf-plane1 x\n"),
    ("prefix", lambda f: _first_vrf(f, fabric_prefixes=(("10.0.0.0/8 any", 32),)), "'10.0.0.0/8 any' where one frr word goes", " 10.0.0.0/8 any ge"),
    ("ge", lambda f: _first_vrf(f, fabric_prefixes=(("10.0.0.0/8", "32 x"),)), "'32 x' where one frr word goes", " ge 32 x\n"),
    ("loopback", lambda f: _first_vrf(f, loopback="10.255.0.1/32;x"), "'10.255.0.1/32;x' where one frr word goes", "network 10.255.0.1/32;x\n"),
    (
        "description",
        lambda f: _port(f, peer_port="swp3\nip route 0.0.0.0/0 blackhole"),
        r"'p1-leaf01:swp3\\nip route .*: a line break",
        " description p1-leaf01:swp3\nip route 0.0.0.0/0 blackhole\n",
    ),
    (
        "address",
        lambda f: _port(f, address=_Masked("10.254.0.0/31")),
        r"'10\.254\.0\.0/31\\nrouter bgp 666' where one frr word goes",  # the guard checks str(), not the characters
        " ip address 10.254.0.0/31\nrouter bgp 666\n",
    ),
]


@pytest.mark.parametrize(("where", "vrfs", "refused", "printed"), HOSTILE)
def test_every_printed_value_is_guarded(where: str, vrfs: Callable[[SwitchFacts], tuple[VrfFacts, ...]], refused: str, printed: str) -> None:
    facts = _spine()
    with pytest.raises(RenderError, match=rf"^frr\.conf: refusing to render {refused}"):
        render_vrf_conf(facts, vrfs(facts))


@pytest.mark.parametrize(("where", "vrfs", "refused", "printed"), HOSTILE)
def test_negative_control_without_the_guard_each_hostile_value_prints(
    where: str, vrfs: Callable[[SwitchFacts], tuple[VrfFacts, ...]], refused: str, printed: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refusals above are the guard's (``_w``, the template's ``finalize``; ``text``): without it each is printed."""
    facts = _spine()
    monkeypatch.setattr(frr, "_w", lambda value: value)
    monkeypatch.setattr(frr, "free_text", lambda value: value)
    assert printed in render_vrf_conf(facts, vrfs(facts)), where
