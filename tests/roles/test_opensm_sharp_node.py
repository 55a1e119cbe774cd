"""A booted node with Debian's upstream opensm (3.3) refuses a definition that needs NVIDIA's OpenSM for SHARP, before
writing a configuration that opensm could not parse, and says why (SHARP Rev 3.12.0: SHARP_am needs OpenSM v5.20)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.roles.containers import booted
from tests.roles.scenario import converge, role_playbook, site

pytestmark = [pytest.mark.container, pytest.mark.skipif(os.geteuid() != 0, reason="containers need root (./dev test runs as root in CI)")]
IB = "/srv/ib"


def test_upstream_opensm_is_refused_for_sharp_before_its_configuration_is_written(tmp_path: Path) -> None:
    gid = "fe80:0000:0000:0000:0c42:a103:00e1:7f5a"
    files = {f"{IB}/sys/class/infiniband/mlx5_0/ports/1/gids/0": (gid + "\n", 0o644)}
    play = [
        {
            "name": "port GUIDs",
            "hosts": "all",
            "gather_facts": False,
            "tasks": [{"name": "Read", "ansible.builtin.include_role": {"name": "opensm", "tasks_from": "port_guids"}}],
        }
    ]
    playbook = tmp_path / "play-opensm.yml"
    playbook.write_text(json.dumps([*play, *json.loads(role_playbook(tmp_path, "opensm").read_text())]))
    with booted("sm01", tmp_path, files=files) as sm:
        result, _ = converge(site("onprem-ib-sharp"), [sm], playbook, tmp_path, extravars={"opensm_sysfs": f"{IB}/sys"})
        found = {h.host: h.failures for h in result.hosts if h.failures}
        [(_, message)] = found["sm01"]
        assert "the definition needs OpenSM 5.20 or later (SHARP)" in message
        assert 'opensm --version says "3.3"' in message
        assert "install NVIDIA's OpenSM from DOCA-Host" in message
        assert "sharp_enabled" not in sm.read("/etc/opensm/opensm.conf") if (sm.root / "etc/opensm/opensm.conf").exists() else True
