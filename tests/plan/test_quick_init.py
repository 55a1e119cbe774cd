"""``quick_init``: the planner's bulk dataclasses keep every dataclass behaviour with the faster ``__init__`` (issue 36)."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import FrozenInstanceError, InitVar, dataclass, field
from typing import Any

import pytest

from fabric.plan.compute.facts import NeighborFacts, PortFacts
from fabric.plan.quick_init import quick_init
from fabric.plan.types import HostInterface, Link, NodePlan, SwitchPlan

BULK = [HostInterface, NodePlan, SwitchPlan, Link, PortFacts, NeighborFacts]


@dataclass(frozen=True, slots=True)
class Plain:
    name: str
    speed: int
    address: str | None = None
    mtu: int = 9000


@quick_init
@dataclass(frozen=True, slots=True)
class Quick:
    name: str
    speed: int
    address: str | None = None
    mtu: int = 9000


@pytest.mark.parametrize("cls", BULK, ids=lambda c: c.__name__)
def test_the_bulk_classes_set_their_slots_directly(cls: type) -> None:
    """The generated frozen __init__ goes through object.__setattr__ per field; the quick one does not."""
    assert "__dataclass_builtins_object__" not in cls.__init__.__code__.co_names  # type: ignore[misc] - a function


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        (("swp1", 400), {}),
        (("swp1", 400, "10.0.0.0/31"), {}),
        ((), {"name": "swp1", "speed": 400, "mtu": 1500}),
        (("swp1",), {"speed": 1, "address": None}),
    ],
)
def test_the_same_object_as_the_dataclass_init(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    quick, plain = Quick(*args, **kwargs), Plain(*args, **kwargs)
    assert dataclasses.astuple(quick) == dataclasses.astuple(plain)
    assert repr(quick).removeprefix("Quick") == repr(plain).removeprefix("Plain")
    assert quick == Quick(*args, **kwargs)
    assert hash(quick) == hash(Quick(*args, **kwargs))
    assert dataclasses.replace(quick, mtu=1) == Quick(**{**dataclasses.asdict(quick), "mtu": 1})
    assert pickle.loads(pickle.dumps(quick)) == quick
    with pytest.raises(FrozenInstanceError):
        quick.name = "swp2"  # type: ignore[misc] - the point: frozen
    assert not hasattr(quick, "__dict__"), "slots: no attribute beyond the fields"


def test_the_same_errors_as_the_dataclass_init() -> None:
    for call in (lambda c: c(), lambda c: c("swp1"), lambda c: c("swp1", 1, None, 1, 2), lambda c: c("swp1", 1, nope=1)):
        with pytest.raises(TypeError):
            call(Plain)
        with pytest.raises(TypeError):
            call(Quick)


def _frozen(**body: object) -> type:
    return dataclass(frozen=True, slots=True)(type("C", (), {"__annotations__": {"a": int}, **body}))


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda: dataclass(slots=True)(type("C", (), {"__annotations__": {"a": int}})), "not a frozen dataclass"),
        (lambda: dataclass(frozen=True)(type("C", (), {"__annotations__": {"a": int}})), "no __slots__"),
        (lambda: _frozen(__post_init__=lambda _: None), "__post_init__"),
        (lambda: _frozen(a=field(default_factory=int)), "a has a default_factory"),
        (lambda: _frozen(a=field(kw_only=True)), "a is keyword-only"),
        (lambda: dataclass(frozen=True, slots=True)(type("C", (), {"__annotations__": {"a": int, "b": InitVar[int]}})), "other parameters"),
        (lambda: _frozen(a=field(default=0, init=False)), "other parameters"),
    ],
)
def test_anything_but_a_plain_frozen_slotted_dataclass_is_refused(make: object, problem: str) -> None:
    with pytest.raises(TypeError, match=problem):
        quick_init(make())  # type: ignore[operator] - each case builds its class
