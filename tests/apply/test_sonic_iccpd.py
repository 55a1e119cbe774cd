"""A SONiC push of an MCLAG config stops before any change on an image without docker-iccpd.

sonic-buildimage ``rules/config`` (202405, 202411): ``INCLUDE_ICCPD = n``; ``FEATURE|iccpd`` exists only on images built
with ``INCLUDE_ICCPD=y`` (``files/build_templates/init_cfg.json.j2``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from fabric.apply.nos import ADAPTERS
from fabric.errors import DeviceRejectedError
from fabric.model import load_cluster
from fabric.plan import plan_cluster
from fabric.render import render_configs
from tests.conftest import DATA


@dataclass
class Recorder:
    """A Session that answers ``show runningconfiguration all`` with ``running`` and records every command."""

    running: dict[str, object]
    sent: list[str] = field(default_factory=list)

    def show(self, command: str) -> str:
        self.sent.append(command)
        return json.dumps(self.running) if command == "show runningconfiguration all" else ""

    def configure(self, lines: list[str]) -> str:
        self.sent.extend(lines)
        return ""

    def exit_config_mode(self) -> None: ...

    def disconnect(self) -> None: ...


def _candidate(switch: str) -> str:
    files = render_configs(plan_cluster(load_cluster(DATA / "storage" / "sonic" / "cluster.yaml")))
    return ADAPTERS["sonic"].candidate({"config_db.json": files[f"switches/{switch}/config_db.json"]})


def test_an_mclag_push_to_an_image_without_iccpd_changes_nothing() -> None:
    session = Recorder({"FEATURE": {"bgp": {"state": "enabled"}}})
    with pytest.raises(DeviceRejectedError, match=r"no docker-iccpd \(no FEATURE\|iccpd: built without INCLUDE_ICCPD=y\)"):
        ADAPTERS["sonic"].stage(session, "c1", [], _candidate("stor-su1-1-a"))
    assert session.sent == ["show runningconfiguration all"]  # no checkpoint, no patch


def test_an_image_with_iccpd_goes_on_to_the_checkpoint() -> None:
    session = Recorder({"FEATURE": {"iccpd": {"state": "disabled"}}})
    ADAPTERS["sonic"].stage(session, "c1", [], _candidate("stor-su1-1-a"))
    assert session.sent[0] == "show runningconfiguration all"
    assert session.sent[1].startswith("sudo config checkpoint ")


def test_a_config_without_mclag_is_not_asked_about_iccpd() -> None:
    session = Recorder({})
    candidate = ADAPTERS["sonic"].candidate({"config_db.json": json.dumps({"PORT": {}})})
    ADAPTERS["sonic"].stage(session, "c1", [], candidate)
    assert not any(c == "show runningconfiguration all" for c in session.sent)


def test_the_storage_config_db_turns_iccpd_on() -> None:
    db = json.loads(_candidate("stor-spine-a"))["config_db"]
    assert db["FEATURE"] == {"iccpd": {"state": "enabled"}}
