"""nic_qos on Broadcom Thor2 (nic_qos_tool bnxt) without a node: the role's script against a fake bnxt_re configfs,
rdma_cm configfs and a stub bnxtqos. The configfs names and their hex form are the bnxt_re driver's (configfs.c:
stores parse "%x", shows print "%#x"); see fabric/catalog/data/nics/README.md."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from fabric.inventory import onprem_host_vars
from tests.conftest import ROOT
from tests.render.conftest import plan_of
from tests.roles.role_logic import load, render, role_vars, task
from tests.roles.stubs import role_templates, write_tree

BNXTQOS = """#!/bin/sh
# stub bnxtqos: logs argv
echo "bnxtqos $*" >> "$STUB_DIR/calls.log"
"""


def thor2(tmp_path: Path, ports: list[str]) -> tuple[Path, dict[str, str]]:
    """Ports on bnxt_re devices; the configfs directories the driver makes when the device's group is created."""
    files: dict[str, tuple[str, int]] = {"stubs/bnxtqos": (BNXTQOS, 0o755)}
    for n, port in enumerate(ports):
        files[f"sys/class/net/{port}/device/infiniband/bnxt_re{n}/.keep"] = ("", 0o644)
        for name in ("roce_dscp", "roce_prio", "cnp_dscp", "cnp_prio", "ecn_enable", "apply"):
            files[f"configfs/bnxt_re/bnxt_re{n}/ports/1/cc/{name}"] = (
                {"roce_dscp": "0x1a", "roce_prio": "0x3", "cnp_dscp": "0x30"}.get(name, "0x7" if name == "cnp_prio" else "0"),
                0o644,
            )
        files[f"configfs/rdma_cm/bnxt_re{n}/ports/1/default_roce_tos"] = ("0\n", 0o644)
    write_tree(tmp_path, files)
    templates = role_templates(ROOT / "roles" / "nic_qos")
    values = {
        "ansible_managed": "managed by gpufabric",
        "gpufabric_cluster": "t",
        "nic_qos_ports": ports,
        "nic_qos_dscp": 26,
        "nic_qos_priority": 3,
        "nic_qos_pfc_priorities": [3],
        "nic_qos_cnp_dscp": 48,
        "nic_qos_cnp_priority": 6,
        "nic_qos_tos": 106,
        "nic_qos_cable_length_m": 5,
        "nic_qos_sysfs": str(tmp_path / "sys"),
        "nic_qos_mlnx_qos": "mlnx_qos",
        "nic_qos_cma_roce_tos": "cma_roce_tos",
        "nic_qos_tool": "bnxt",
        "nic_qos_configfs": str(tmp_path / "configfs"),
        "nic_qos_bnxtqos": str(tmp_path / "stubs" / "bnxtqos"),
    }
    env_file = tmp_path / "nic-qos.env"
    env_file.write_text(templates.get_template("nic-qos.env.j2").render(values))
    script = tmp_path / "gpufabric-nic-qos"
    script.write_text(templates.get_template("gpufabric-nic-qos.j2").render(values).replace("/etc/gpufabric/nic-qos.env", str(env_file)))
    script.chmod(stat.S_IRWXU)
    return script, {**os.environ, "STUB_DIR": str(tmp_path / "stubs")}


def run(script: Path, action: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(script), action], capture_output=True, text=True, timeout=30, check=False, env=env)


def test_thor2_out_of_the_box_cnp_priority_7_is_found_then_set_to_the_contracts_6(tmp_path: Path) -> None:
    script, env = thor2(tmp_path, ["enp65s0f0np0", "enp66s0f0np0"])
    before = run(script, "verify", env)
    assert before.returncode == 1
    assert "enp65s0f0np0: bnxt_re cnp_prio (bnxt_re0) expected 0x6, actual 0x7" in before.stdout.splitlines()
    assert "enp66s0f0np0: default_roce_tos (bnxt_re1) expected 106, actual 0" in before.stdout.splitlines()
    assert run(script, "apply", env).returncode == 0
    after = run(script, "verify", env)
    assert (after.returncode, after.stdout) == (0, "")
    cc = tmp_path / "configfs" / "bnxt_re" / "bnxt_re0" / "ports" / "1" / "cc"
    assert [(cc / n).read_text() for n in ("roce_dscp", "roce_prio", "cnp_dscp", "cnp_prio", "ecn_enable", "apply")] == [
        "0x1a",
        "0x3",
        "0x30",
        "0x6",
        "0x1",
        "0x1",
    ]
    calls = (tmp_path / "stubs" / "calls.log").read_text().splitlines()
    assert calls[:3] == [
        "bnxtqos -dev=enp65s0f0np0 set_pfc enabled=3",
        "bnxtqos -dev=enp65s0f0np0 set_apptlv app=3,5,26",
        "bnxtqos -dev=enp65s0f0np0 set_apptlv app=6,5,48",
    ]


def test_a_port_without_an_rdma_device_fails_apply_and_verify_naming_it(tmp_path: Path) -> None:
    script, env = thor2(tmp_path, ["enp65s0f0np0"])
    (tmp_path / "sys" / "class" / "net" / "enp65s0f0np0" / "device" / "infiniband" / "bnxt_re0" / ".keep").unlink()
    (tmp_path / "sys" / "class" / "net" / "enp65s0f0np0" / "device" / "infiniband" / "bnxt_re0").rmdir()
    applied = run(script, "apply", env)
    assert applied.returncode == 1
    assert "enp65s0f0np0: no RDMA device" in applied.stderr
    assert run(script, "verify", env).stdout == "enp65s0f0np0: rdma device expected present, actual <missing>\n"


def test_each_node_takes_its_nics_path_from_the_inventory() -> None:
    """nic_qos_tool from gpufabric_roce_nic (ConnectX without it); site.yml runs nic_firmware on ConnectX nodes only."""
    hosts = onprem_host_vars(plan_of("render/mixed-nic"))
    defaults = role_vars("nic_qos")
    site = load(ROOT / "playbooks" / "site.yml")
    firmware = next(r for r in site[0]["roles"] if r["role"] == "nic_firmware")
    seen = {}
    for name in ("nv01", "amd01"):
        variables = {**hosts[name], **defaults}
        seen[name] = (
            render(defaults["nic_qos_tool"], variables),
            render("{{ " + firmware["when"] + " }}", variables),
            hosts[name]["gpufabric_rdma_stack"],
        )
    assert seen == {"nv01": ("mlnx", True, "doca"), "amd01": ("bnxt", False, "inbox")}
    legacy = {k: v for k, v in hosts["nv01"].items() if k != "gpufabric_roce_nic"}  # a profile that names no NIC model
    assert render(defaults["nic_qos_tool"], {**legacy, **defaults}) == "mlnx"
    assert render(role_vars("nic_qos")["_nic_qos_driver"], {**hosts["amd01"], **defaults}) == "bnxt_en"


def test_the_preflight_looks_for_each_paths_tools() -> None:
    check = task("nic_qos", "main.yml", "Preflight | the NIC tools exist")["ansible.builtin.shell"]
    base = {**role_vars("nic_qos"), "gpufabric_roce": {}, "nic_qos_configfs": "/sys/kernel/config"}
    assert render(check, {**base, "nic_qos_tool": "bnxt"}) == "command -v bnxtqos && test -d /sys/kernel/config/bnxt_re"
    assert render(check, {**base, "nic_qos_tool": "mlnx"}) == "command -v mlnx_qos && command -v cma_roce_tos"
