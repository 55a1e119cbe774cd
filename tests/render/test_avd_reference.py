"""EOS against Arista's own generator: our ``--format avd`` structured config, rendered by pyavd's eos_cli_config_gen,
gives the same command set as our EOS text, apart from the deliberate differences docs/switches.md lists."""

from __future__ import annotations

import pytest
import yaml
from pyavd import get_device_config, validate_structured_config

from fabric.catalog.releases import NOS_RELEASES
from fabric.model import load_cluster
from fabric.plan import ClusterPlan, plan_cluster
from fabric.render import render_avd_configs, render_configs
from tests.render.conftest import CASES, definition, files_of, plan_of, unsampled_switches, with_release

# Lines only our EOS text has, by the block they sit in ("" = top level). docs/switches.md, "What a real switch needs: Arista EOS".
DELIBERATE_DIFFERENCES: frozenset[tuple[str, str]] = frozenset(
    {
        # AVD 6.4's router_bgp schema has no key for it (bgp.bestpath has only d_path); EOS accepts it (Batfish Arista_bgp.g4,
        # eos.arista.com TOI "Bgp multipath relax") and it states the ECMP-across-leaves intent explicitly.
        ("router bgp", "bgp bestpath as-path multipath-relax"),
    }
)


def has_eos(case: str) -> bool:
    fabric = plan_of(case).fabric
    return fabric is not None and any(s.nos == "eos" for s in fabric.switches)


EOS_CASES = [c for c in CASES if has_eos(c)]
INDENT = 3  # EOS indents each level by three spaces


Command = tuple[str, ...]


def commands(text: str) -> set[Command]:
    """Every command with the blocks it sits in, e.g. ("interface Ethernet1/1", "mtu 9214"); comments, "!" and "end" dropped."""
    found: set[Command] = set()
    parents: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("!") or line == "end":
            continue
        depth = (len(raw) - len(raw.lstrip(" "))) // INDENT
        parents = [*parents[:depth], line]
        found.add(tuple(parents))
    return found


def is_deliberate(command: Command) -> bool:
    *blocks, last = command
    block = blocks[0] if blocks else ""
    return any(block.startswith(prefix) and last == line for prefix, line in DELIBERATE_DIFFERENCES)


def compare(ours: str, avd: str) -> list[str]:
    """Readable differences between our EOS text and pyavd's, deliberate ones left out."""
    mine, theirs = commands(ours), commands(avd)
    only_ours = sorted(c for c in mine - theirs if not is_deliberate(c))
    only_avd = sorted(theirs - mine)
    return [f"only in our EOS text: {' > '.join(c)}" for c in only_ours] + [f"only in pyavd's rendering: {' > '.join(c)}" for c in only_avd]


def avd_rendering(case: str, switch: str, plan: ClusterPlan | None = None) -> str:
    structured = yaml.safe_load(render_avd_configs(plan or plan_of(case))[f"structured_configs/{switch}.yml"])
    violations = validate_structured_config(structured).validation_result.violations
    assert not violations, [f"{'.'.join(map(str, v.path))}: {v.message}" for v in violations]
    return get_device_config(structured)


CASE_RELEASES = [(c, r) for c in EOS_CASES for r in NOS_RELEASES["eos"].supported]


@pytest.mark.parametrize(("case", "release"), CASE_RELEASES, ids=[f"{c}@{r}" for c, r in CASE_RELEASES])
def test_eos_text_equals_pyavd_rendering_of_the_same_intent(case: str, release: str) -> None:
    plan = plan_cluster(with_release(load_cluster(definition(case)), release))
    files = render_configs(plan)
    assert plan.fabric is not None
    skipped = unsampled_switches(case)  # a large case: the first switches of each tier (conftest.SAMPLE_ABOVE)
    for switch in plan.fabric.switches:
        assert switch.nos_version == release
        if switch.name in skipped:
            continue
        ours = files[f"switches/{switch.name}/startup-config"]
        assert compare(ours, avd_rendering(case, switch.name, plan)) == [], switch.name


def test_a_broken_eos_line_is_named() -> None:
    case = "render/eos-unnumbered"
    ours = files_of(case)["switches/leaf01/startup-config"]
    broken = ours.replace("   ipv6 enable\n", "", 1).replace("ip routing ipv6 interfaces", "ip routing ipv6 interface")
    found = compare(broken, avd_rendering(case, "leaf01"))
    assert "only in our EOS text: ip routing ipv6 interface" in found
    assert "only in pyavd's rendering: ip routing ipv6 interfaces" in found
    assert any(f.startswith("only in pyavd's rendering: interface Ethernet") and f.endswith("> ipv6 enable") for f in found), found


def test_pyavd_refuses_a_key_outside_its_schema() -> None:
    structured = yaml.safe_load(render_avd_configs(plan_of("render/eos"))["structured_configs/leaf01.yml"])
    structured["ethernet_interfaces"][0]["mtux"] = 9214
    violations = validate_structured_config(structured).validation_result.violations
    assert [".".join(map(str, v.path)) for v in violations] == ["ethernet_interfaces.0.mtux"]


def ssh_acls_that_are_not_standard(text: str) -> list[str]:
    """ACLs bound under ``management ssh`` that the text does not define as ``ip access-list standard NAME``.

    AVD's management_ssh schema (pyavd 6.4.0 ``ManagementSsh.VrfsItem.ip_access_group_in``): "Standard ACL Name."
    """
    lines = text.splitlines()
    standard = {line.split()[3] for line in lines if line.startswith("ip access-list standard ")}
    bound: list[str] = []
    in_ssh = False
    for line in lines:
        if not line.startswith(" "):
            in_ssh = line == "management ssh"
        elif in_ssh and line.strip().startswith("ip access-group "):
            bound.append(line.split()[2])
    return [name for name in bound if name not in standard]


@pytest.mark.parametrize("case", EOS_CASES)
def test_management_ssh_binds_a_standard_acl(case: str) -> None:
    texts = {p: t for p, t in files_of(case).items() if p.endswith("startup-config")}
    assert any("management ssh" in t for t in texts.values())
    assert {p: bad for p, t in texts.items() if (bad := ssh_acls_that_are_not_standard(t))} == {}


def test_an_extended_acl_on_management_ssh_is_caught() -> None:
    # negative control: the form the audit found (E1), an extended ACL bound by management ssh
    text = "ip access-list MGMT-SSH\n   10 permit tcp 10.103.0.0/16 any eq 22\n!\nmanagement ssh\n   ip access-group MGMT-SSH vrf mgmt in\n"
    assert ssh_acls_that_are_not_standard(text) == ["MGMT-SSH"]
