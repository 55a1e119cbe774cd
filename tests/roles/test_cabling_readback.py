"""fabric_check's cabling read-back (issue 33): each node's neighbours read on the node, saved on the controller as
``<device>.<form>``, then ``python -m fabric verify FILE --cabling --from DIR`` names the faults.

The role's logic runs without a node (its filters and its vars rendered by Ansible's templar); the container test runs
the role on a booted gpu001 whose ``lldpcli`` is a stub: the nspawn containers here have no link to a switch running
LLDP, so the stub prints a reply built from a real one (``tests/data/transcripts/lldp/leaf01.lldpctl.json``, lldpd
1.0.16's ``-f json`` shape) with the plan's names in it and rails 1 and 2 swapped, as a miswired node's lldpd would.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from plugins.filter.gpufabric_cabling import cabling_files, cabling_problems, ib_reader, lldp_ports
from tests.conftest import ROOT
from tests.roles.role_logic import render, role_vars
from tests.roles.scenario import converge, explain, failures, host_vars, role_playbook, site

RECORDED = ROOT / "tests" / "data" / "transcripts" / "lldp" / "leaf01.lldpctl.json"
GPU001 = host_vars(site("onprem-roce"), "gpu001")
RAILS = {i["index"] + 1: i for i in GPU001["gpufabric_interfaces"] if i["plane"] == "compute"}


def lldpctl_reply(swap: tuple[int, int] | None = None) -> str:
    """gpu001's ``lldpcli -f json show neighbors``: the recorded reply's first entry as the shape of each, one per rail,
    the neighbour the rail's leaf (``leaf-su01-r<rail>``) on its first port as SONiC's lldpd advertises it (port id
    subtype local, the alias: sonic-buildimage lldpmgrd). ``swap``: those two rails' cables exchanged."""
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    [shape] = recorded["lldp"]["interface"][0].values()
    [chassis] = shape["chassis"].values()
    leaf_of = {rail: rail for rail in RAILS}
    if swap:
        leaf_of[swap[0]], leaf_of[swap[1]] = swap[1], swap[0]
    entries = []
    for rail, iface in sorted(RAILS.items()):
        body = copy.deepcopy(shape)
        body["chassis"] = {f"leaf-su01-r{leaf_of[rail]}": copy.deepcopy(chassis)}
        body["port"] = {"id": {"type": "local", "value": "etp1a"}, "descr": "Ethernet0", "ttl": "120"}
        entries.append({iface["name"]: body})
    return json.dumps({"lldp": {"interface": entries}}, indent=2)


# ---- the filters ----


def test_the_ports_read_are_the_nodes_ethernet_ports_of_the_cabling_planes() -> None:
    assert lldp_ports(GPU001["gpufabric_interfaces"], ["compute"]) == sorted(i["name"] for i in RAILS.values())
    ib = host_vars(site("onprem-ib"), "dgx01")
    assert lldp_ports(ib["gpufabric_interfaces"], ["compute"]) == []  # InfiniBand rails: the subnet's read covers them


def test_one_host_with_infiniband_ports_reads_the_subnet() -> None:
    hostvars = {"gpu002": {"gpufabric_ib_ports": [{"hca": "mlx5_0"}]}, "gpu001": {"gpufabric_ib_ports": [{"hca": "mlx5_0"}]}, "a": {}}
    assert ib_reader(hostvars, ["gpu002", "a", "gpu001"]) == "gpu001"
    assert ib_reader({"a": {}}, ["a"]) == ""


def test_a_clean_reply_has_no_problem_and_is_saved_under_the_name_verify_reads() -> None:
    reply = {"rc": 0, "stdout": lldpctl_reply(), "stderr": ""}
    assert cabling_problems(reply, "lldpctl.json", lldp_ports(GPU001["gpufabric_interfaces"], ["compute"])) == []
    files = cabling_files(reply, {"skipped": True}, "gpu001", "ibnetdiscover.txt")
    assert files == {"saved": [{"file": "gpu001.lldpctl.json", "stdout": reply["stdout"]}], "failed": []}


@pytest.mark.parametrize(
    ("result", "form", "expected"),
    [
        (
            {"rc": 127, "stdout": "", "stderr": "timeout: failed to run command 'lldpcli': No such file or directory"},
            "lldpctl.json",
            "cabling read-back: lldpcli not found: install the lldpd package and run its daemon (systemctl enable --now lldpd) "
            "(docs/nodes.md, cabling read-back), or set fabric_check_cabling: false to skip the cabling read-back",
        ),
        (
            {"rc": 1, "stdout": "", "stderr": "[WARN/control] unable to connect to socket /run/lldpd.socket: No such file or directory"},
            "lldpctl.json",
            "cabling read-back: lldpcli failed ([WARN/control] unable to connect to socket /run/lldpd.socket: No such file or directory): "
            "is lldpd running? (systemctl enable --now lldpd) or set fabric_check_cabling: false to skip the cabling read-back",
        ),
        (
            {"rc": 127, "stdout": "", "stderr": "timeout: failed to run command 'ibnetdiscover'"},
            "ibnetdiscover.txt",
            "cabling read-back: ibnetdiscover not found: install the infiniband-diags package (docs/nodes.md, cabling read-back), "
            "or set fabric_check_cabling: false to skip the cabling read-back",
        ),
        (
            {"rc": 124, "stdout": "", "stderr": ""},
            "iblinkinfo.txt",
            "cabling read-back: iblinkinfo did not answer within 30 s (fabric_check_cabling_timeout)",
        ),
        (
            {"rc": 0, "stdout": "<html>", "stderr": ""},
            "lldpctl.json",
            "cabling read-back: lldpcli's reply is not lldpcli's JSON (Expecting value: line 1 column 1 (char 0))",
        ),
    ],
    ids=["no-lldpd-package", "lldpd-not-running", "no-infiniband-diags", "timed-out", "not-json"],
)
def test_a_read_that_fails_is_named_with_the_package_or_daemon_and_the_way_out(result: dict[str, Any], form: str, expected: str) -> None:
    assert cabling_problems(result, form, [], 30) == [expected]


def test_a_cabled_port_without_a_neighbour_is_named() -> None:
    reply = json.loads(lldpctl_reply())
    gone = RAILS[3]["name"]
    reply["lldp"]["interface"] = [e for e in reply["lldp"]["interface"] if gone not in e]
    [problem] = cabling_problems({"rc": 0, "stdout": json.dumps(reply)}, "lldpctl.json", [i["name"] for i in RAILS.values()])
    assert problem.startswith(f"cabling read-back: {gone}: no LLDP neighbour (cable unplugged, LLDP off on the switch port")
    recorded = (ROOT / "tests" / "data" / "transcripts" / "lldp" / "node1.lldpctl.json").read_text(encoding="utf-8")  # json0, as recorded
    assert cabling_problems({"rc": 0, "stdout": recorded}, "lldpctl.json", ["eth1", "eth3"]) == []
    assert cabling_problems({"rc": 0, "stdout": recorded}, "lldpctl.json", ["eth1", "eth2"]) != []


def test_a_failed_read_removes_the_earlier_reply_and_a_skipped_one_touches_nothing() -> None:
    failed = cabling_files({"rc": 1, "stdout": ""}, {"rc": 0, "stdout": "# Topology file"}, "gpu001", "ibnetdiscover.txt")
    assert failed == {"saved": [{"file": "gpu001-subnet.ibnetdiscover.txt", "stdout": "# Topology file"}], "failed": ["gpu001.lldpctl.json"]}
    assert cabling_files({"skipped": True}, {}, "gpu001", "ibnetdiscover.txt") == {"saved": [], "failed": []}


# ---- the role's own expressions (defaults and vars rendered by Ansible) ----


def role_view(**overrides: Any) -> dict[str, Any]:
    """fabric_check's variables as gpu001 of the RoCE site sees them, with ``overrides`` (registered results, settings)."""
    found = role_vars("fabric_check")
    found |= {k: v for k, v in GPU001.items() if k.startswith("gpufabric_")}
    found |= {"inventory_hostname": "gpu001", "inventory_dir": "/site", "ansible_play_hosts_all": ["gpu001"], "hostvars": {"gpu001": GPU001}}
    return found | overrides


def test_the_role_reads_every_rail_and_saves_the_reply_in_the_inventorys_directory() -> None:
    view = role_view(__fabric_check_lldp={"rc": 0, "stdout": lldpctl_reply(), "stderr": ""})
    assert render("{{ fabric_check_lldp_ports }}", view) == sorted(i["name"] for i in RAILS.values())
    assert render("{{ fabric_check_ib_reader }}", view) == ""
    assert render("{{ fabric_check_cabling_dir }}", view) == "/site/cabling"
    assert render("{{ fabric_check_cabling_problems }}", view) == []
    assert [f["file"] for f in render("{{ fabric_check_cabling_saved }}", view)] == ["gpu001.lldpctl.json"]


def test_the_role_fails_without_lldpd_unless_the_read_back_is_off() -> None:
    missing = {"rc": 127, "stdout": "", "stderr": "timeout: failed to run command 'lldpcli'"}
    [problem] = render("{{ fabric_check_cabling_problems }}", role_view(__fabric_check_lldp=missing))
    assert "install the lldpd package" in problem
    assert render("{{ fabric_check_cabling_problems }}", role_view(__fabric_check_lldp=missing, fabric_check_cabling=False)) == []
    assert render("{{ fabric_check_lldp_ports }}", role_view(fabric_check_cabling=False)) == []


def test_an_infiniband_node_reads_the_subnet_and_no_lldp() -> None:
    ib = host_vars(site("onprem-ib"), "dgx01")
    view = role_view(**{k: v for k, v in ib.items() if k.startswith("gpufabric_")}, hostvars={"gpu001": ib})
    view["fabric_check_ib_ports"] = ib["gpufabric_ib_ports"]
    assert render("{{ fabric_check_lldp_ports }}", view) == []
    assert render("{{ fabric_check_ib_reader }}", view) == "gpu001"
    assert render("{{ fabric_check_cabling_ib_form }}", view | {"fabric_check_cabling_ib_command": "/usr/sbin/iblinkinfo"}) == "iblinkinfo.txt"
    missing = {"rc": 127, "stdout": "", "stderr": "timeout: failed to run command 'ibnetdiscover'"}
    [problem] = render("{{ fabric_check_cabling_problems }}", view | {"__fabric_check_ib_links": missing})
    assert "install the infiniband-diags package" in problem


# ---- collected → verify --cabling --from DIR ----


def verify(replies: Path) -> subprocess.CompletedProcess[str]:
    argv = [
        sys.executable,
        "-m",
        "fabric",
        "verify",
        str(site("onprem-roce")),
        "--cabling",
        "--from",
        str(replies),
        "--state",
        str(replies / ".none"),
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, cwd=ROOT)


SWAPPED = "swapped: gpu001: mlx5_0 and mlx5_3 are swapped (rail 1 ↔ rail 2)"


def test_saved_replies_go_through_verify_and_the_swapped_rails_are_named(tmp_path: Path) -> None:
    """The files exactly as the role's copy task writes them (cabling_files), read by verify --cabling --from."""
    for name, swap in (("good", None), ("bad", (1, 2))):
        (tmp_path / name).mkdir()
        for saved in cabling_files({"rc": 0, "stdout": lldpctl_reply(swap)}, {"skipped": True}, "gpu001", "ibnetdiscover.txt")["saved"]:
            (tmp_path / name / saved["file"]).write_text(saved["stdout"], encoding="utf-8")
    good = verify(tmp_path / "good")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "cabling: 8/8 checked cables as planned" in good.stdout
    bad = verify(tmp_path / "bad")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert SWAPPED in bad.stdout


# ---- the role on a booted node ----

STUB = "/srv/lldp"
LLDPCLI_STUB = f"""#!/bin/sh
# test stub of lldpcli: records its arguments, prints the reply a miswired node's lldpd gives
echo "$@" >> {STUB}/calls.log
cat {STUB}/reply.json
"""


@pytest.mark.container
@pytest.mark.skipif(os.geteuid() != 0, reason="containers need root (./dev test runs as root in CI)")
def test_fabric_check_collects_the_nodes_neighbours_and_verify_names_the_swapped_rails(tmp_path: Path) -> None:
    from tests.roles.containers import booted  # the container tier only

    replies = tmp_path / "replies"
    checks = {
        "fabric_check_strict": True,
        "fabric_check_ping_peers": 0,
        "fabric_check_gid_planes": [],
        "fabric_check_host_tuning": False,
        "fabric_check_cabling_dir": str(replies),
        "fabric_check_lldpcli": f"{STUB}/lldpcli",
    }
    files = {f"{STUB}/lldpcli": (LLDPCLI_STUB, 0o755), f"{STUB}/reply.json": (lldpctl_reply((1, 2)), 0o644)}
    play = role_playbook(tmp_path, "fabric_check")
    with booted("gpu001", tmp_path, private_network=True, files=files) as node:
        result, events = converge(site("onprem-roce"), [node], play, tmp_path, extravars=checks, check=True)
        assert result.ok, explain(result)
        assert node.read(f"{STUB}/calls.log").splitlines() == ["-f json show neighbors"]  # read in check mode too
        assert (replies / "gpu001.lldpctl.json").read_text(encoding="utf-8") == lldpctl_reply((1, 2))
        [summary] = events.results("Verify | summary")
        assert summary["msg"]["cabling_saved"] == [str(replies / "gpu001.lldpctl.json")]
        done = verify(replies)
        assert done.returncode == 1, done.stdout + done.stderr
        assert SWAPPED in done.stdout

        # no lldpd on the node: the strict check fails naming the package, and yesterday's reply is not left behind
        gone, _ = converge(site("onprem-roce"), [node], play, tmp_path, extravars={**checks, "fabric_check_lldpcli": f"{STUB}/absent"})
        [(_, message)] = failures(gone)["gpu001"]
        assert "cabling read-back: /srv/lldp/absent not found" not in message  # named by the program, not the path
        assert "lldpcli not found: install the lldpd package" in message
        assert not (replies / "gpu001.lldpctl.json").exists()
        off, _ = converge(
            site("onprem-roce"), [node], play, tmp_path, extravars={**checks, "fabric_check_lldpcli": f"{STUB}/absent", "fabric_check_cabling": False}
        )
        assert off.ok, explain(off)
