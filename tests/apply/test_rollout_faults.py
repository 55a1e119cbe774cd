"""Rollout faults at the session boundary (no twin): a recovery that itself fails is the device's result, never the
push's crash; a record that cannot be written stops the push before any device is touched."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from fabric.apply.nos import Adapter
from fabric.apply.push import candidates
from fabric.apply.record import ChangeRecord
from fabric.apply.rollout import RolloutOptions, push_fabric
from fabric.apply.session import DeviceAccess, Session
from fabric.errors import RecordError
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from tests.conftest import ROOT

PLAN = plan_cluster(load_cluster(ROOT / "inventories" / "lab" / "cluster.yaml"))
ACCESS = {s.name: DeviceAccess(s.name, "192.0.2.1", 22, "root", None, "/dev/null") for s in PLAN.fabric.switches} if PLAN.fabric else {}


@dataclass
class FakeSwitch:
    """An empty FRR switch: reads work; ``broken`` makes config lines, or every command, fail."""

    name: str
    configure_fails: bool = False
    everything_fails: bool = False
    sent: list[str] = field(default_factory=list)

    def show(self, command: str) -> str:
        if self.everything_fails:
            msg = "recovery blew up"
            raise RuntimeError(msg)
        return f"hostname {self.name}\n" if command == "show running-config" else "{}"

    def configure(self, lines: list[str]) -> str:
        self.sent += lines
        if self.configure_fails:
            self.everything_fails = True  # the session is gone: the in-session revert fails too
            msg = "Socket is closed"
            raise OSError(msg)
        return ""

    def exit_config_mode(self) -> None:
        return None

    def disconnect(self) -> None:
        return None


def test_an_exception_inside_the_recovery_is_that_devices_result_and_the_push_goes_on(tmp_path: Path) -> None:
    logins: dict[str, int] = {}

    def connector(access: DeviceAccess, _: Adapter) -> Session:
        logins[access.name] = logins.get(access.name, 0) + 1
        if access.name == "leaf01":
            return FakeSwitch(access.name, configure_fails=True, everything_fails=logins[access.name] > 1)
        return FakeSwitch(access.name)

    options = RolloutOptions(commit=True, stop_on_failure=False, post_check_s=0, post_check_hold_s=0, reach_check=False)
    results = {r.device: r for r in push_fabric(PLAN, candidates(PLAN), ACCESS, options, lambda *_: None, change="c1", connector=connector)}
    leaf = results["leaf01"]
    assert leaf.error is not None
    assert "ROLLBACK INCOMPLETE: recovery blew up" in leaf.error
    assert set(results) == {"spine01", "spine02", "leaf01", "leaf02"}


def test_a_record_that_cannot_take_a_backup_stops_before_any_device_is_touched(tmp_path: Path) -> None:
    switches: dict[str, FakeSwitch] = {}

    def connector(access: DeviceAccess, _: Adapter) -> Session:
        return switches.setdefault(access.name, FakeSwitch(access.name))

    record = ChangeRecord(tmp_path, "c2")
    (tmp_path / "changes").write_text("", encoding="utf-8")  # not a directory: the first backup cannot be written
    with pytest.raises(RecordError, match="cannot write the change record"):
        push_fabric(PLAN, candidates(PLAN), ACCESS, RolloutOptions(commit=True), lambda *_: None, change="c2", record=record, connector=connector)
    assert switches, "the backups were read"
    assert not [s.sent for s in switches.values() if s.sent], "nothing was sent to any switch"
