"""The node roles without a node: the inventory plugin, syntax, ansible-lint, and the NIC QoS script against stub
hardware (a fake sysfs tree and stub mlnx_qos / cma_roce_tos that keep state and print the real tools' formats)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tests.inventory.ansible_view import ansible_view
from tests.roles.scenario import ansible
from tests.roles.stubs import fake_nic, role_templates, write_tree


@pytest.mark.parametrize("site", ["onprem-roce", "onprem-ib"])
def test_the_definition_is_the_inventory(site: str) -> None:
    done = ansible("ansible-inventory", "-i", f"inventories/{site}/cluster.yaml", "--list")
    assert done.returncode == 0, done.stderr
    inv = json.loads(done.stdout)
    hostvars = ansible_view(f"inventories/{site}/cluster.yaml")  # as plays see them: templated (gpufabric_interfaces is a template)
    assert {"gpu_nodes", "storage_nodes", "leaf", "spine", "fabric"} <= set(inv)
    gpu = hostvars[inv["gpu_nodes"]["hosts"][0]]
    planes = {i["plane"] for i in gpu["gpufabric_interfaces"]}
    assert {"compute", "storage", "inband"} <= planes
    if site == "onprem-roce":
        assert len(gpu["gpufabric_roce_ports"]) == 8
        assert gpu["gpufabric_roce"] == {"dscp": 26, "priority": 3, "pfc_priorities": [3], "tos": 106, "cnp_dscp": 48, "cnp_priority": 6}
        assert gpu["gpufabric_rdma_stack"] == "doca"  # RoCE ports: the NIC half of the contract needs DOCA's tools
    else:
        assert [hostvars[h]["gpufabric_sm_priority"] for h in inv["sm_nodes"]["hosts"]] == [15, 14]
        assert gpu["gpufabric_infiniband"]["partitions"][0]["pkey"] == "0x0002"
        assert gpu["gpufabric_rdma_stack"] == "inbox"
    graph = ansible("ansible-inventory", "-i", f"inventories/{site}/cluster.yaml", "--graph")
    assert "@gpu_nodes:" in graph.stdout


def test_an_invalid_definition_fails_the_inventory_with_the_report(tmp_path: Path) -> None:
    bad = tmp_path / "cluster.yaml"
    text = (ROOT / "inventories" / "onprem-roce" / "cluster.yaml").read_text(encoding="utf-8")
    bad.write_text(text.replace("pfc_priorities: [3]", "pfc_priorities: [4]") if "pfc_priorities" in text else text + "roce: {pfc_priorities: [4]}\n")
    done = ansible("ansible-inventory", "-i", str(bad), "--list")
    assert done.returncode != 0
    assert "pfc_priorities" in done.stderr


@pytest.mark.parametrize("site", ["onprem-roce", "onprem-ib"])
def test_playbook_syntax(site: str) -> None:
    done = ansible("ansible-playbook", "-i", f"inventories/{site}/cluster.yaml", "playbooks/site.yml", "playbooks/check.yml", "--syntax-check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ansible_lint_production_profile_offline() -> None:
    done = ansible("ansible-lint", "--nocolor", "roles", "playbooks")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def nic(tmp_path: Path, ports: list[str]) -> tuple[Path, dict[str, str]]:
    """A fake sysfs with mlx5 ports, the stubs, and the role's script and contract rendered from its templates."""
    sysfs, stubs = tmp_path / "sys", tmp_path / "stubs"
    write_tree(tmp_path, fake_nic(ports))
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
        "nic_qos_sysfs": str(sysfs),
        "nic_qos_mlnx_qos": str(stubs / "mlnx_qos"),
        "nic_qos_cma_roce_tos": str(stubs / "cma_roce_tos"),
        "nic_qos_tool": "mlnx",
        "nic_qos_configfs": str(tmp_path / "configfs"),
        "nic_qos_bnxtqos": str(stubs / "bnxtqos"),
    }
    env_file = tmp_path / "nic-qos.env"
    env_file.write_text(templates.get_template("nic-qos.env.j2").render(values))
    script = tmp_path / "gpufabric-nic-qos"
    script.write_text(templates.get_template("gpufabric-nic-qos.j2").render(values).replace("/etc/gpufabric/nic-qos.env", str(env_file)))
    script.chmod(stat.S_IRWXU)
    return script, {**os.environ, "STUB_DIR": str(stubs)}


def run(script: Path, action: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(script), action], capture_output=True, text=True, timeout=30, check=False, env=env)


def test_nic_qos_applies_the_contract_and_reads_every_value_back(tmp_path: Path) -> None:
    script, env = nic(tmp_path, ["enp24s0np0", "enp64s0np0"])
    before = run(script, "verify", env)
    assert before.returncode == 1
    assert "enp24s0np0: trust expected dscp, actual pcp" in before.stdout
    assert run(script, "apply", env).returncode == 0
    after = run(script, "verify", env)
    assert (after.returncode, after.stdout) == (0, "")
    calls = (tmp_path / "stubs" / "calls.log").read_text().splitlines()
    assert "mlnx_qos -i enp24s0np0 --pfc 0,0,0,1,0,0,0,0" in calls
    assert "mlnx_qos -i enp64s0np0 --dscp2prio set,26,3" in calls
    assert "cma_roce_tos -d mlx5_1 -t 106" in calls
    assert (tmp_path / "sys" / "class" / "net" / "enp24s0np0" / "ecn" / "roce_np" / "cnp_dscp").read_text().strip() == "48"


def test_nic_qos_names_the_port_setting_expected_and_actual_on_a_mismatch(tmp_path: Path) -> None:
    script, env = nic(tmp_path, ["enp24s0np0"])
    assert run(script, "apply", env).returncode == 0
    (tmp_path / "sys" / "class" / "net" / "enp24s0np0" / "ecn" / "roce_np" / "enable" / "3").write_text("0\n")
    subprocess.run([str(tmp_path / "stubs" / "mlnx_qos"), "-i", "enp24s0np0", "--pfc", "0,0,0,0,1,0,0,0"], env=env, check=True, capture_output=True)
    drifted = run(script, "verify", env)
    assert drifted.returncode == 1
    assert drifted.stdout.splitlines() == [
        "enp24s0np0: pfc expected 0,0,0,1,0,0,0,0, actual 0,0,0,0,1,0,0,0",
        "enp24s0np0: ecn roce_np priority 3 expected 1, actual 0",
    ]


def test_a_cloud_stacks_inventory_output_drives_the_same_playbooks(tmp_path: Path) -> None:
    """The GCP stack's ``ansible_inventory`` output (Pulumi mocks), saved as .yml, is read by Ansible with the same
    groups the playbooks target."""
    from tests.cloud.conftest import example_plan
    from tests.cloud.test_gcp import build

    captured: list[str] = []
    build(example_plan("gcp-a3ultra"), captured)
    (text,) = captured
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(text)
    graph = ansible("ansible-inventory", "-i", str(inventory), "--graph", "gpu_nodes")
    assert graph.returncode == 0, graph.stderr
    assert [line.strip(" |-") for line in graph.stdout.splitlines()[1:]] == ["a3u-01", "a3u-02", "a3u-03", "a3u-04"]
    hosts = ansible("ansible-playbook", "-i", str(inventory), "playbooks/check.yml", "--list-hosts")
    assert hosts.returncode == 0, hosts.stderr
    assert "hosts (4):" in hosts.stdout


@pytest.mark.parametrize("role", sorted(p.name for p in (ROOT / "roles").iterdir()))
def test_every_role_variable_is_documented_in_its_argument_spec(role: str) -> None:
    """defaults/ is the role's API: every variable there is in meta/argument_specs.yml and nothing else is."""
    defaults = yaml.safe_load((ROOT / "roles" / role / "defaults" / "main.yml").read_text()) or {}
    spec = yaml.safe_load((ROOT / "roles" / role / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    assert sorted(defaults) == sorted(spec)
    assert all(option.get("description") for option in spec.values())


# The supported-OS lists the preflights print, as Galaxy platforms (meta/main.yml): Debian/Ubuntu by codename, EL by major.
_PLATFORM = {
    "Debian 12": ("Debian", "bookworm"),
    "Ubuntu 22.04": ("Ubuntu", "jammy"),
    "Ubuntu 24.04": ("Ubuntu", "noble"),
    "RHEL/Rocky 9": ("EL", "9"),
}


@pytest.mark.parametrize("role", ["rdma_stack", "gpu_driver", "opensm", "network_planes"])
def test_meta_platforms_are_the_oses_the_preflight_accepts(role: str) -> None:
    supported = yaml.safe_load((ROOT / "roles" / role / "vars" / "main.yml").read_text(encoding="utf-8"))[f"_{role}_supported"]
    wanted = sorted(_PLATFORM[next(k for k in _PLATFORM if os_name.startswith(k))] for os_name in supported)
    meta = yaml.safe_load((ROOT / "roles" / role / "meta" / "main.yml").read_text(encoding="utf-8"))
    claimed = sorted((p["name"], str(v)) for p in meta["galaxy_info"]["platforms"] for v in p["versions"])
    assert claimed == wanted
