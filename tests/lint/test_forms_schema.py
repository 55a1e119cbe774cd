"""The Cumulus form table (fabric/lint/forms/cumulus.yaml) against NVIDIA's NVUE schema, release by release.

Each row says in which releases its form exists (``since`` .. ``until``, both included). Over every release the schema
package models between the oldest and the newest supported one (CL 5.9 .. 5.15), a row's form must be accepted exactly
there: accepted inside its bounds and refused outside them. So a removal the vendor made ("5.14 no longer provides",
device audit 2026-11 §7) is a table error here, not a surprise on a switch. Placeholders are filled with sample values
(a collection key takes any word; a leaf needs a value of its type), and an alternative ``(a|b)`` must hold for each.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

import pytest

from fabric.catalog.releases import NOS_RELEASES, release_key
from fabric.lint.forms import Form, compile_form, load_forms
from fabric.lint.nvue_schema import check_line, releases

SAMPLES: dict[str, tuple[str, ...]] = {
    "<name>": ("swp1", "44:38:39:ff:00:01", "100G", "external"),  # an interface / key, a MAC, a speed, an enum word
    "<int>": ("1", "100", "9000"),
    "<ip>": ("10.0.0.1",),
    "<prefix>": ("10.0.0.0/24",),
    "<text>": ("'a text'",),
    "<vlans>": ("10",),
}
_GROUP = re.compile(r"\(([^()]*)\)")
_PLACEHOLDER = re.compile(r"(<[a-z]+>)")


def alternatives(form: str) -> Iterator[str]:
    """The form once per choice of each ``(a|b)`` group."""
    match = _GROUP.search(form)
    if match is None:
        yield form
        return
    for choice in match.group(1).split("|"):
        yield from alternatives(form[: match.start()] + choice + form[match.end() :])


def sample_lines(form: str) -> Iterator[str]:
    """Concrete lines of one alternative, its placeholders filled from ``SAMPLES``."""
    slots = [SAMPLES.get(part, (part,)) for part in _PLACEHOLDER.split(form)]
    return ("".join(combo) for combo in itertools.product(*slots))


def accepted(form: str, release: str) -> bool:
    """Every alternative of ``form`` has a sample line the schema of ``release`` accepts."""
    return all(any(check_line(release, line) is None for line in sample_lines(alt)) for alt in alternatives(form))


def window() -> list[str]:
    """The schema's releases from the oldest to the newest supported Cumulus release."""
    supported = NOS_RELEASES["cumulus"].supported
    low, high = release_key(supported[0]), release_key(supported[-1])
    return [r for r in releases() if low <= release_key(r) <= high]


def mismatches(form: Form) -> list[str]:
    """The releases where the table and the schema disagree on ``form``, as ``5.14: table yes, schema no``."""
    out = []
    for release in window():
        table, schema = form.applies_to(release), accepted(form.form, release)
        if table != schema:
            out.append(f"{release}: table {'yes' if table else 'no'}, schema {'yes' if schema else 'no'}")
    return out


FORMS = load_forms("cumulus")


def test_the_window_spans_the_supported_releases() -> None:
    assert window() == ["5.9", "5.10", "5.11", "5.12", "5.13", "5.14", "5.15"]


@pytest.mark.parametrize("form", FORMS, ids=[f.form for f in FORMS])
def test_each_cumulus_row_exists_in_the_schema_exactly_within_its_bounds(form: Form) -> None:
    assert mismatches(form) == []


@pytest.mark.parametrize(
    ("form", "until", "expected"),
    [
        # the rows as they were before the audit: no `until`, so the tables claimed them for releases that removed them
        ("nv set interface <name> ip address <prefix>", None, ["5.15: table yes, schema no"]),
        ("nv set service dhcp-relay <name> server <ip>", None, ["5.14: table yes, schema no", "5.15: table yes, schema no"]),
        ("nv set vrf default router bgp path-selection multipath aspath-ignore on", None, ["5.15: table yes, schema no"]),
        # a bound one release too early: the form is still there
        ("nv set service dhcp-relay <name> interface <name>", "5.12", ["5.13: table no, schema yes"]),
    ],
)
def test_a_row_without_its_removal_is_found(form: str, until: str | None, expected: list[str]) -> None:
    assert mismatches(Form(form, compile_form(form), "negative control", None, until)) == expected
