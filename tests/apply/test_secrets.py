"""Secrets: masked per NOS in everything shown or recorded, read from the environment only when a session opens.

The canary test puts secret values in the environment and in a switch's running config (as a real switch has them:
local users, SNMP, TACACS+, BGP keys), then runs the offline diff and the change record over it; no canary may appear
in stdout, stderr, the recorded diff or the audit log.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from fabric.__main__ import main
from fabric.apply import secrets
from fabric.apply.record import append_audit, record_device
from fabric.apply.rollout import device_access
from fabric.apply.secrets import ANY_NOS, MAX_LINE, mask_lines, mask_secrets, masked, too_long
from fabric.apply.transaction import PushResult
from fabric.errors import InputError
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from tests.conftest import DATA

CANARIES = {
    "FABRIC_CANARY_PASSWORD": "canary-pw-6f1d0b",
    "FABRIC_CANARY_COMMUNITY": "canary-comm-93ae",
    "FABRIC_CANARY_TACACS": "canary-tac-5c2e",
    "FABRIC_CANARY_BGP": "canary-bgp-a7d4",
    "FABRIC_CANARY_HASH": "$6$canarysalt$canaryhash0f9e8d",
    "FABRIC_CANARY_SNMP": "canary-snmp-2b8c",
}

# One line per secret form per NOS, from the vendor references cited in fabric/apply/secrets.py; the secret is {s}.
FORMS = {
    "eos": [
        "username admin privilege 15 role network-admin secret sha512 {s}",
        "enable password sha512 {s}",
        "snmp-server community {s} ro",
        "tacacs-server host 10.0.0.9 vrf mgmt key 7 {s}",
        "radius-server key 7 {s}",
        "ntp authentication-key 1 md5 7 {s}",
        "   neighbor 10.0.0.1 password 7 {s}",
        "snmp-server user ops network-operator v3 auth sha {s} priv aes {s}",
        "snmp-server user ops network-operator v3 auth sha256 {s} priv aes256 {s}",
        "   ip ospf authentication-key 7 {s}",
        "   ip ospf message-digest-key 1 sha256 7 {s}",
    ],
    "nxos": [
        "username admin password 5 {s}  role network-admin",
        "snmp-server user ops network-operator auth sha {s} priv aes-128 {s} localizedkey",
        "snmp-server user ops network-operator auth sha-256 {s} priv {s}",
        'radius-server key 7 "{s}"',
        "  key-string 7 {s}",
        "snmp-server community {s} group network-operator",
        'tacacs-server key 7 "{s}"',
        "  neighbor 10.0.0.1 password 3 {s}",
    ],
    "cumulus": [
        "nv set system aaa user ops hashed-password {s}",
        "nv set system aaa user ops password {s}",
        "nv set service snmp-server readonly-community {s} access any",
        "nv set system aaa tacacs server 1 secret {s}",
        "nv set system aaa radius server 10.0.0.9 key {s}",
        "nv set vrf default router bgp neighbor 10.0.0.1 password {s}",
        "nv set service snmp-server username ops auth-sha {s} encrypt-aes {s}",
        "nv set system snmp-server username ops auth-md5 {s} encrypt-des {s}",
        "nv set system aaa radius server 10.0.0.9 secret {s}",
        "secret={s}",
        "createUser ops SHA {s} AES {s}",
    ],
    "frr": [
        "password {s}",
        "enable password {s}",
        " neighbor 10.0.0.1 password {s}",
        " ip ospf message-digest-key 1 md5 {s}",
        " ip ospf authentication-key {s}",
        " area-password md5 {s}",
    ],
    "mlnx-os": ["username admin password 7 {s}", "snmp-server community {s} ro", "tacacs-server key 7 {s}"],
    "sonic": [
        '{{"op": "add", "path": "/TACPLUS_SERVER/10.0.0.9/passkey", "value": "{s}"}}',
        '{{"op": "add", "path": "/SNMP_COMMUNITY/{s}", "value": {{"TYPE": "RO"}}}}',
        '{{"op": "add", "path": "/SNMP_COMMUNITY", "value": {{"{s}": {{"TYPE": "RO"}}}}}}',
        '{{"op": "add", "path": "/BGP_NEIGHBOR/10.0.0.1", "value": {{"asn": "65100", "password": "{s}"}}}}',
        "vtysh:  neighbor 10.0.0.1 password {s}",
        '{{"op": "add", "path": "/SNMP_USER/ops", "value": {{"SNMP_USER_AUTH_PASSWORD": "{s}", "SNMP_USER_ENCRYPTION_PASSWORD": "{s}"}}}}',
        '{{"op": "replace", "path": "/SNMP_USER/ops/SNMP_USER_ENCRYPTION_PASSWORD", "value": "{s}"}}',
        '{{"op": "add", "path": "/BGP_NEIGHBOR/default|10.0.0.1/auth_password", "value": "{s}"}}',
        '    "SNMP_USER_AUTH_PASSWORD": "{s}",',
        'no {{"op": "remove", "path": "/TACPLUS/global", "value": {{"passkey": "{s}"}}}}',
    ],
}
CASES = [(nos, form) for nos, forms in FORMS.items() for form in forms]


@pytest.mark.parametrize(("nos", "form"), CASES, ids=[f"{nos}-{i}" for i, (nos, _) in enumerate(CASES)])
def test_every_secret_form_is_masked_with_its_hash(nos: str, form: str) -> None:
    secret = "Zq9canaryS3cret"
    line = form.format(s=secret)
    for flavour in (nos, ANY_NOS):
        out = mask_secrets(flavour, line)
        assert secret not in out, flavour
        assert "<masked:" in out


def test_a_changed_secret_stays_visible_and_the_rest_of_the_line_stays() -> None:
    before = mask_secrets("eos", "snmp-server community alpha ro")
    after = mask_secrets("eos", "snmp-server community bravo ro")
    assert before != after
    assert before == f"snmp-server community {masked('alpha')} ro"


def test_lines_without_secrets_are_untouched() -> None:
    lines = ["   neighbor FABRIC send-community", "username admin ssh-key ssh-ed25519 AAAAC3Nz", "interface Ethernet1/1", "qos trust dscp"]
    assert mask_lines("eos", lines) == lines


def test_private_key_blocks_are_masked_whole() -> None:
    text = "crypto key\n-----BEGIN RSA PRIVATE KEY-----\nMIIcanary\n-----END RSA PRIVATE KEY-----\nend"
    out = mask_secrets("eos", text)
    assert "MIIcanary" not in out
    assert out.startswith("crypto key\n<masked:")


def _definition(tmp_path: Path) -> Path:
    data = yaml.safe_load((DATA / "render" / "eos" / "cluster.yaml").read_text(encoding="utf-8"))
    data.setdefault("switches", {})["credentials"] = {"username": "admin", "password_env": "FABRIC_CANARY_PASSWORD", "use_ssh_agent": False}
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _running_config(candidate: str) -> str:
    secrets = [
        f"username admin privilege 15 role network-admin secret sha512 {CANARIES['FABRIC_CANARY_HASH']}",
        f"enable password {CANARIES['FABRIC_CANARY_PASSWORD']}",
        f"snmp-server community {CANARIES['FABRIC_CANARY_COMMUNITY']} ro",
        f"tacacs-server host 10.0.0.9 key 7 {CANARIES['FABRIC_CANARY_TACACS']}",
        "router bgp 65000",
        f"   neighbor 10.9.9.9 password 7 {CANARIES['FABRIC_CANARY_BGP']}",
        f"snmp-server user ops network-operator v3 auth sha {CANARIES['FABRIC_CANARY_SNMP']} priv aes {CANARIES['FABRIC_CANARY_SNMP']}",
    ]
    return "\n".join(secrets) + "\n" + candidate


def test_canary_secrets_never_reach_output_records_or_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in CANARIES.items():
        monkeypatch.setenv(name, value)
    definition = _definition(tmp_path)
    plan = plan_cluster(load_cluster(definition))
    from fabric.apply.push import candidates

    wanted = candidates(plan)
    state = tmp_path / "state"
    change = state / "changes" / "20260101T000000000000Z"
    change.mkdir(parents=True)
    for name, candidate in wanted.items():
        (change / f"{name}.backup").write_text(_running_config(candidate), encoding="utf-8")
    outputs = []
    for extra in ([], ["--json"]):
        code = main(["diff", str(definition), "--offline", "--state", str(state), *extra])
        captured = capsys.readouterr()
        assert code == 3, captured.err  # the secrets are not in the candidate: changes pending
        outputs.append(captured.out + captured.err)
    assert "<masked:" in outputs[0], "the removed secret lines show as masked changes"
    rejected = f"% Invalid input at 'tacacs-server key 7 {CANARIES['FABRIC_CANARY_TACACS']}'"
    results = [
        PushResult(name, changed=True, diff=[f"no snmp-server community {CANARIES['FABRIC_CANARY_COMMUNITY']} ro"], error=rejected) for name in wanted
    ]
    for result in results:
        record_device(state, "20260101T000001000000Z", result, None)
    append_audit(state, "20260101T000001000000Z", definition, results, commit=False)
    recorded = [p.read_text(encoding="utf-8") for p in state.rglob("*") if p.is_file() and p.suffix in {".diff", ".jsonl"}]
    assert recorded
    for text in [*outputs, *recorded]:
        for value in CANARIES.values():
            assert value not in text


def test_password_env_reaches_the_session_and_not_its_repr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_CANARY_PASSWORD", CANARIES["FABRIC_CANARY_PASSWORD"])
    definition = _definition(tmp_path)
    spec = load_cluster(definition)
    access = device_access(plan_cluster(spec), spec.switches, tmp_path)
    assert {a.password for a in access.values()} == {CANARIES["FABRIC_CANARY_PASSWORD"]}
    assert all(CANARIES["FABRIC_CANARY_PASSWORD"] not in repr(a) for a in access.values())


def test_a_named_but_unset_variable_is_an_input_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FABRIC_CANARY_PASSWORD", raising=False)
    spec = load_cluster(_definition(tmp_path))
    with pytest.raises(InputError) as caught:
        device_access(plan_cluster(spec), spec.switches, tmp_path)
    assert caught.value.findings[0].dotted_path == "switches.credentials.password_env"
    assert "environment variable FABRIC_CANARY_PASSWORD is not set" in caught.value.findings[0].message


def test_plan_json_of_a_definition_with_secrets_prints_none(capsys: pytest.CaptureFixture[str]) -> None:
    for case in ("secret-key-names", "secret-value-shapes"):
        path = DATA / "hostile" / f"{case}.yaml"
        code = main(["plan", "--json", str(path)])
        captured = capsys.readouterr()
        assert code == 2
        assert captured.out == ""
        assert "canary" not in captured.err
        assert "AKIAIOSFODNN7EXAMPLE" not in captured.err
        assert json.dumps("ghp_0123456789abcdefghijABCDEFGHIJ0123456789")[1:-1] not in captured.err


SECRET_TEXT = st.text(alphabet=st.characters(categories=("L", "N", "P", "S"), exclude_characters='"\\<'), min_size=6, max_size=40)
NOISE = st.lists(st.sampled_from([*"ab 7{}:,\"'-", "password", "key", "priv", "auth sha", "secret", " 7 ", "\\n"]), max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from(CASES), secret=SECRET_TEXT, before=NOISE, after=NOISE)
@example(case=("cumulus", "secret={s}"), secret="00000:", before="password", after="")  # a keyword before an assignment
@example(case=("eos", "enable password sha512 {s}"), secret="secret", before="", after="")  # a secret that is a keyword
def test_every_form_is_masked_whatever_the_secret_and_around_it(case: tuple[str, str], secret: str, before: str, after: str) -> None:
    """Property: any secret value in any form, with any text before and after, never comes out; masking is idempotent."""
    nos, form = case
    assume(not secret.isdigit() and secret.lower() not in {"chain", "read", "write", "notify", "context"})
    # a secret that is part of the form's own words, the noise or the marker cannot be told from them in the output
    assume(all(secret.lower() not in text.lower() for text in (form.format(s=""), before, after, "<masked:0123456789abcdef>")))
    line = form.format(s=secret)
    for text in (line, f"{before} {line}" if not line.startswith("{") else line, f"{line} {after}".rstrip() if not line.endswith("}") else line):
        for flavour in (nos, ANY_NOS):
            once = mask_secrets(flavour, text)
            assert secret not in once, (flavour, text)
            assert mask_secrets(flavour, once) == once


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=400))
def test_masking_any_text_is_idempotent_and_keeps_its_lines(text: str) -> None:
    once = mask_lines(ANY_NOS, text.split("\n"))
    assert len(once) == len(text.split("\n"))
    assert mask_lines(ANY_NOS, once) == once


def test_a_line_over_the_bound_is_never_shown() -> None:
    secret = "Zq9canaryS3cret"
    huge = "password " + secret + " " + "x" * 1_000_000
    assert mask_secrets(ANY_NOS, huge) == too_long(len(huge))
    lines = mask_lines("eos", ["interface Ethernet1", huge, f"enable secret {secret}"])
    assert lines[:2] == ["interface Ethernet1", too_long(len(huge))]
    assert secret not in lines[2]


def test_hostile_lines_just_under_the_bound_are_masked_in_one_pass() -> None:
    """Lines built against backtracking (the 216 KB line of issue 30 took 81 s): repeated openers, no closers."""
    size = MAX_LINE - 100
    hostile = [
        "-----BEGIN PRIVATE KEY-----" * (size // 27),
        '"password": "\\"' * (size // 16),
        'key "' * (size // 5),
        "authentication-key " + "1 " * (size // 2 - 20),
        "secret " + " " * (size - 10),
    ]
    for line in hostile:
        out = mask_secrets(ANY_NOS, line)
        assert mask_secrets(ANY_NOS, out) == out
    assert "PRIVATE KEY" not in mask_secrets(ANY_NOS, hostile[0])


def test_the_masker_has_no_backtracking_pattern() -> None:
    """Every regular expression of the masker stays linear: no unbounded quantifier inside a repeated group, no lazy
    repeat (the old ``.*?`` private-key pattern and ``(?:\\s+…)?\\s+`` forms); the token scanner does the rest."""
    sre: Any = importlib.import_module("re._parser")  # the pattern parser (private, no stubs)

    def walk(items: Any, inside: bool) -> None:
        for op, arg in items:
            name = str(op)
            if name in {"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"}:
                _, high, body = arg
                assert name != "MIN_REPEAT", "lazy repeat"
                assert not (inside and high == sre.MAXREPEAT), "nested unbounded repeat"
                walk(body, inside or high > 1)
            elif name == "SUBPATTERN":
                walk(arg[-1], inside)
            elif name == "BRANCH":
                for branch in arg[1]:
                    walk(branch, inside)

    patterns = [value for value in vars(secrets).values() if isinstance(value, re.Pattern)]
    assert patterns
    for pattern in patterns:
        walk(sre.parse(pattern.pattern), inside=False)


def test_a_private_key_in_a_diff_is_masked_line_by_line() -> None:
    lines = ["+ crypto pki key", "+ -----BEGIN EC PRIVATE KEY-----", "+ MHcCAQEEIcanary", "+ -----END EC PRIVATE KEY-----", "+ exit"]
    out = mask_lines("eos", lines)
    assert len(out) == len(lines)
    assert not [line for line in out if "canary" in line]
    assert out[0] == lines[0]
    assert out[-1] == lines[-1]
    unterminated = mask_lines("eos", [*lines[:3], "+ MIIsecondcanary"])
    assert not [line for line in unterminated if "canary" in line]


def test_a_sonic_running_config_document_is_masked_field_by_field() -> None:
    document = {
        "config_db": {
            "SNMP_COMMUNITY": {"commcanary": {"TYPE": "RO"}},
            "SNMP_USER": {"ops": {"SNMP_USER_AUTH_PASSWORD": "authcanary", "SNMP_USER_ENCRYPTION_PASSWORD": "privcanary"}},
            "TACPLUS": {"global": {"passkey": "tacacscanary"}},
        },
        "frr": "router bgp 65000\n neighbor 10.0.0.1 password bgpcanary\n",
    }
    text = json.dumps(document, indent=1, sort_keys=True) + "\n"
    out = mask_secrets("sonic", text)
    assert "canary" not in out
    assert json.loads(out)["config_db"]["SNMP_USER"]["ops"]["SNMP_USER_AUTH_PASSWORD"] == masked("authcanary")
    assert not [line for line in mask_lines(ANY_NOS, text.splitlines()) if "canary" in line], "also line by line (a diff of it)"
