"""Secrets: masked per NOS in everything shown or recorded, read from the environment only when a session opens.

The canary test puts secret values in the environment and in a switch's running config (as a real switch has them:
local users, SNMP, TACACS+, BGP keys), then runs the offline diff and the change record over it; no canary may appear
in stdout, stderr, the recorded diff or the audit log.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from fabric.__main__ import main
from fabric.apply.record import append_audit, record_device
from fabric.apply.rollout import device_access
from fabric.apply.secrets import ANY_NOS, mask_lines, mask_secrets, masked
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
    ],
    "nxos": [
        "username admin password 5 {s}  role network-admin",
        "snmp-server user ops network-operator auth sha {s} priv aes-128 {s} localizedkey",
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
    ],
    "frr": ["password {s}", "enable password {s}", " neighbor 10.0.0.1 password {s}", " ip ospf message-digest-key 1 md5 {s}"],
    "mlnx-os": ["username admin password 7 {s}", "snmp-server community {s} ro", "tacacs-server key 7 {s}"],
    "sonic": [
        '{{"op": "add", "path": "/TACPLUS_SERVER/10.0.0.9/passkey", "value": "{s}"}}',
        '{{"op": "add", "path": "/SNMP_COMMUNITY/{s}", "value": {{"TYPE": "RO"}}}}',
        '{{"op": "add", "path": "/SNMP_COMMUNITY", "value": {{"{s}": {{"TYPE": "RO"}}}}}}',
        '{{"op": "add", "path": "/BGP_NEIGHBOR/10.0.0.1", "value": {{"asn": "65100", "password": "{s}"}}}}',
        "vtysh:  neighbor 10.0.0.1 password {s}",
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
