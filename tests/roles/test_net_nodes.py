"""The network roles' answers to the issue-29 audit (node-audit.md O-12, sm_kind), in booted bookworm containers:
opensm leaves a host alone when the definition names UFM as the subnet manager, stops the opensm an earlier run of
its own started there, and refuses one it did not start."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.roles.containers import booted
from tests.roles.scenario import converge, explain, failures, role_playbook, site

pytestmark = [pytest.mark.container, pytest.mark.skipif(os.geteuid() != 0, reason="containers need root (./dev test runs as root in CI)")]

# A stand-in for the distribution's opensm.service: a unit that stays active, as Debian's oneshot does (RemainAfterExit).
OPENSM_UNIT = "\n".join(
    [
        "[Unit]",
        "Description=stand-in opensm",
        "[Service]",
        "Type=oneshot",
        "RemainAfterExit=yes",
        "ExecStart=/bin/true",
        "[Install]",
        "WantedBy=multi-user.target",
        "",
    ]
)


def ufm_site(workdir: Path) -> Path:
    """The InfiniBand example with infiniband.subnet_manager.kind: ufm (sm01 and sm02 are UFM hosts)."""
    text = site("onprem-ib").read_text(encoding="utf-8")
    changed = text.replace("    kind: opensm\n", "    kind: ufm\n", 1)
    assert changed != text
    path = workdir / "onprem-ib-ufm" / "cluster.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(changed, encoding="utf-8")
    return path


@pytest.mark.parametrize("ours", [True, False], ids=["started-by-an-earlier-run", "someone-elses"])
def test_opensm_installs_nothing_where_ufm_is_the_subnet_manager_and_no_opensm_runs_beside_it(tmp_path: Path, ours: bool) -> None:
    header = "# managed by gpufabric (Ansible), do not edit: opensm.service starts opensm@<guid> for each of these ports\n"
    files = {
        "/etc/systemd/system/opensm.service": (OPENSM_UNIT, 0o644),
        "/etc/default/opensm": ((header if ours else "") + "PORTS=0x0c42a10300e17f5a\n", 0o644),
    }
    with booted("sm01", tmp_path, files=files, private_network=True) as sm:
        sm.run("systemctl daemon-reload && systemctl enable --now opensm.service")
        assert sm.run("systemctl is-active opensm.service").stdout.strip() == "active"
        result, events = converge(ufm_site(tmp_path), [sm], role_playbook(tmp_path, "opensm"), tmp_path)
        assert not (sm.root / "etc/opensm/partitions.conf").exists()  # nothing of this role's OpenSM on a UFM host
        assert sm.run("dpkg-query -W opensm").returncode != 0  # and no package (private network: an install would fail anyway)
        if ours:
            assert result.ok, explain(result)
            assert sm.run("systemctl is-active opensm.service").stdout.strip() == "inactive"
            assert sm.run("systemctl is-enabled opensm.service").stdout.strip() == "disabled"
            [report] = [r for r in events.results("Verify | report") if "msg" in r]
            assert "the subnet manager is ufm" in report["msg"], report
        else:
            [(task, message)] = failures(result)["sm01"]
            assert "no opensm of ours" in task
            assert "the subnet manager is ufm" in message, message
            assert "opensm.service is active here" in message, message
            assert "systemctl disable --now opensm.service" in message
            assert sm.run("systemctl is-active opensm.service").stdout.strip() == "active"  # not ours: not touched
