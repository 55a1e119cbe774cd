"""Canary secrets through every output channel of a push and of verify: progress lines, results, the change record and audit log,
exceptions, and the Ansible module's result in check and diff mode (no twin: fake switches at the session boundary).

Each switch's running config carries every secret form of tests/apply/test_secrets.py (local users, enable secrets,
SNMP communities and SNMPv3 keys, TACACS+/RADIUS keys, BGP and OSPF keys), and its device rejects the change quoting a
canary. Nothing but the backups (which restore the device) may hold a canary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fabric.__main__ import main
from fabric.apply.nos import Adapter
from fabric.apply.push import candidates, push_and_record
from fabric.apply.rollout import RolloutOptions
from fabric.apply.session import DeviceAccess, Session
from fabric.errors import PushError
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from tests.apply.test_secrets import FORMS
from tests.conftest import ROOT
from tests.packaging.test_fabric_push_access import module as fabric_push

DEFINITION = ROOT / "inventories" / "lab" / "cluster.yaml"
PLAN = plan_cluster(load_cluster(DEFINITION))
ACCESS = {s.name: DeviceAccess(s.name, "192.0.2.1", 22, "root", None, "/dev/null") for s in PLAN.fabric.switches} if PLAN.fabric else {}
CANARY = "cAnary{n}x7Q"
SECRET_LINES = [form.format(s=CANARY.format(n=f"{nos}{i}")) for nos, forms in FORMS.items() for i, form in enumerate(forms)]
CANARIES = [CANARY.format(n=f"{nos}{i}") for nos, forms in FORMS.items() for i, _ in enumerate(forms)]


@dataclass
class SecretSwitch:
    """An FRR switch whose running config holds every canary and which rejects config lines quoting one."""

    name: str
    sent: list[str] = field(default_factory=list)

    def show(self, command: str) -> str:
        if command == "show running-config":
            return f"hostname {self.name}\n" + "\n".join(SECRET_LINES) + "\n"
        return "{}"

    def configure(self, lines: list[str]) -> str:
        self.sent += lines
        msg = f"% Unknown command: {SECRET_LINES[0]}\n% rejected near {SECRET_LINES[-1]}"
        raise PushError(msg)

    def exit_config_mode(self) -> None:
        return None

    def disconnect(self) -> None:
        return None


@dataclass
class FakeModule:
    """What ``fabric_push._push`` reads of an AnsibleModule."""

    params: dict[str, Any]
    check_mode: bool = True
    _diff: bool = True


def leaks(texts: list[str]) -> list[str]:
    return sorted({c for c in CANARIES for text in texts if c in text})


def test_the_fake_switch_really_carries_every_canary() -> None:
    running = SecretSwitch("leaf01").show("show running-config")
    assert leaks([running]) == sorted(set(CANARIES))


@pytest.mark.parametrize("commit", [True, False], ids=["push", "dry-run"])
def test_a_push_shows_and_records_no_secret(tmp_path: Path, commit: bool) -> None:
    def connector(access: DeviceAccess, _: Adapter) -> Session:
        return SecretSwitch(access.name)

    steps: list[str] = []
    options = RolloutOptions(commit=commit, stop_on_failure=False, post_check_s=0, post_check_hold_s=0, reach_check=False)
    change, results = push_and_record(
        PLAN, DEFINITION, tmp_path, ACCESS, options, progress=lambda d, s: steps.append(f"{d}: {s}"), record=commit, connector=connector
    )
    assert any(r.error for r in results) == commit, "the devices reject the change and say so (quoting a canary)"
    assert leaks([r.backup for r in results]), "the results keep the running config verbatim (restores need it)"
    module = fabric_push()
    shown = module.build_result(change, results, steps, check_mode=not commit, diff_mode=True, wanted=candidates(PLAN))
    assert shown["diff"], "diff mode shows the running configs"
    assert leaks([repr(shown), *steps]) == []
    if commit:
        assert "msg" in shown
        recorded = [p for p in tmp_path.rglob("*") if p.is_file()]
        backups = [p for p in recorded if p.suffix in {".backup", ".before"}]
        assert leaks([p.read_text(encoding="utf-8") for p in backups]), "backups keep the real config to restore it"
        shown_files = [p.read_text(encoding="utf-8") for p in recorded if p not in backups]
        assert any(p.name == "audit.jsonl" for p in recorded)
        assert leaks(shown_files) == []


def test_the_module_in_check_and_diff_mode_offline_shows_no_secret(tmp_path: Path) -> None:
    change = tmp_path / "changes" / "20260101T000000000000Z"
    change.mkdir(parents=True)
    for name in candidates(PLAN):
        (change / f"{name}.before").write_text("\n".join(SECRET_LINES) + "\n", encoding="utf-8")
    params = {
        "definition": str(DEFINITION),
        "state_dir": str(tmp_path),
        "offline": True,
        "planes": ["compute"],
        "canaries": False,
        "rollback_to": None,
    }
    result = fabric_push()._push(FakeModule(params), None)
    assert result["diff"]
    assert leaks([repr(result)]) == []


def test_an_exception_quoting_a_secret_is_masked_on_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse(*_: object) -> None:
        raise PushError(f"device said: {SECRET_LINES[3]}")

    monkeypatch.setattr("fabric.cli.apply.offline_diff", refuse)
    code = main(["diff", str(DEFINITION), "--offline", "--state", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == 1
    assert "refused" in captured.err
    assert leaks([captured.out, captured.err]) == []


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_verify_shows_no_secret_a_device_quotes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    """``verify``: a switch whose reply quotes its secrets (here: the login fails, quoting every canary) becomes a
    problem of its verdict; neither the text nor the JSON output shows a canary."""
    import fabric.cli.apply as apply_cli
    from fabric.apply.checks.verify import verify_fabric

    def connector(access: DeviceAccess, _: Adapter) -> Session:
        raise PushError(f"{access.name} said:\n" + "\n".join(SECRET_LINES))

    def on_fakes(plan: Any, wanted: Any, _: Any, **kwargs: Any) -> Any:
        return verify_fabric(plan, wanted, ACCESS, **{**kwargs, "connector": connector})

    monkeypatch.setattr(apply_cli, "verify_fabric", on_fakes)
    monkeypatch.setattr(apply_cli, "access_for", lambda *_: ACCESS)
    code = main(["verify", str(DEFINITION), "--state", str(tmp_path), *(["--json"] if as_json else [])])
    captured = capsys.readouterr()
    assert code == 1, "no switch could be checked"
    assert "said" in captured.out, "the device's reply is shown (masked)"
    assert leaks([captured.out, captured.err]) == []
