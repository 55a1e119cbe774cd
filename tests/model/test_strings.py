"""The strict string types: what each accepts, and that each refuses what would break out of its place."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from fabric.catalog.switches import SWITCH_MODELS
from fabric.model import strings
from fabric.model.nodes import format_hostname
from fabric.model.strings import is_safe_text, is_switch_port_name

INJECTIONS = ["a\nb", "a\rb", "a\x00b", "a\x1bb", "a\u2028b", "a'b", 'a"b', "a;b", "a$(b)", "a`b`", "a b", "a|b", "a&b", "a>b"]

ACCEPTS: dict[Any, list[str]] = {
    strings.InterfaceName: ["eth0", "enp24s0np0", "ibp24s0", "bond0.100", "swp1s0", "a" * 15, "vlan_10"],
    strings.HostName: ["gpu001", "a", "node-1", "x" * 63],
    strings.DomainName: ["example.com", "cluster.example.com", "a.b-c.d", "1cluster.example"],
    strings.Description: ["Two DGX H100 SUs on SN5600 (SONiC), lossless RoCEv2", "", "x" * 200],
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
    strings.Description: ["x" * 201, "line1\nline2", "tab\there", "caf\u00e9"],
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
