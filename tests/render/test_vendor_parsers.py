"""NX-OS and EOS text read back by Cisco's and Arista's own parsers: the Ansible resource modules (``ansible==12.3.0``:
``cisco.nxos`` 11.1.0, ``arista.eos`` 12.0.0), run offline by ``tests/render/ansible_rm.py``.

For every rendered NX-OS / EOS config of the compute (incl. breakout), three-tier, unnumbered, OOB and storage cases, on
every supported release: each module parses its section of our text (``state: parsed``), renders what it read
(``state: rendered``), and the lines it gives back must be our lines. Every line that does not come back, and every line
that comes back but is not ours, must be a row of ``DIFFERENCES`` with its reason; a row no render needs any more fails.
docs/switch-references.md lists what these modules cannot read (so it stays unproven here).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import pytest

from fabric.catalog.releases import NOS_RELEASES
from fabric.errors import InputError
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.render import render_configs
from tests.render.ansible_rm import Line, Resource, blocks, round_trip, section
from tests.render.conftest import definition, unsampled_switches, with_release

# The modules and the section each one's facts read on a device (facts/<resource>/<resource>.py, get_device_data).
# nxos_vlans is left out: its parsed state reads `show vlan | json` output plus config, not config text alone.
NXOS = (
    Resource("nxos_interfaces", r"^interface"),
    Resource("nxos_l2_interfaces", r"^interface"),
    Resource("nxos_l3_interfaces", r"^interface"),
    Resource("nxos_lag_interfaces", r"^interface"),
    Resource("nxos_hsrp_interfaces", r"^interface"),
    Resource("nxos_vrf_interfaces", r"^interface"),
    Resource("nxos_bfd_interfaces", r"^interface|^feature bfd"),
    Resource("nxos_bgp_global", r"^router bgp"),
    Resource("nxos_bgp_address_family", r"^router bgp"),
    Resource("nxos_bgp_neighbor_address_family", r"^router bgp"),
    Resource("nxos_bgp_templates", r"^router bgp"),
    Resource("nxos_acls", r"^ip(v6)* access-list"),
)
EOS = (
    Resource("eos_interfaces", r"^interface"),
    Resource("eos_l2_interfaces", r"^interface"),
    Resource("eos_l3_interfaces", r"^interface"),
    Resource("eos_lag_interfaces", r"^interface"),
    Resource("eos_bgp_global", r"router\sbgp "),
    Resource("eos_bgp_address_family", r"router\sbgp "),
    Resource("eos_vlans", r"^vlan"),
    Resource("eos_acls", r"access-list"),
)
COLLECTIONS = {"nxos": ("cisco.nxos", NXOS), "eos": ("arista.eos", EOS)}

# Lines taken out before parsing, because the module cannot parse them at all (it fails the whole section).
UNPARSABLE = {
    # arista.eos 12.0.0 rm_templates/bgp_global.py (bgp_params_bestpath_as_path) stores "multipath-relax" as written, its
    # own argspec allows only "multipath_relax": "value of as_path must be one of: ignore, multipath_relax, got:
    # multipath-relax". The form itself is EOS's (test_avd_reference.py DELIBERATE_DIFFERENCES).
    "eos": (re.compile(r"^\s+bgp bestpath as-path multipath-relax$"),),
    "nxos": (),
}


@dataclass(frozen=True, slots=True)
class Difference:
    """Lines ``unread`` (ours, not given back) or ``added`` (given back, not ours): block and line as full regexes."""

    nos: str
    kind: str
    block: str
    line: str
    reason: str

    def matches(self, nos: str, kind: str, found: Line) -> bool:
        return nos == self.nos and kind == self.kind and bool(re.fullmatch(self.block, found[0]) and re.fullmatch(self.line, found[1]))


IF = r"interface \S+"
BGP = r"router bgp \d+"
DIFFERENCES: tuple[Difference, ...] = (
    # ---- NX-OS (cisco.nxos 11.1.0) ----
    Difference("nxos", "unread", r"feature bfd", "", "in nxos_bfd_interfaces' section only as its facts' gate; no key"),
    Difference("nxos", "unread", r"interface breakout module \d+ port \d+ map \S+", "", "no cisco.nxos resource module models breakout"),
    Difference("nxos", "unread", IF, r"bfd interval \d+ min_rx \d+ multiplier \d+", "nxos_bfd_interfaces models bfd/echo on-off only"),
    Difference("nxos", "added", IF, r"bfd( echo)?", "nxos_bfd_interfaces reads feature bfd as bfd and echo on (the defaults) and renders them"),
    Difference("nxos", "unread", IF, r"ip unnumbered loopback\d+", "nxos_l3_interfaces has no unnumbered key"),
    Difference("nxos", "unread", IF, r"ipv6 link-local use-bia", "nxos_l3_interfaces has no link-local key"),
    Difference("nxos", "unread", IF, r"fec rs-fec", "no cisco.nxos module models FEC (no fec key in nxos_interfaces)"),
    Difference("nxos", "unread", IF, r"medium p2p", "no resource module key for medium"),
    Difference("nxos", "unread", IF, r"no switchport", "read (nxos_interfaces mode: layer3); state rendered leaves the mode line out"),
    Difference("nxos", "unread", IF, r"priority-flow-control (mode on|watch-dog-interval on)", "no resource module models PFC"),
    Difference("nxos", "unread", IF, r"spanning-tree (bpduguard enable|port type edge)", "no resource module models spanning tree"),
    Difference("nxos", "unread", IF, r"vpc( \d+| peer-link)", "vPC: only the legacy nxos_vpc_interface module, which has no parsed state"),
    Difference("nxos", "unread", r"interface mgmt0", r"vrf member management", "nxos_vrf_interfaces leaves mgmt0 out"),
    # ---- EOS (arista.eos 12.0.0) ----
    Difference("eos", "unread", IF, r"bfd interval \d+ min-rx \d+ multiplier \d+", "no arista.eos module models BFD"),
    Difference("eos", "unread", IF, r"error-correction encoding reed-solomon", "no arista.eos module models FEC (no fec key in eos_interfaces)"),
    Difference("eos", "unread", IF, r"ip helper-address \S+", "no arista.eos module models DHCP relay"),
    Difference("eos", "unread", IF, r"ip virtual-router address \S+", "no arista.eos module models VARP"),
    Difference("eos", "unread", IF, r"ipv6 enable", "eos_l3_interfaces has no ipv6 enable key"),
    Difference(
        "eos",
        "unread",
        IF,
        r"speed \d{1,3}g",
        "eos_interfaces splits a speed into <speed><duplex> by its last four characters (facts/interfaces/interfaces.py:"
        " state[:-4]), the old `forced 40gfull` form; a single-lane `10g`/`25g`, or `400g` (render/thor2-eos), leaves no speed",
    ),
    Difference("eos", "added", IF, r"no shutdown", "eos_interfaces reads enabled: true (the default) and renders it"),
    Difference("eos", "unread", IF, r"mlag \d+", "no arista.eos module models MLAG"),
    Difference("eos", "unread", IF, r"no autostate", "no arista.eos module key for autostate"),
    Difference("eos", "unread", IF, r"service-profile \S+", "no arista.eos module models QoS"),
    Difference("eos", "unread", IF, r"spanning-tree (bpduguard enable|portfast)", "no arista.eos module models spanning tree"),
    Difference("eos", "unread", IF, r"switchport trunk allowed vlan \d+-\d+", "read; eos_l2_interfaces renders the range as a list (next row)"),
    Difference("eos", "added", IF, r"switchport trunk allowed vlan \d+(,\d+)+", "the same VLANs as the range above, written as a list"),
    Difference("eos", "unread", IF, r"switchport trunk group \S+", "eos_l2_interfaces has no trunk group key"),
    Difference("eos", "unread", IF, r"vrf \S+", "no arista.eos module models an interface's VRF"),
    Difference("eos", "unread", r"vlan \d+", r"trunk group \S+", "eos_vlans has no trunk group key"),
    Difference("eos", "added", r"vlan \d+", r"state active", "eos_vlans reads state active (the default) and renders it"),
    Difference(
        "eos",
        "unread",
        BGP,
        r"neighbor \S+ peer group \S+",
        "read (peer_group); the renderer drops the name: rm_templates/bgp_global.py compares the value with itself",
    ),
    Difference("eos", "added", BGP, r"neighbor \S+ peer group", "the same lines as above, without the group name (module bug)"),
    Difference("eos", "unread", BGP, r"no bgp default ipv4-unicast", "eos_bgp_global has no key for it"),
    Difference("eos", "unread", BGP, r"neighbor \S+ next-hop address-family ipv6 originate", "eos_bgp_address_family has no next-hop AF key"),
    Difference("eos", "unread", BGP, r"neighbor interface \S+ peer-group \S+ remote-as \d+", "eos_bgp_global has no interface-neighbor key"),
    Difference("eos", "added", BGP, r"exit", "eos_bgp_address_family closes its address-family blocks with exit"),
)

CASES = [
    ("nxos", "render/nxos"),  # leaf-spine, breakout, OOB, storage pair
    ("nxos", "render/nxos-3tier"),
    ("nxos", "render/nxos-2plane"),  # two compute planes (fabric.planes), p1-/p2- switches
    ("nxos", "render/nxos-shared"),  # shared spines: a VRF per plane (vrf member, router bgp vrf blocks)
    ("nxos", "render/nxos-800g"),  # Nexus 9364E-SG2-O: 800G cages in 2 x 400G
    ("nxos", "storage/nxos"),
    ("eos", "render/eos"),
    ("eos", "render/eos-3tier"),
    ("eos", "render/eos-unnumbered"),
    ("eos", "render/eos-2plane"),
    ("eos", "render/eos-apstra-ai"),  # issue 35: a published AI back-end design (Apstra "AI Cluster 64 DGX-H100")
    # render/eos-shared (shared spines, a vrf block per plane) is left out: arista.eos 12.0.0 eos_bgp_global drops a vrf
    # block that follows another vrf's address-family block (tests/render/test_shared_spines_render.py pins it); pyavd
    # checks that case (test_avd_reference.py)
    ("eos", "render/thor2-eos"),  # issue 34: the CNP class and priority derived from the Thor2 NICs (TC 7, cos 7)
    ("eos", "storage/eos"),
]
_MARK = {"nxos": "for NX-OS ", "eos": "for EOS "}


@cache
def texts(nos: str, case: str) -> dict[str, str]:
    """Distinct NX-OS / EOS texts of ``case`` over every supported release (header comments dropped) → their origins."""
    spec = load_cluster(definition(case))
    found: dict[str, str] = {}
    skipped = unsampled_switches(case)  # a large case: the first switches of each tier (conftest.SAMPLE_ABOVE)
    for release in NOS_RELEASES[nos].supported:
        try:
            files = render_configs(plan_cluster(with_release(spec, release)))
        except InputError:  # the compute fabric runs another NOS: the storage tier renders its default release
            files = render_configs(plan_cluster(spec))
        for path, text in files.items():
            if path.startswith("switches/") and path.split("/")[1] not in skipped and _MARK[nos] in text.splitlines()[0]:
                body = "\n".join(line for line in text.splitlines() if not re.match(r"^(!Command|! )", line))
                origin = f"{case}@{release}:{path}"
                found[body] = f"{found[body]} {origin}" if body in found else origin
    return found


@dataclass(frozen=True, slots=True)
class Verdict:
    unexplained: tuple[str, ...]
    used: frozenset[Difference]
    failures: tuple[str, ...]


def check(nos: str, text: str) -> Verdict:
    """Round-trip ``text`` through the vendor's modules and name every line no ``DIFFERENCES`` row explains."""
    collection, resources = COLLECTIONS[nos]
    kept = "\n".join(line for line in text.splitlines() if not any(p.match(line) for p in UNPARSABLE[nos]))
    back = round_trip(collection, resources, kept)
    ours = blocks("\n".join(section(kept, r.section) for r in resources))
    unexplained: list[str] = []
    used: set[Difference] = set()
    for kind, lines in (("unread", ours - back.lines), ("added", back.lines - ours)):
        for found in sorted(lines):
            rows = [d for d in DIFFERENCES if d.matches(nos, kind, found)]
            used.update(rows)
            if not rows:
                unexplained.append(f"{kind}: {found[0]} | {found[1]}")
    return Verdict(tuple(unexplained), frozenset(used), back.failures)


@cache
def verdicts(nos: str, case: str) -> dict[str, Verdict]:
    return {origin: check(nos, body) for body, origin in texts(nos, case).items()}


@pytest.mark.parametrize(("nos", "case"), CASES, ids=[c for _, c in CASES])
def test_every_line_reads_back_through_the_vendors_parsers(nos: str, case: str) -> None:
    found = verdicts(nos, case)
    assert found
    assert {o: v.failures for o, v in found.items() if v.failures} == {}
    assert {o: v.unexplained for o, v in found.items() if v.unexplained} == {}


def test_every_listed_difference_is_still_needed() -> None:
    used = set().union(*(v.used for nos, case in CASES for v in verdicts(nos, case).values()))
    assert [f"{d.nos} {d.kind}: {d.block} | {d.line}" for d in DIFFERENCES if d not in used] == []


def test_the_cases_cover_breakout_oob_storage_and_three_tiers() -> None:
    origins = [o for nos, case in CASES for joined in texts(nos, case).values() for o in joined.split()]
    assert any("interface breakout module" in b for b in texts("nxos", "render/nxos"))
    assert {"oob-mgmt", "stor-a", "superspine01-01", "stor-spine-a"} <= {o.split("/")[-2] for o in origins}
    assert {o.split("@")[1].split(":")[0] for o in origins} >= {"10.3", "10.4", "10.5", "4.32", "4.33", "4.34"}


@pytest.mark.parametrize(
    ("nos", "case", "old", "new", "expected"),
    [
        # negative controls: a mistyped keyword, and a value the parser reads differently
        (
            "nxos",
            "render/nxos",
            "  ip address 10.100.0.0/31",
            "  ip adress 10.100.0.0/31",
            "unread: interface Ethernet1/1/1 | ip adress 10.100.0.0/31",
        ),
        (
            "nxos",
            "render/nxos",
            "  mtu 9216\n  speed 100000\n  fec rs-fec\n  ip address 10.100.0.0/31",
            "  mtu 9216 bytes\n  speed 100000\n  fec rs-fec\n  ip address 10.100.0.0/31",
            "unread: interface Ethernet1/1/1 | mtu 9216 bytes",
        ),
        (
            "eos",
            "render/eos",
            "   neighbor FABRIC send-community",
            "   neighbor FABRIC send-comunity",
            "unread: router bgp 65101 | neighbor FABRIC send-comunity",
        ),
    ],
    ids=["nxos-typo", "nxos-trailing-word", "eos-typo"],
)
def test_a_line_the_vendor_parser_reads_differently_is_named(nos: str, case: str, old: str, new: str, expected: str) -> None:
    leaf = next(body for body, origin in texts(nos, case).items() if "/leaf01/" in origin)
    assert old in leaf
    assert check(nos, leaf).unexplained == ()
    assert expected in check(nos, leaf.replace(old, new, 1)).unexplained
