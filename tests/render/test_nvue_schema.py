"""Every rendered Cumulus line, walked onto NVIDIA's NVUE OpenAPI schema of the release its file declares (issue 28).

The schema is NVIDIA's own per-release NVUE object model (PyPI ``nvueschema`` 0.1.0, pinned in requirements-dev.txt;
``fabric/lint/nvue_schema.py``). Cases: every bundled and test definition with a Cumulus tier (compute, storage /
in-band, OOB), as written and with every Cumulus tier moved to each supported release. Negative controls: the
audit's wrong lines (device-audit 2026-11 C1-C5) are refused, with their line number.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from fabric.__main__ import main
from fabric.catalog.releases import NOS_RELEASES
from fabric.lint.nvue_schema import available, check_line, declared_release, refusals, set_lines
from fabric.model import load_cluster
from fabric.model.cluster import ClusterSpec
from fabric.model.planes import PlanesSpec
from fabric.model.storage import EthernetNetworkSpec
from fabric.plan import plan_cluster
from fabric.render import render_configs
from tests.conftest import DATA, ROOT

RELEASES = NOS_RELEASES["cumulus"].supported
SKIPPED_DIRS = {"invalid", "hostile"}


def _cumulus_tiers(spec: ClusterSpec) -> int:
    tiers = list(spec.fabric.tier_specs.values()) if spec.fabric else []
    for plane in (spec.planes.storage, spec.planes.inband):
        net = plane.network if plane is not None else None
        if net is not None:
            tiers += [net.leaf, net.spine]
    oob = spec.planes.oob.network
    return sum(t.nos == "cumulus" for t in tiers) + (oob is not None and oob.nos == "cumulus")


def _definitions() -> list[Path]:
    found = [*ROOT.glob("inventories/*/cluster.yaml"), *DATA.glob("**/cluster.yaml")]
    return sorted(p for p in found if not SKIPPED_DIRS & set(p.relative_to(ROOT).parts) and _cumulus_tiers(load_cluster(p)))


DEFINITIONS = _definitions()
CASES = [(p, r) for p in DEFINITIONS for r in (None, *RELEASES)]


def _case_id(path: Path, release: str | None) -> str:
    return f"{path.parent.relative_to(ROOT)}@{release or 'as-written'}"


def _network_on(net: EthernetNetworkSpec | None, release: str) -> EthernetNetworkSpec | None:
    if net is None:
        return None
    tiers = {t: getattr(net, t).model_copy(update={"nos_version": release}) for t in ("leaf", "spine") if getattr(net, t).nos == "cumulus"}
    return net.model_copy(update=tiers)


def on_release(spec: ClusterSpec, release: str) -> ClusterSpec:
    """The same definition with every Cumulus tier (compute, storage, in-band, OOB) on ``release``."""
    planes: PlanesSpec = spec.planes
    update: dict[str, object] = {}
    for name in ("storage", "inband"):
        plane = getattr(planes, name)
        if plane is not None and plane.network is not None:
            update[name] = plane.model_copy(update={"network": _network_on(plane.network, release)})
    oob = planes.oob
    if oob.network is not None and oob.network.nos == "cumulus":
        update["oob"] = oob.model_copy(update={"network": oob.network.model_copy(update={"nos_version": release})})
    new = spec.model_copy(update={"planes": planes.model_copy(update=update)})
    if spec.fabric is not None:
        tiers = {t: s.model_copy(update={"nos_version": release}) for t, s in spec.fabric.tier_specs.items() if s.nos == "cumulus"}
        new = new.model_copy(update={"fabric": spec.fabric.model_copy(update=tiers)})
    return new


@cache
def nvue_files(path: Path, release: str | None) -> dict[str, str]:
    """Every rendered ``nvue.sh`` of the definition (moved to ``release`` when given), by its path."""
    spec = load_cluster(path)
    if release is not None:
        spec = on_release(spec, release)
    return {p: t for p, t in render_configs(plan_cluster(spec)).items() if p.endswith("/nvue.sh")}


def test_the_schema_package_is_installed() -> None:
    assert available(), "nvueschema is missing: .venv/bin/pip install -r requirements-dev.txt"


@pytest.mark.parametrize(("path", "release"), CASES, ids=[_case_id(p, r) for p, r in CASES])
def test_every_rendered_nvue_line_is_accepted_by_the_schema_of_its_release(path: Path, release: str | None) -> None:
    files = nvue_files(path, release)
    assert files
    for name, text in files.items():
        declared = declared_release(text)
        assert declared is not None, f"{name}: no 'for Cumulus Linux X' header"
        if release is not None:
            assert declared == release, f"{name} is rendered for {declared}, its tier says {release}"
        assert set_lines(text) > 0
        found = [f"line {r.line}: {r.text}: {r.reason}" for r in refusals(declared, text)]
        assert found == [], f"{name} ({declared})"


def test_the_cases_cover_every_tier_and_shape() -> None:
    texts = [t for p, r in CASES if r in ("5.14", "5.15") for t in nvue_files(p, r).values()]
    joined = "\n".join(texts)
    for marker in (
        "OOB management switch",  # oob.j2
        "(storage network)",  # storage-header.j2
        "type unnumbered",  # unnumbered underlay
        "link breakout 2x",  # breakout on the compute fabric
        "link breakout 4x",
        "server-group OOB server",  # the 5.14+ relay
        "bond mlag id",  # MLAG storage pairs
        "ipv4 vrr address",  # 5.15 storage gateways
        "router bfd profile",  # 5.15 BFD
        "qos roce mode lossless",
    ):
        assert marker in joined, marker
    super_spines = [t for p, r in CASES for n, t in nvue_files(p, r).items() if "/superspine" in n]
    assert super_spines, "no three-tier (super-spine) file among the cases"
    assert {r for p, r in CASES if r} == set(RELEASES)


@pytest.mark.parametrize(
    ("release", "line", "reason"),
    [
        ("5.15", "nv set interface swp5 ip address 10.254.0.1/31", "no 'ip' under /interface/swp5"),  # audit C1
        ("5.15", "nv set interface eth0 ip vrf mgmt", "no 'ip' under /interface/eth0"),  # C2
        ("5.14", "nv set service dhcp-relay default server 10.103.0.10", "no 'server' under /service/dhcp-relay/default"),  # C5
        ("5.14", "nv set service dhcp-relay default interface vlan100", "no 'interface' under /service/dhcp-relay/default"),  # C4
        ("5.14", "nv set service dhcp-relay default agent enable on", "no 'enable' under /service/dhcp-relay/default/agent"),  # C6
        ("5.11", "nv set service dhcp-relay default server-group OOB server 10.103.0.10", "no 'server-group' under /service/dhcp-relay/default"),
        ("5.14", "nv set interface swp1 ipv4 address 10.0.0.1/31", "no 'ipv4' under /interface/swp1"),
        ("5.14", "nv set vrf default router bgp peer 10.254.0.0 peer-group FABRIC", "no 'peer' under /vrf/default/router/bgp"),
    ],
)
def test_a_wrong_path_is_refused(release: str, line: str, reason: str) -> None:
    assert check_line(release, line) == reason


@pytest.mark.parametrize(
    ("release", "line"),
    [
        ("5.15", "nv set vrf default router bgp path-selection multipath aspath-ignore on"),  # C3: enabled|disabled
        ("5.14", "nv set vrf default router bgp path-selection multipath aspath-ignore enabled"),  # on|off
        ("5.15", "nv set interface swp1 bridge domain br_default stp bpdu-guard on"),  # C8
        ("5.14", "nv set qos mapping default-global trust dscp"),  # l2|l3|port|both
        ("5.14", "nv set interface swp1 link mtu 9217"),  # 552-9216
        ("5.14", "nv set interface bond1 bond mlag id 65536"),  # 1-65535
    ],
)
def test_a_wrong_value_is_refused(release: str, line: str) -> None:
    reason = check_line(release, line)
    assert reason is not None
    assert "value" in reason
    assert "refused" in reason


def test_a_line_with_an_open_quote_is_refused_not_a_crash() -> None:
    assert check_line("5.14", "nv set interface swp1 description 'open") == "the line does not split into words (No closing quotation)"


def test_a_hand_edited_line_is_reported_with_its_number() -> None:
    files = nvue_files(DATA / "render" / "cumulus-5.15" / "cluster.yaml", None)
    text = files["switches/leaf01/nvue.sh"]
    assert refusals("5.15", text) == []
    edited = text.replace("nv set interface lo ipv4 address", "nv set interface lo ip address", 1)
    number = edited.splitlines().index(next(line for line in edited.splitlines() if line.startswith("nv set interface lo ip address"))) + 1
    found = refusals("5.15", edited)
    assert [(r.line, r.reason) for r in found] == [(number, "no 'ip' under /interface/lo")]
    oob = files["switches/oob-mgmt/nvue.sh"]
    relay = oob.replace("dhcp-relay default server-group OOB server 10.103.0.10", "dhcp-relay default server 10.103.0.10")
    assert [r.reason for r in refusals("5.15", relay)] == ["no 'server' under /service/dhcp-relay/default"]


def test_each_tier_renders_its_own_release() -> None:
    """cumulus-5.15: the compute fabric on 5.15, the storage pair pinned to 5.14, the OOB tier inheriting 5.15."""
    files = nvue_files(DATA / "render" / "cumulus-5.15" / "cluster.yaml", None)
    got = {name.split("/")[1]: declared_release(text) for name, text in files.items()}
    assert got == {"leaf01": "5.15", "leaf02": "5.15", "spine01": "5.15", "spine02": "5.15", "stor-a": "5.14", "stor-b": "5.14", "oob-mgmt": "5.15"}
    assert "nv set interface eth0 ip vrf mgmt" in files["switches/stor-a/nvue.sh"].splitlines()
    assert "nv set interface eth0 vrf mgmt" in files["switches/leaf01/nvue.sh"].splitlines()
    oob = files["switches/oob-mgmt/nvue.sh"].splitlines()
    assert "nv set interface swp1 bridge domain br_default stp bpdu-guard enabled" in oob
    assert "nv set interface vlan100 ipv4 address 10.103.255.0/16" in oob


def test_storage_and_oob_inherit_only_the_same_nos() -> None:
    """onprem-roce: SONiC compute leaves, so the Cumulus storage and OOB tiers run Cumulus's default release."""
    files = nvue_files(ROOT / "inventories" / "onprem-roce" / "cluster.yaml", None)
    assert {declared_release(t) for t in files.values()} == {NOS_RELEASES["cumulus"].default}


def test_the_lint_command_reports_schema_refusals_in_every_tier(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    definition = str(DATA / "render" / "cumulus-5.15" / "cluster.yaml")
    assert main(["render", definition, "-o", str(tmp_path)]) == 0
    assert main(["lint", definition, "--configs", str(tmp_path)]) == 0
    edits = {
        "leaf01": ("nv set interface lo ipv4 address", "nv set interface lo ip address"),
        "stor-a": ("nv set interface eth0 ip vrf mgmt", "nv set interface eth0 vrf mgmt"),  # a 5.15 form on a 5.14 switch
        "oob-mgmt": ("server-group OOB server 10.103.0.10", "server 10.103.0.10"),
    }
    for switch, (old, new) in edits.items():
        path = tmp_path / "switches" / switch / "nvue.sh"
        text = path.read_text(encoding="utf-8")
        assert old in text
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    capsys.readouterr()
    assert main(["lint", definition, "--configs", str(tmp_path)]) != 0
    err = capsys.readouterr().err
    schema = [line for line in err.splitlines() if "NVUE schema refuses" in line]
    assert len(schema) == 3, err
    assert any(line.startswith("lint: leaf01: nvue.sh line ") and "no 'ip' under /interface/lo" in line for line in schema), schema
    assert any(line.startswith("lint: stor-a: nvue.sh line ") and "no 'vrf' under /interface/eth0" in line for line in schema), schema
    assert any(line.startswith("lint: oob-mgmt: nvue.sh line ") and "no 'server' under /service/dhcp-relay/default" in line for line in schema), (
        schema
    )
