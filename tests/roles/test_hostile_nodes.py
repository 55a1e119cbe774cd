"""Hostile input on the node side, without a node: a downloaded key is trusted only with the pinned fingerprint, the
NIC contract file a root shell sources at boot never executes a name, the patterns the roles check interface names and
addresses with refuse a newline, and port GUIDs are 0x + 16 hex digits before they reach partitions.conf."""

from __future__ import annotations

import base64
import re
import subprocess
from pathlib import Path

import jinja2
import pytest
import yaml

from plugins.filter.gpufabric_nodes import pgp_fingerprints, port_guids, unpinned_keys
from tests.conftest import ROOT
from tests.roles.stubs import role_templates

KEY = (Path(__file__).parent / "data" / "test-key.asc").read_text(encoding="utf-8")
KEY_FINGERPRINT = "3DDC1D98307B802BAB1029A8693EFF6594C2D8DE"  # gpg --with-colons --fingerprint, when the key was made


def test_the_fingerprint_of_an_armored_key_is_what_gpg_says() -> None:
    assert pgp_fingerprints(KEY) == [KEY_FINGERPRINT]


def test_a_tampered_or_foreign_key_has_another_or_no_fingerprint() -> None:
    lines = KEY.splitlines()
    body = next(n for n, line in enumerate(lines) if line and ":" not in line and not line.startswith("-"))
    flipped = lines[body][:10] + ("A" if lines[body][10] != "A" else "B") + lines[body][11:]
    assert pgp_fingerprints("\n".join([*lines[:body], flipped, *lines[body + 1 :]])) != [KEY_FINGERPRINT]
    assert pgp_fingerprints("<html>404 Not Found</html>") == []


@pytest.mark.parametrize("role", ["rdma_stack", "gpu_driver"])
def test_the_key_checks_compare_against_the_pinned_fingerprint_and_refuse_on_mismatch(role: str) -> None:
    """The role's assert, evaluated with Jinja as Ansible does: the test key passes when pinned, fails otherwise."""
    tasks = yaml.safe_load((ROOT / "roles" / role / "tasks" / "repository_key.yml").read_text())
    task = next(t for t in tasks if "ansible.builtin.assert" in t and "vars" in t)  # the fingerprint check (gpu_driver has two asserts)
    condition = task["ansible.builtin.assert"]["that"]
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    env.filters["gpufabric_unpinned_keys"] = unpinned_keys
    assert "gpufabric_pgp_fingerprints" in task["vars"][f"__{role}_key_fingerprints"]
    with_extra = _dearmor_test_key() + DEBIAN_KEYRING.read_bytes()  # the pinned key and others in one file
    cases = ((KEY, KEY_FINGERPRINT, True), (KEY, KEY_FINGERPRINT[-16:], True), (KEY, "A024F6F0E6D6A281", False), (with_extra, KEY_FINGERPRINT, False))
    for key, pinned, expected in cases:
        context = {f"__{role}_key_fingerprints": pgp_fingerprints(key), f"_{role}_plan": {"repository": {"key_fingerprint": pinned}}}
        verdict = env.from_string("{{ " + condition + " }}").render(context)
        assert verdict == str(expected), (pinned, verdict)


DEBIAN_KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")  # debian-archive-keyring, on every Debian


def _dearmor_test_key() -> bytes:
    lines = [line for line in KEY.splitlines() if line and ":" not in line and not line.startswith(("-", "="))]
    return base64.b64decode("".join(lines))


def gpg_fingerprints(path: Path, home: Path) -> list[str]:
    """Primary-key fingerprints as gpg lists them (``gpg --show-keys --with-colons``: the first fpr record after each
    pub, which may be preceded by rvk records; sub keys have their own fpr after sub)."""
    done = subprocess.run(
        ["gpg", "--homedir", str(home), "--batch", "--show-keys", "--with-colons", str(path)], capture_output=True, text=True, timeout=60, check=True
    )
    fingerprints: list[str] = []
    primary = False
    for record in (line.split(":") for line in done.stdout.splitlines()):
        if record[0] in ("pub", "sub"):
            primary = record[0] == "pub"
        elif record[0] == "fpr" and primary:
            fingerprints.append(record[9])
            primary = False
    return fingerprints


@pytest.mark.parametrize("keyring", sorted(Path("/usr/share/keyrings").glob("debian-archive-*.gpg")), ids=lambda p: p.name)
def test_the_fingerprints_the_roles_compute_are_the_ones_gpg_shows(tmp_path: Path, keyring: Path) -> None:
    """Real multi-key keyrings (Debian's archive keys), binary: the filter and gpg agree key for key, in order."""
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    expected = gpg_fingerprints(keyring, home)
    assert expected
    assert pgp_fingerprints(keyring.read_bytes()) == expected


def test_a_file_is_trusted_only_if_every_key_in_it_is_pinned() -> None:
    both = pgp_fingerprints(_dearmor_test_key() + DEBIAN_KEYRING.read_bytes())
    assert both[0] == KEY_FINGERPRINT
    assert len(both) > 1
    assert unpinned_keys(both[:1], [KEY_FINGERPRINT]) == []
    assert unpinned_keys(both, [KEY_FINGERPRINT], "k.gpg") == [f"k.gpg: key {f} is not pinned" for f in both[1:]]
    assert unpinned_keys([], [KEY_FINGERPRINT], "k.gpg") == ["k.gpg: not an OpenPGP public key (no key in the file)"]
    assert unpinned_keys(both[:1], ["A024F6F0E6D6A281"], "k.gpg") == [f"k.gpg: key {KEY_FINGERPRINT} is not pinned"]


def test_port_guids_are_refused_unless_16_hex_digits() -> None:
    assert port_guids(["0x0c42a10300e17f5a", "0x0002c9030002fce9"]) == ["0x0c42a10300e17f5a", "0x0002c9030002fce9"]
    for bad in ("0x0c42a10300e17f5a\nDefault=0x7fff", "0x0c42a10300e17f5", "ALL", "0x0C42A10300E17F5A ", 7):
        with pytest.raises(ValueError, match="is not a port GUID"):
            port_guids([bad], "dgx01")


def test_the_nic_contract_file_never_executes_a_port_name(tmp_path: Path) -> None:
    """Sourced by a root shell at boot: ``eth1$(touch …)`` stays a string (defence in depth behind preflight's check)."""
    marker = tmp_path / "pwned"
    hostile = [f"eth1$(touch {marker})", f"eth2`touch {marker}`", "eth3;touch " + str(marker), "eth4'$(id)'"]
    template = role_templates(ROOT / "roles" / "nic_qos")
    text = template.get_template("nic-qos.env.j2").render(
        ansible_managed="managed",
        gpufabric_cluster="c$(touch x)",
        nic_qos_ports=hostile,
        nic_qos_dscp=26,
        nic_qos_priority=3,
        nic_qos_pfc_priorities=[3],
        nic_qos_cnp_dscp=48,
        nic_qos_cnp_priority=6,
        nic_qos_tos=106,
        nic_qos_cable_length_m=5,
        nic_qos_sysfs=f"/sys$(touch {marker})",
        nic_qos_mlnx_qos="mlnx_qos",
        nic_qos_cma_roce_tos="cma_roce_tos",
        nic_qos_tool="mlnx",
        nic_qos_configfs="/sys/kernel/config",
        nic_qos_bnxtqos="bnxtqos",
    )
    env = tmp_path / "nic-qos.env"
    env.write_text(text)
    done = subprocess.run(["bash", "-c", f'set -u; . {env}; printf "%s\\n" "$PORTS" "$SYSFS"'], capture_output=True, text=True, check=True)
    assert not marker.exists()
    assert done.stdout.splitlines() == [" ".join(hostile), f"/sys$(touch {marker})"]


def test_network_names_and_addresses_with_a_newline_are_refused_by_the_roles_patterns() -> None:
    """network_planes and nic_qos check names and addresses with these patterns before anything is written."""
    patterns = yaml.safe_load((ROOT / "roles" / "network_planes" / "vars" / "main.yml").read_text())
    name, address = patterns["_network_planes_name_pattern"], patterns["_network_planes_address_pattern"]
    nic_qos = (ROOT / "roles" / "nic_qos" / "tasks" / "main.yml").read_text()
    assert name in nic_qos  # the same rule for the RoCE ports

    def matches(pattern: str, value: str) -> bool:  # Ansible's match test: re.match
        return re.match(pattern, value) is not None

    for good in ("enp24s0np0", "ibp24s0", "eth1.100", "enp170s0f1np1"):
        assert matches(name, good), good
    for bad in ("eth1\n[Network]\nDNS=1.2.3.4", "eth1\n", "eth1$(touch /tmp/x)", "a" * 16, "", "../eth0", "eth 1"):
        assert not matches(name, bad), repr(bad)
    assert matches(address, "10.100.0.1/31")
    for bad in ("10.100.0.1/31\nGateway=6.6.6.6", "10.100.0.1/31\n", "10.100.0.1/33", "10.100.0.300/24", "fe80::1/64"):
        assert not matches(address, bad), repr(bad)
