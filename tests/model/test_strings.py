"""The strict string types: what each accepts, and that each refuses what would break out of its place."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from fabric.__main__ import main
from fabric.catalog.switches import SWITCH_MODELS
from fabric.catalog.text import DESCRIPTION_MAX, UNPRINTABLE_CATEGORIES
from fabric.model import load_cluster, strings
from fabric.model.nodes import format_hostname
from fabric.model.strings import is_safe_text, is_switch_port_name
from tests.conftest import ROOT

INJECTIONS = ["a\nb", "a\rb", "a\x00b", "a\x1bb", "a\u2028b", "a'b", 'a"b', "a;b", "a$(b)", "a`b`", "a b", "a|b", "a&b", "a>b"]

ACCEPTS: dict[Any, list[str]] = {
    strings.InterfaceName: ["eth0", "enp24s0np0", "ibp24s0", "bond0.100", "swp1s0", "a" * 15, "vlan_10"],
    strings.HostName: ["gpu001", "a", "node-1", "x" * 63],
    strings.DomainName: ["example.com", "cluster.example.com", "a.b-c.d", "1cluster.example"],
    strings.Description: ["Two DGX H100 SUs on SN5600 (SONiC), lossless RoCEv2", "", "x" * 200, "caf\u00e9", "Rechenzentrum Süd — 北京", "ü" * 200],
    strings.GpuModel: ["H100-SXM5-80GB", "MI300X-192GB", "GB200", "B300-288GB", "a" * 63],
    strings.CatalogKey: ["sn5600", "7060x6-64pe", "dgx-h100", "a" * 63],
    strings.HostnameFormat: ["gpu{index}", "gpu{index:03d}", "{index:06d}-n", "n-{index:01d}"],
    strings.Guid: ["0x0c42a10300ab12cd", "0x0C42A10300AB12CD"],
    strings.FilePath: ["known_hosts", "../keys/known_hosts", "/etc/ssh/ssh_known_hosts"],
    strings.UserName: ["admin", "root", "svc.fabric", "_ops"],
    strings.Identifier: ["p5.48xlarge", "a3-megagpu-8g", "Standard_ND96isr_H100_v5", "projects/p/global/images/x", "BASIC_SSD"],
    strings.TagValue: ["ml-infra", "", "a b c"],
}
REFUSES: dict[Any, list[str]] = {
    strings.InterfaceName: ["", "a" * 16, "eth0:1", "eth/0", "-eth0", ".", "..", "eth1$(touch /tmp/x)"],
    strings.HostName: ["", "-a", "a-", "GPU01", "a" * 64, "a.b", "a_b"],
    strings.DomainName: ["", ".", "a..b", "-a.com", "a-.com", "x.com\nusername evil", "a" * 64 + ".com", ("a" * 60 + ".") * 5 + "com"],
    strings.Description: [
        "x" * 201,
        "ü" * 201,
        "line1\nline2",
        "tab\there",
        "a\x1b[2Jb",
        "a\x00b",
        "a\u202eb",
        "a\u2066b",
        "a\u200bb",
        "a\x85b",
        "a\U000e0041b",
    ],
    strings.GpuModel: ["", "H100 SXM", "H100\n", "-H100", "H100-", "a" * 64, "H100;reboot", "H100\u00e9"],
    strings.CatalogKey: ["", "SN5600", "-sn", "a" * 64, "sn 5600", "../sn5600", "sn5600\n"],
    strings.HostnameFormat: ["gpu", "gpu{index:0200000000d}", "gpu{index:07d}", "gpu{index:3d}", "gpu{idx}", "{index}{index}", "GPU{index}", "g{0}"],
    strings.Guid: ["0x0c42a10300ab12c", "0c42a10300ab12cd", "0x0c42a10300ab12cdz", "0x0c42a103 00ab12cd", "0x0c42a10300ab12cd\n"],
    strings.FilePath: ["", "a b", "a;b", "a\nb", "x" * 256],
    strings.UserName: ["", "-admin", "a" * 33, "admin user", "1admin"],
    strings.Identifier: ["", "a b", "-x", "x" * 129],
    strings.TagValue: ["x" * 257, "a\nb"],
}


@pytest.mark.parametrize("kind", list(ACCEPTS), ids=lambda k: str(k.__metadata__[0].description)[:30])
def test_each_type_accepts_real_values(kind: Any) -> None:
    adapter = TypeAdapter(kind)
    for value in ACCEPTS[kind]:
        assert adapter.validate_python(value) == value


@pytest.mark.parametrize("kind", list(REFUSES), ids=lambda k: str(k.__metadata__[0].description)[:30])
def test_each_type_refuses_bad_values_and_every_injection(kind: Any) -> None:
    adapter = TypeAdapter(kind)
    for value in [*REFUSES[kind], *(v for v in INJECTIONS if kind not in (strings.Description, strings.TagValue) or not is_safe_text(v))]:
        with pytest.raises(ValidationError):
            adapter.validate_python(value)


def test_hostname_formats_pad_to_their_width() -> None:
    assert [format_hostname("gpu{index:03d}", i) for i in (1, 42, 1000)] == ["gpu001", "gpu042", "gpu1000"]
    assert format_hostname("n{index}", 7) == "n7"


def test_every_port_name_the_catalog_gives_matches_its_nos_pattern() -> None:
    checked = 0
    for model in SWITCH_MODELS.values():
        for nos in model.nos:
            for speed in model.speeds():
                for index in range(model.radix(speed) or 0):
                    try:
                        name = model.port_name(nos, index, speed)
                    except ValueError:
                        continue  # a speed the NOS cannot name on this model
                    assert is_switch_port_name(nos, name), (model.name, nos, name)
                    checked += 1
    assert checked > 1000


@pytest.mark.parametrize("nos", sorted(strings.SWITCH_PORT_RE))
def test_port_patterns_refuse_injections(nos: str) -> None:
    for value in INJECTIONS:
        assert not is_switch_port_name(nos, "swp1" + value)
        assert not is_switch_port_name(nos, "Ethernet1" + value)


def _refused(adapter: TypeAdapter[str], value: str) -> bool:
    try:
        adapter.validate_python(value)
    except ValidationError:
        return True
    return False


def _printable_line(value: str) -> bool:
    return len(value) <= DESCRIPTION_MAX and not any(unicodedata.category(char) in UNPRINTABLE_CATEGORIES for char in value)


def test_description_refuses_exactly_the_control_and_format_characters_of_every_plane() -> None:
    """Every code point, one at a time: refused exactly when it is Cc, Cf, Cs, Zl or Zp; and the pattern alone (what a
    JSON Schema validator sees) refuses every such character of the Basic Multilingual Plane but the surrogates."""
    adapter = TypeAdapter(strings.Description)
    pattern = re.compile(strings.DESCRIPTION_RE)
    wrong = [f"U+{cp:04X}" for cp in range(0x110000) if _refused(adapter, chr(cp)) != (not _printable_line(chr(cp)))]
    assert wrong == []
    bmp = [cp for cp in range(0x10000) if not 0xD800 <= cp <= 0xDFFF]
    assert [f"U+{cp:04X}" for cp in bmp if (pattern.fullmatch(chr(cp)) is None) != (not _printable_line(chr(cp)))] == []


@given(st.text(max_size=DESCRIPTION_MAX + 20))
def test_description_accepts_exactly_one_printable_line_of_at_most_200(value: str) -> None:
    assert _refused(TypeAdapter(strings.Description), value) == (not _printable_line(value))


@given(st.text(alphabet=st.characters(categories=["Cc", "Cf", "Zl", "Zp"]), min_size=1, max_size=3), st.text(max_size=20), st.text(max_size=20))
def test_no_control_or_format_character_passes_any_strict_string(bad: str, head: str, tail: str) -> None:
    """A control or formatting character anywhere refuses the value, whatever string type it is given to."""
    for kind in [*ACCEPTS, strings.TagKey]:
        assert _refused(TypeAdapter(kind), head + bad + tail), (kind, head + bad + tail)


UNICODE_TEXT = "Rechenzentrum Süd — 北京, Halle\u00a03"


def test_unicode_descriptions_are_accepted_and_reach_no_device(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 30: a UTF-8 description reaches no device, so it is accepted; every command runs, and no rendered or
    exported file carries it (the descriptions that reach a device are the planner's own ASCII ones)."""
    text = (ROOT / "tests/data/export/nvl72.yaml").read_text(encoding="utf-8")
    text = text.replace("target: onprem\n", f"target: onprem\ndescription: {UNICODE_TEXT}\n", 1)
    text = text.replace("  inband: {cidr: 10.102.0.0/16,", f"  inband: {{description: '{UNICODE_TEXT}', cidr: 10.102.0.0/16,", 1)
    text = text.replace("  gb200-tray:\n", f"  gb200-tray:\n    description: GB200 NVL72 — {UNICODE_TEXT}\n", 1)
    definition = tmp_path / "cluster.yaml"
    definition.write_text(text, encoding="utf-8")
    spec = load_cluster(definition)
    assert spec.description == UNICODE_TEXT
    assert spec.planes.inband.description == UNICODE_TEXT
    assert spec.hardware["gb200-tray"].description.endswith(UNICODE_TEXT)
    file, out = str(definition), tmp_path / "out"
    commands = [
        ["validate", file],
        ["plan", file],
        ["render", file, "-o", str(out / "render")],
        ["report", file, "-o", str(out / "report")],
        ["export", "slurm", file, "-o", str(out / "slurm")],
        ["export", "k8s", file, "-o", str(out / "k8s")],
    ]
    for args in commands:
        assert main(args) == 0, capsys.readouterr().err
    written = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name.endswith(".conf") for p in written)
    devices = [p for p in written if "report" not in p.parts]  # the report may show it (escaped); no device file does
    assert [str(p) for p in devices if "Süd" in p.read_text(encoding="utf-8", errors="replace")] == []
