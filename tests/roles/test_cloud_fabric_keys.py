"""cloud_fabric trusts Google's apt keys only when every key in each downloaded file is pinned: its key tasks run for real
on the test machine, from file:// URLs into a temporary staging and trust directory (nothing outside tmp_path is written)."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest

from tests.roles.scenario import ansible

pytestmark = pytest.mark.slow  # one ansible-playbook run per test

DATA = Path(__file__).parent / "data"
KEY_FINGERPRINT = "3DDC1D98307B802BAB1029A8693EFF6594C2D8DE"  # tests/roles/data/test-key.asc (gpg --with-colons)
DEBIAN_KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")


def run_keys(tmp_path: Path, key: bytes, fingerprints: list[str]) -> tuple[int, str, Path]:
    """The role's google_keys.yml with one key file served from ``key``; returns (rc, output, the trusted path)."""
    served = tmp_path / "served" / "apt-key.gpg"
    served.parent.mkdir()
    served.write_bytes(key)
    trusted = tmp_path / "trusted" / "gpufabric-google-cloud.asc"
    trusted.parent.mkdir()
    keys = [{"url": served.as_uri(), "dest": str(trusted), "fingerprints": fingerprints}]
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "vars": {"cloud_fabric_google_keys": keys, "cloud_fabric_key_staging": str(tmp_path / "staging")},
            "tasks": [{"ansible.builtin.include_role": {"name": "cloud_fabric", "tasks_from": "google_keys.yml"}}],
        }
    ]
    playbook = tmp_path / "keys.yml"
    playbook.write_text(json.dumps(play), encoding="utf-8")
    done = ansible("ansible-playbook", "-i", "localhost,", "-c", "local", "-e", f"ansible_python_interpreter={sys.executable}", str(playbook))
    return done.returncode, done.stdout + done.stderr, trusted


def armored_test_key() -> bytes:
    return (DATA / "test-key.asc").read_bytes()


def test_a_key_file_whose_keys_are_all_pinned_is_trusted(tmp_path: Path) -> None:
    rc, output, trusted = run_keys(tmp_path, armored_test_key(), [KEY_FINGERPRINT])
    assert rc == 0, output
    assert trusted.read_bytes() == armored_test_key()


def test_a_wrong_fingerprint_fails_naming_the_key_and_trusts_nothing(tmp_path: Path) -> None:
    rc, output, trusted = run_keys(tmp_path, armored_test_key(), ["35BAA0B33E9EB396F59CA838C0BA5CE6DC6315A3"])
    assert rc != 0
    assert f"apt-key.gpg: key {KEY_FINGERPRINT} is not pinned (pinned: 35BAA0B33E9EB396F59CA838C0BA5CE6DC6315A3)" in output
    assert "Nothing was trusted" in output
    assert not trusted.exists()


def test_the_pinned_key_with_another_in_the_same_binary_file_is_refused(tmp_path: Path) -> None:
    text = armored_test_key().decode()
    body = "".join(line for line in text.splitlines() if line and ":" not in line and not line.startswith(("-", "=")))
    rc, output, trusted = run_keys(tmp_path, base64.b64decode(body) + DEBIAN_KEYRING.read_bytes(), [KEY_FINGERPRINT])
    assert rc != 0
    assert "is not pinned" in output
    assert KEY_FINGERPRINT + " is not pinned" not in output  # the pinned one passes, the others are named
    assert not trusted.exists()
