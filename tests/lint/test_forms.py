"""Command forms: every rendered NVUE, NX-OS and MLNX-OS line, in every supported release, matches a cited form.

The forms are data (fabric/lint/forms/<nos>.yaml) the linter uses too, so a hand-edited config with an unknown or
misspelled command is a finding. Negative controls: the audit's wrong forms are refused on the releases they are wrong for.
"""

from __future__ import annotations

from functools import cache

import pytest

from fabric.catalog.releases import NOS_RELEASES
from fabric.lint import lint_configs
from fabric.lint.forms import FORM_FILES, load_forms, unknown_commands
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.render import render_configs
from tests.conftest import ROOT
from tests.render.conftest import CASES, definition, with_release

CHECKED = sorted(FORM_FILES)


@cache
def rendered(case: str, release: str | None) -> tuple[tuple[str, str, str, str], ...]:
    """(switch, nos, release, text) of every checked switch of ``case``, re-rendered for ``release`` when given."""
    spec = load_cluster(definition(case))
    if release is not None:
        spec = with_release(spec, release)
    plan = plan_cluster(spec)
    files = render_configs(plan)
    assert plan.fabric is not None
    return tuple(
        (s.name, s.nos, s.nos_version, next(t for p, t in files.items() if p.startswith(f"switches/{s.name}/")))
        for s in plan.fabric.switches
        if s.nos in CHECKED
    )


def case_releases() -> list[tuple[str, str]]:
    pairs = []
    for case in CASES:
        spec = load_cluster(definition(case))
        if spec.fabric is None or spec.fabric.leaf.nos not in CHECKED or spec.fabric.leaf.nos != spec.fabric.spine.nos:
            continue
        pairs += [(case, r) for r in NOS_RELEASES[spec.fabric.leaf.nos].supported]
    return pairs


CASE_RELEASES = case_releases()


def test_the_cases_cover_every_checked_nos() -> None:
    assert {rendered(c, r)[0][1] for c, r in CASE_RELEASES} == set(CHECKED)


@pytest.mark.parametrize(("case", "release"), CASE_RELEASES, ids=[f"{c}@{r}" for c, r in CASE_RELEASES])
def test_every_rendered_line_matches_a_cited_form(case: str, release: str) -> None:
    for switch, nos, got_release, text in rendered(case, release):
        assert got_release == release
        assert unknown_commands(nos, release, text) == [], f"{switch} ({nos} {release})"


@pytest.mark.parametrize("nos", CHECKED)
def test_every_form_cites_a_reference_and_known_releases(nos: str) -> None:
    supported = NOS_RELEASES[nos].supported
    for form in load_forms(nos):
        assert len(form.ref) > 10, form.form
        assert any(form.applies_to(r) for r in supported), f"{form.form}: in no supported release"


@pytest.mark.parametrize(
    ("nos", "release", "line", "reported"),
    [
        ("cumulus", "5.14", "nv set qos mapping default-global trust dscp", None),  # audit §3 row 20: not a trust value
        ("cumulus", "5.14", "nv set vrf default router bgp peer 10.254.0.0 peer-group FABRIC", None),  # `peer` is `neighbor` since 5.0
        ("cumulus", "5.15", "nv set service ntp mgmt server 10.102.0.1", None),  # moved to `system ntp` in 5.15
        ("cumulus", "5.14", "nv set service syslog mgmt server 10.102.0.1", None),  # gone from 5.13
        ("cumulus", "5.9", "nv set system ntp server 10.102.0.1", None),  # not yet in 5.9
        ("cumulus", "5.15", "nv set vrf default router bgp peer-group FABRIC bfd enable on", None),  # BFD profiles from 5.15
        ("cumulus", "5.14", "nv set qos egress-scheduler default-global traffic-class 3 mode dwrr bw-percent 50", None),  # two attributes
        ("cumulus", "5.14", "nv set interface swp1 link breakout 2x400G", None),  # CL 5.4+: the mode carries no speed
        ("nxos", "10.4", "  mtu 9216", "hostname x > mtu 9216"),  # an interface command outside an interface
        ("nxos", "10.4", "priority-flow-control watch-dog intervall 100", None),
        ("mlnx-os", "3.12", "ib sm priority 15", None),  # audit §4 row 15: the keyword is sm-priority
        ("mlnx-os", "3.12", "interface ib1/33 description spine", None),  # no space before the port
    ],
)
def test_a_wrong_form_is_reported_with_its_line(nos: str, release: str, line: str, reported: str | None) -> None:
    text = {"nxos": "hostname x\n", "cumulus": "nv set system hostname x\n", "mlnx-os": "hostname x\n"}[nos] + line + "\n"
    assert unknown_commands(nos, release, text) == [(2, reported or line.strip())]


def test_the_linter_reports_a_misspelled_command_in_a_hand_edited_config() -> None:
    plan = plan_cluster(load_cluster(definition("render/cumulus")))
    files = render_configs(plan)
    assert plan.fabric is not None
    configs: dict[str, str | None] = {s.name: files[f"switches/{s.name}/nvue.sh"] for s in plan.fabric.switches}
    assert lint_configs(plan, configs) == []
    text = configs["leaf01"]
    assert text is not None
    configs["leaf01"] = text.replace("link mtu 9216", "link mtuu 9216", 1)
    found = [str(f) for f in lint_configs(plan, configs)]
    assert (
        "leaf01: line 29: no cumulus 5.14 command form matches this line (expected a known command, found 'nv set interface swp1 link mtuu 9216')"
        in found
    )


def unproven_missing_from(page: str) -> list[str]:
    """Forms whose ref says UNPROVEN but which docs/switch-references.md (``page``) does not list."""
    return [f"{nos}: {f.form}" for nos in sorted(FORM_FILES) for f in load_forms(nos) if f.ref.startswith("UNPROVEN") and f"`{f.form}`" not in page]


def test_every_unproven_form_is_listed_in_the_references_page() -> None:
    page = (ROOT / "docs" / "switch-references.md").read_text(encoding="utf-8")
    assert any(f.ref.startswith("UNPROVEN") for f in load_forms("nxos"))
    assert unproven_missing_from(page) == []
    # negative control: the page without its NX-OS unproven table names them all
    assert len(unproven_missing_from(page.split("**Unproven** (marked")[0])) == sum(f.ref.startswith("UNPROVEN") for f in load_forms("nxos"))
